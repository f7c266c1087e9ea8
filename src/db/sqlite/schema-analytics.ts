// Tables of the analytics capability: the current numbers of each published post (claimed by the
// refresh job like every other job), the history of every fetch, and on-demand refresh requests.
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { posts } from "./schema.ts";

/** One row per published post: its latest good numbers, its refresh schedule and its last failure. */
export const postAnalytics = sqliteTable(
  "post_analytics",
  {
    postId: text("post_id")
      .primaryKey()
      .references(() => posts.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id").notNull(),
    groupKey: text("group_key").notNull(),
    channel: text("channel").notNull(),
    destinationId: text("destination_id"),
    publishedAt: integer("published_at").notNull(),
    /** `pending` (never fetched), `fresh`, `stale` (last refresh failed) or `unsupported`. */
    state: text("state").notNull(),
    /** The seven metrics from the last successful fetch (0 where the network offers none). */
    metrics: text("metrics", { mode: "json" }).$type<Record<string, number>>().notNull(),
    /** The metrics the network reported in that fetch (what coverage counts as fetched). */
    offered: text("offered", { mode: "json" }).$type<string[]>().notNull(),
    fetchedAt: integer("fetched_at"),
    providerAsOf: integer("provider_as_of"),
    nextRefreshAt: integer("next_refresh_at"),
    lastError: text("last_error", { mode: "json" }).$type<Record<string, unknown> | null>(),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: integer("lease_expires_at"),
  },
  (t) => [
    index("post_analytics_due").on(t.nextRefreshAt),
    index("post_analytics_group").on(t.workspaceId, t.groupKey),
    index("post_analytics_published").on(t.workspaceId, t.publishedAt),
  ],
);

/** Every successful fetch of a post's numbers (history for the series). */
export const analyticsSnapshots = sqliteTable(
  "analytics_snapshots",
  {
    id: text("id").primaryKey(),
    postId: text("post_id")
      .notNull()
      .references(() => posts.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id").notNull(),
    fetchedAt: integer("fetched_at").notNull(),
    providerAsOf: integer("provider_as_of"),
    metrics: text("metrics", { mode: "json" }).$type<Record<string, number>>().notNull(),
    offered: text("offered", { mode: "json" }).$type<string[]>().notNull(),
  },
  (t) => [index("analytics_snapshots_post").on(t.postId, t.fetchedAt)],
);

/** On-demand refreshes asked for, counted per workspace for the rate limit. */
export const analyticsRefreshes = sqliteTable(
  "analytics_refreshes",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    groupKey: text("group_key").notNull(),
    requestedAt: integer("requested_at").notNull(),
  },
  (t) => [index("analytics_refreshes_workspace").on(t.workspaceId, t.requestedAt)],
);
