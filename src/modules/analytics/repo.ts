// Database access of the analytics capability (post_analytics, analytics_snapshots, refresh requests).
import { and, asc, eq, gt, gte, inArray, isNotNull, isNull, lt, lte, ne, or, sql } from "drizzle-orm";
import type { BatchDelete } from "../../db/batch-delete.ts";
import { countAll, skipLocked } from "../../db/dialect.ts";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import type { PostRow } from "../posts/repo.ts";
import { FIRST_REFRESH_DELAY_MS, zeroMetrics } from "./cadence.ts";

/** A stored post_analytics row. */
export type PostAnalyticsRow = Tables["postAnalytics"]["$inferSelect"];
/** A stored snapshot. */
export type SnapshotRow = Tables["analyticsSnapshots"]["$inferSelect"];

/** The analytics row of a post that was just published (`pending`, first read soon); in its transaction. */
export async function insertPostAnalytics(tx: Db, post: PostRow, publishedAt: number): Promise<void> {
  const { postAnalytics } = tablesOf(tx);
  await tx
    .insert(postAnalytics)
    .values({
      postId: post.id,
      workspaceId: post.workspaceId,
      groupKey: post.groupKey,
      channel: post.channel,
      destinationId: post.destinationId,
      publishedAt,
      state: "pending",
      metrics: zeroMetrics(),
      offered: [],
      fetchedAt: null,
      providerAsOf: null,
      nextRefreshAt: publishedAt + FIRST_REFRESH_DELAY_MS,
      lastError: null,
      leaseOwner: null,
      leaseExpiresAt: null,
    })
    .onConflictDoNothing();
}

/**
 * Claims due rows for one refresh pass: due by `next_refresh_at`, not leased by a live run (on
 * PostgreSQL locked, skipping rows another process is taking), and leases them to `owner`.
 */
export async function claimDueAnalytics(
  tx: Db,
  input: { now: number; limit: number; owner: string; until: number },
): Promise<PostAnalyticsRow[]> {
  const { postAnalytics } = tablesOf(tx);
  const free = or(isNull(postAnalytics.leaseExpiresAt), lte(postAnalytics.leaseExpiresAt, input.now));
  const due = await skipLocked(
    tx,
    tx
      .select()
      .from(postAnalytics)
      .where(and(isNotNull(postAnalytics.nextRefreshAt), lte(postAnalytics.nextRefreshAt, input.now), free))
      .orderBy(asc(postAnalytics.nextRefreshAt))
      .limit(input.limit),
  );
  if (due.length === 0) return [];
  const ids = due.map((r) => r.postId);
  await tx
    .update(postAnalytics)
    .set({ leaseOwner: input.owner, leaseExpiresAt: input.until })
    .where(and(inArray(postAnalytics.postId, ids), free));
  return due.map((r) => ({ ...r, leaseOwner: input.owner, leaseExpiresAt: input.until }));
}

/** Writes a read's outcome on a row this run still leases (false: the lease was lost; nothing written). */
export async function finishRefresh(
  tx: Db,
  postId: string,
  owner: string,
  changes: Partial<PostAnalyticsRow>,
): Promise<boolean> {
  const { postAnalytics } = tablesOf(tx);
  const rows = await tx
    .update(postAnalytics)
    .set({ ...changes, leaseOwner: null, leaseExpiresAt: null })
    .where(and(eq(postAnalytics.postId, postId), eq(postAnalytics.leaseOwner, owner)))
    .returning({ postId: postAnalytics.postId });
  return rows.length === 1;
}

/** Stores one successful read in the history. */
export async function insertSnapshot(tx: Db, row: Omit<SnapshotRow, "id">): Promise<void> {
  const { analyticsSnapshots } = tablesOf(tx);
  await tx.insert(analyticsSnapshots).values({ id: newId("snap"), ...row });
}

/** The analytics rows of a group's published posts, oldest publication first. */
export async function listGroupAnalytics(
  db: Db,
  workspaceId: string,
  groupKey: string,
): Promise<PostAnalyticsRow[]> {
  const { postAnalytics } = tablesOf(db);
  return db
    .select()
    .from(postAnalytics)
    .where(and(eq(postAnalytics.workspaceId, workspaceId), eq(postAnalytics.groupKey, groupKey)))
    .orderBy(asc(postAnalytics.publishedAt), asc(postAnalytics.postId));
}

/** Rows of posts published in [from, until) (epoch ms), optionally of one channel or destination. */
export async function listPublishedBetween(
  db: Db,
  input: { workspaceId: string; from: number; until: number; channel?: string; destinationId?: string },
): Promise<PostAnalyticsRow[]> {
  const { postAnalytics } = tablesOf(db);
  const conditions = [
    eq(postAnalytics.workspaceId, input.workspaceId),
    gte(postAnalytics.publishedAt, input.from),
    lt(postAnalytics.publishedAt, input.until),
  ];
  if (input.channel) conditions.push(eq(postAnalytics.channel, input.channel));
  if (input.destinationId) conditions.push(eq(postAnalytics.destinationId, input.destinationId));
  return db
    .select()
    .from(postAnalytics)
    .where(and(...conditions));
}

/** Makes a group's rows due now (on-demand refresh); posts the network has no numbers for are left. */
export async function makeGroupDue(
  tx: Db,
  workspaceId: string,
  groupKey: string,
  now: number,
): Promise<number> {
  const { postAnalytics } = tablesOf(tx);
  const rows = await tx
    .update(postAnalytics)
    .set({ nextRefreshAt: now })
    .where(
      and(
        eq(postAnalytics.workspaceId, workspaceId),
        eq(postAnalytics.groupKey, groupKey),
        ne(postAnalytics.state, "unsupported"),
      ),
    )
    .returning({ postId: postAnalytics.postId });
  return rows.length;
}

/** Records an on-demand refresh request. */
export async function insertRefreshRequest(
  tx: Db,
  row: { workspaceId: string; groupKey: string; requestedAt: number },
): Promise<void> {
  const { analyticsRefreshes } = tablesOf(tx);
  await tx.insert(analyticsRefreshes).values({ id: newId("arr"), ...row });
}

/** On-demand refresh requests of a workspace after `since`, and the oldest of them. */
export async function countRefreshRequests(
  db: Db,
  workspaceId: string,
  since: number,
): Promise<{ count: number; oldest: number | null }> {
  const { analyticsRefreshes } = tablesOf(db);
  const [row] = await db
    .select({ count: countAll(), oldest: sql<number | null>`min(${analyticsRefreshes.requestedAt})` })
    .from(analyticsRefreshes)
    .where(and(eq(analyticsRefreshes.workspaceId, workspaceId), gt(analyticsRefreshes.requestedAt, since)));
  return { count: row?.count ?? 0, oldest: row?.oldest === null ? null : Number(row?.oldest) };
}

/** Analytics snapshots fetched before `before`, oldest first (retention deletes them in batches). */
export function snapshotsBefore(db: Db, before: number): BatchDelete {
  const { analyticsSnapshots: t } = tablesOf(db);
  return { table: t, key: [t.id], where: lt(t.fetchedAt, before), oldestFirst: t.fetchedAt };
}

/** On-demand refresh requests made before `before`, oldest first (retention deletes them in batches). */
export function refreshRequestsBefore(db: Db, before: number): BatchDelete {
  const { analyticsRefreshes: t } = tablesOf(db);
  return { table: t, key: [t.id], where: lt(t.requestedAt, before), oldestFirst: t.requestedAt };
}
