// Tables of tracked links: the short link of each URL of a post (one code per post and URL, so
// clicks are counted per post) and the clicks of each link per UTC day (a counter, no personal data).
import type { TableBuilders } from "./builders.ts";
import type { AccountTables } from "./accounts.ts";
import type { PostTables } from "./posts.ts";

/** A workspace's link tracking as stored: on or off, and the UTM parameters its links add. */
export interface LinkTrackingSettings {
  enabled: boolean;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
}

/** The tracked-link tables. */
export function defineLinkTables(
  b: TableBuilders,
  { workspaces, posts }: Pick<AccountTables, "workspaces"> & Pick<PostTables, "posts">,
) {
  /** A URL of a post as it is published: `<HERALD_BASE_URL>/l/<code>` redirects to `target`. */
  const trackedLinks = b.table(
    "tracked_links",
    {
      id: b.text("id").primaryKey(),
      /** The unguessable short code (base62). */
      code: b.text("code").notNull(),
      workspaceId: b
        .text("workspace_id")
        .notNull()
        .references(() => workspaces.id),
      postId: b
        .text("post_id")
        .notNull()
        .references(() => posts.id, { onDelete: "cascade" }),
      /** The URL as the post's body wrote it. */
      url: b.text("url").notNull(),
      /** Where the link redirects: `url` with the workspace's UTM presets of the time it was made. */
      target: b.text("target").notNull(),
      createdAt: b.integer("created_at").notNull(),
    },
    (t) => [
      b.uniqueIndex("tracked_links_code").on(t.code),
      b.uniqueIndex("tracked_links_post_url").on(t.postId, t.url),
    ],
  );

  /** Clicks of a link on one UTC day (`YYYY-MM-DD`), incremented in place. */
  const trackedLinkClicks = b.table(
    "tracked_link_clicks",
    {
      linkId: b
        .text("link_id")
        .notNull()
        .references(() => trackedLinks.id, { onDelete: "cascade" }),
      day: b.text("day").notNull(),
      clicks: b.integer("clicks").notNull(),
    },
    (t) => [b.primaryKey({ columns: [t.linkId, t.day] })],
  );
  return { trackedLinks, trackedLinkClicks };
}
