// Tables of the analytics capability: the current numbers of each published post (claimed by the
// refresh job like every other job), the history of every fetch, and on-demand refresh requests.
import type { TableBuilders } from "./builders.ts";
import type { PostTables } from "./posts.ts";

/** The analytics tables. */
export function defineAnalyticsTables(b: TableBuilders, { posts }: Pick<PostTables, "posts">) {
  /** One row per published post: its latest good numbers, its refresh schedule and its last failure. */
  const postAnalytics = b.table(
    "post_analytics",
    {
      postId: b
        .text("post_id")
        .primaryKey()
        .references(() => posts.id, { onDelete: "cascade" }),
      workspaceId: b.text("workspace_id").notNull(),
      groupKey: b.text("group_key").notNull(),
      channel: b.text("channel").notNull(),
      destinationId: b.text("destination_id"),
      publishedAt: b.integer("published_at").notNull(),
      /** `pending` (never fetched), `fresh`, `stale` (last refresh failed) or `unsupported`. */
      state: b.text("state").notNull(),
      /** The seven metrics from the last successful fetch (0 where the network offers none). */
      metrics: b.json("metrics").$type<Record<string, number>>().notNull(),
      /** The metrics the network reported in that fetch (what coverage counts as fetched). */
      offered: b.json("offered").$type<string[]>().notNull(),
      fetchedAt: b.integer("fetched_at"),
      providerAsOf: b.integer("provider_as_of"),
      nextRefreshAt: b.integer("next_refresh_at"),
      lastError: b.json("last_error").$type<Record<string, unknown> | null>(),
      leaseOwner: b.text("lease_owner"),
      leaseExpiresAt: b.integer("lease_expires_at"),
    },
    (t) => [
      b.index("post_analytics_due").on(t.nextRefreshAt),
      b.index("post_analytics_group").on(t.workspaceId, t.groupKey),
      b.index("post_analytics_published").on(t.workspaceId, t.publishedAt),
    ],
  );

  /** Every successful fetch of a post's numbers (history for the series). */
  const analyticsSnapshots = b.table(
    "analytics_snapshots",
    {
      id: b.text("id").primaryKey(),
      postId: b
        .text("post_id")
        .notNull()
        .references(() => posts.id, { onDelete: "cascade" }),
      workspaceId: b.text("workspace_id").notNull(),
      fetchedAt: b.integer("fetched_at").notNull(),
      providerAsOf: b.integer("provider_as_of"),
      metrics: b.json("metrics").$type<Record<string, number>>().notNull(),
      offered: b.json("offered").$type<string[]>().notNull(),
    },
    (t) => [
      b.index("analytics_snapshots_post").on(t.postId, t.fetchedAt),
      // Retention takes the oldest snapshots and requests by these (src/jobs/retention.ts).
      b
        .index("analytics_snapshots_fetched")
        .on(t.fetchedAt),
    ],
  );

  /** On-demand refreshes asked for, counted per workspace for the rate limit. */
  const analyticsRefreshes = b.table(
    "analytics_refreshes",
    {
      id: b.text("id").primaryKey(),
      workspaceId: b.text("workspace_id").notNull(),
      groupKey: b.text("group_key").notNull(),
      requestedAt: b.integer("requested_at").notNull(),
    },
    (t) => [
      b.index("analytics_refreshes_workspace").on(t.workspaceId, t.requestedAt),
      b.index("analytics_refreshes_requested").on(t.requestedAt),
    ],
  );
  return { postAnalytics, analyticsSnapshots, analyticsRefreshes };
}
