// Tables of the analytics capability. PostgreSQL twin of src/db/sqlite/schema-analytics.ts.
import { bigint, index, pgTable, text } from "drizzle-orm/pg-core";
import { jsonText, posts } from "./schema.ts";

/** One row per published post: its latest good numbers, its refresh schedule and its last failure. */
export const postAnalytics = pgTable(
  "post_analytics",
  {
    postId: text("post_id")
      .primaryKey()
      .references(() => posts.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id").notNull(),
    groupKey: text("group_key").notNull(),
    channel: text("channel").notNull(),
    destinationId: text("destination_id"),
    publishedAt: bigint("published_at", { mode: "number" }).notNull(),
    /** `pending` (never fetched), `fresh`, `stale` (last refresh failed) or `unsupported`. */
    state: text("state").notNull(),
    /** The seven metrics from the last successful fetch (0 where the network offers none). */
    metrics: jsonText<Record<string, number>>("metrics").notNull(),
    /** The metrics the network reported in that fetch (what coverage counts as fetched). */
    offered: jsonText<string[]>("offered").notNull(),
    fetchedAt: bigint("fetched_at", { mode: "number" }),
    providerAsOf: bigint("provider_as_of", { mode: "number" }),
    nextRefreshAt: bigint("next_refresh_at", { mode: "number" }),
    lastError: jsonText<Record<string, unknown> | null>("last_error"),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: bigint("lease_expires_at", { mode: "number" }),
  },
  (t) => [
    index("post_analytics_due").on(t.nextRefreshAt),
    index("post_analytics_group").on(t.workspaceId, t.groupKey),
    index("post_analytics_published").on(t.workspaceId, t.publishedAt),
  ],
);

/** Every successful fetch of a post's numbers (history for the series). */
export const analyticsSnapshots = pgTable(
  "analytics_snapshots",
  {
    id: text("id").primaryKey(),
    postId: text("post_id")
      .notNull()
      .references(() => posts.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id").notNull(),
    fetchedAt: bigint("fetched_at", { mode: "number" }).notNull(),
    providerAsOf: bigint("provider_as_of", { mode: "number" }),
    metrics: jsonText<Record<string, number>>("metrics").notNull(),
    offered: jsonText<string[]>("offered").notNull(),
  },
  (t) => [index("analytics_snapshots_post").on(t.postId, t.fetchedAt)],
);

/** On-demand refreshes asked for, counted per workspace for the rate limit. */
export const analyticsRefreshes = pgTable(
  "analytics_refreshes",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    groupKey: text("group_key").notNull(),
    requestedAt: bigint("requested_at", { mode: "number" }).notNull(),
  },
  (t) => [index("analytics_refreshes_workspace").on(t.workspaceId, t.requestedAt)],
);
