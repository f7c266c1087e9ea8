// Database access of tracked links: the short links of posts and their clicks per day.
import { asc, eq, inArray, sql } from "drizzle-orm";
import { firstRow } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";

/** A stored short link. */
export type TrackedLinkRow = Tables["trackedLinks"]["$inferSelect"];

/** Stores links whose (post, URL) has none yet; a link already there is left as it is. */
export async function insertMissingLinks(tx: Db, rows: TrackedLinkRow[]): Promise<void> {
  if (rows.length === 0) return;
  const { trackedLinks } = tablesOf(tx);
  await tx.insert(trackedLinks).values(rows).onConflictDoNothing();
}

/** The short links of a post, in the order they were made. */
export async function listPostLinks(db: Db, postId: string): Promise<TrackedLinkRow[]> {
  const { trackedLinks } = tablesOf(db);
  return db
    .select()
    .from(trackedLinks)
    .where(eq(trackedLinks.postId, postId))
    .orderBy(asc(trackedLinks.createdAt), asc(trackedLinks.id));
}

/** The link of a short code. */
export async function findLinkByCode(db: Db, code: string): Promise<TrackedLinkRow | undefined> {
  const { trackedLinks } = tablesOf(db);
  return db.select().from(trackedLinks).where(eq(trackedLinks.code, code)).then(firstRow);
}

/**
 * Counts one click of a link on a day: one statement that inserts the day's row or adds 1 to it, so
 * concurrent clicks are all counted (the row is locked by the update; no read-modify-write).
 */
export async function addClick(tx: Db, linkId: string, day: string): Promise<void> {
  const { trackedLinkClicks } = tablesOf(tx);
  await tx
    .insert(trackedLinkClicks)
    .values({ linkId, day, clicks: 1 })
    .onConflictDoUpdate({
      target: [trackedLinkClicks.linkId, trackedLinkClicks.day],
      set: { clicks: sql`${trackedLinkClicks.clicks} + 1` },
    });
}

/** Clicks of each link (by link id) over all days. */
export async function clicksOfLinks(db: Db, linkIds: string[]): Promise<Map<string, number>> {
  if (linkIds.length === 0) return new Map();
  const { trackedLinkClicks } = tablesOf(db);
  const rows = await db
    .select({ linkId: trackedLinkClicks.linkId, clicks: sql<number>`sum(${trackedLinkClicks.clicks})` })
    .from(trackedLinkClicks)
    .where(inArray(trackedLinkClicks.linkId, linkIds))
    .groupBy(trackedLinkClicks.linkId);
  return new Map(rows.map((r) => [r.linkId, Number(r.clicks)]));
}

/** Clicks of each post's short links (posts with links only; by post id). */
export async function clicksOfPosts(db: Db, postIds: string[]): Promise<Map<string, number>> {
  if (postIds.length === 0) return new Map();
  const { trackedLinks, trackedLinkClicks } = tablesOf(db);
  const rows = await db
    .select({
      postId: trackedLinks.postId,
      clicks: sql<number>`coalesce(sum(${trackedLinkClicks.clicks}), 0)`,
    })
    .from(trackedLinks)
    .leftJoin(trackedLinkClicks, eq(trackedLinkClicks.linkId, trackedLinks.id))
    .where(inArray(trackedLinks.postId, postIds))
    .groupBy(trackedLinks.postId);
  return new Map(rows.map((r) => [r.postId, Number(r.clicks)]));
}
