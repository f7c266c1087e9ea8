import { and, asc, desc, eq, gte, inArray, isNull, lt, lte, ne, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { assets, attempts, posts, receipts } from "../../db/schema.ts";
import type { PostState } from "./states.ts";

/** A stored post. */
export type PostRow = typeof posts.$inferSelect;
/** A stored receipt (one per published body item). */
export type ReceiptRow = typeof receipts.$inferSelect;
/** A stored publishing attempt. */
export type AttemptRow = typeof attempts.$inferSelect;
/** A stored asset. */
export type AssetRow = typeof assets.$inferSelect;

/** A post of a workspace. */
export function findPost(db: Db, workspaceId: string, id: string): PostRow | undefined {
  return db
    .select()
    .from(posts)
    .where(and(eq(posts.workspaceId, workspaceId), eq(posts.id, id)))
    .get();
}

/** A post by id alone (engine). */
export function findPostById(db: Db, id: string): PostRow | undefined {
  return db.select().from(posts).where(eq(posts.id, id)).get();
}

/** Fields a non-state edit may set: a post's `state` changes only through `transitionPost`. */
export type PostEdit = Omit<Partial<PostRow>, "id" | "state" | "version">;

/** Stores a new post (callers go through `enterPosts`, which applies the state table). */
export function insertPost(db: Db, row: PostRow): void {
  db.insert(posts).values(row).run();
}

/** Applies a non-state edit and bumps the version; false when `expectVersion` no longer matches. */
export function updatePost(db: Db, id: string, changes: PostEdit, expectVersion?: number): boolean {
  const where =
    expectVersion === undefined ? eq(posts.id, id) : and(eq(posts.id, id), eq(posts.version, expectVersion));
  const result = db
    .update(posts)
    .set({ ...changes, version: sql`${posts.version} + 1` })
    .where(where)
    .returning({ id: posts.id })
    .all();
  return result.length === 1;
}

/** Removes a draft. */
export function deletePostRow(db: Db, id: string): void {
  db.delete(posts).where(eq(posts.id, id)).run();
}

/** The draft of a group for a channel, if any. */
export function findGroupDraft(
  db: Db,
  workspaceId: string,
  group: string,
  channel: string,
): PostRow | undefined {
  return db
    .select()
    .from(posts)
    .where(
      and(
        eq(posts.workspaceId, workspaceId),
        eq(posts.groupKey, group),
        eq(posts.channel, channel),
        eq(posts.state, "draft"),
      ),
    )
    .get();
}

/** Filters of the post listing. */
export interface PostFilter {
  states: PostState[] | null;
  channel?: string;
  group?: string;
  destinationId?: string;
  createdAfter?: number;
  scheduledBefore?: number;
}

/** One page (plus one row) of a workspace's posts, newest first. */
export function listPosts(
  db: Db,
  workspaceId: string,
  filter: PostFilter,
  afterId: string | null,
  limit: number,
): PostRow[] {
  const conditions: (SQL | undefined)[] = [eq(posts.workspaceId, workspaceId)];
  if (filter.states) conditions.push(inArray(posts.state, filter.states));
  if (filter.channel) conditions.push(eq(posts.channel, filter.channel));
  if (filter.group) conditions.push(eq(posts.groupKey, filter.group));
  if (filter.destinationId) conditions.push(eq(posts.destinationId, filter.destinationId));
  if (filter.createdAfter !== undefined) conditions.push(gte(posts.createdAt, filter.createdAfter));
  if (filter.scheduledBefore !== undefined) conditions.push(lt(posts.scheduledAt, filter.scheduledBefore));
  if (afterId) conditions.push(lt(posts.id, afterId));
  return db
    .select()
    .from(posts)
    .where(and(...conditions))
    .orderBy(desc(posts.id))
    .limit(limit + 1)
    .all();
}

/** Receipts of posts, in item order. */
export function listReceipts(db: Db, postIds: string[]): ReceiptRow[] {
  if (postIds.length === 0) return [];
  return db
    .select()
    .from(receipts)
    .where(inArray(receipts.postId, postIds))
    .orderBy(asc(receipts.itemIndex))
    .all();
}

/** Stores the receipt of one published item. */
export function insertReceipt(db: Db, row: ReceiptRow): void {
  db.insert(receipts).values(row).run();
}

/** Attempts of posts, oldest first. */
export function listAttempts(db: Db, postIds: string[]): AttemptRow[] {
  if (postIds.length === 0) return [];
  return db
    .select()
    .from(attempts)
    .where(inArray(attempts.postId, postIds))
    .orderBy(asc(attempts.number))
    .all();
}

/** Stores an attempt (written before the provider is called). */
export function insertAttempt(db: Db, row: AttemptRow): void {
  db.insert(attempts).values(row).run();
}

/** Records how an attempt ended. */
export function finishAttempt(
  db: Db,
  id: string,
  changes: Pick<AttemptRow, "status" | "finishedAt" | "retrySafety" | "error" | "provider">,
): void {
  db.update(attempts).set(changes).where(eq(attempts.id, id)).run();
}

/** Attempts left `started` by a post's earlier run. */
export function findStartedAttempts(db: Db, postId: string): AttemptRow[] {
  return db
    .select()
    .from(attempts)
    .where(and(eq(attempts.postId, postId), eq(attempts.status, "started")))
    .all();
}

/** Assets of a workspace by id (deleted ones excluded). */
export function findAssets(db: Db, workspaceId: string, ids: string[]): AssetRow[] {
  if (ids.length === 0) return [];
  return db
    .select()
    .from(assets)
    .where(and(eq(assets.workspaceId, workspaceId), inArray(assets.id, ids), isNull(assets.deletedAt)))
    .all();
}

/** Posts whose scheduled time has come (engine). */
export function listDueScheduled(db: Db, now: number, limit: number): PostRow[] {
  return db
    .select()
    .from(posts)
    .where(and(eq(posts.state, "scheduled"), lte(posts.scheduledAt, now)))
    .orderBy(asc(posts.scheduledAt))
    .limit(limit)
    .all();
}

/** Ready posts whose next action is due (engine), oldest first. */
export function listDueReady(db: Db, now: number, limit: number): PostRow[] {
  return db
    .select()
    .from(posts)
    .where(and(eq(posts.state, "ready"), or(isNull(posts.nextActionAt), lte(posts.nextActionAt, now))))
    .orderBy(asc(posts.nextActionAt), asc(posts.id))
    .limit(limit)
    .all();
}

/** Processing posts whose lease has run out (their process died or stalled). */
export function listExpiredLeases(db: Db, now: number, limit: number): PostRow[] {
  return db
    .select()
    .from(posts)
    .where(and(eq(posts.state, "processing"), lt(posts.leaseExpiresAt, now)))
    .limit(limit)
    .all();
}

/** Extends a lease still held by `owner`; false when it was lost. */
export function renewLease(db: Db, id: string, owner: string, leaseUntil: number): boolean {
  return (
    db
      .update(posts)
      .set({ leaseExpiresAt: leaseUntil })
      .where(and(eq(posts.id, id), eq(posts.leaseOwner, owner), eq(posts.state, "processing")))
      .returning({ id: posts.id })
      .all().length === 1
  );
}

/**
 * A destination's pace as a claim must see it (velocity): posts published since `since` plus posts
 * claimed and not finished by any process (they publish about now), other than `excludeId`.
 */
export function destinationPace(
  db: Db,
  destinationId: string,
  since: number,
  excludeId: string,
): { count: number; inFlight: number; oldest: number | null; newest: number | null } {
  return db
    .select({
      count: sql<number>`count(*)`,
      inFlight: sql<number>`coalesce(sum(${posts.state} = 'processing'), 0)`,
      oldest: sql<number | null>`min(${posts.publishedAt})`,
      newest: sql<number | null>`max(${posts.publishedAt})`,
    })
    .from(posts)
    .where(
      and(
        eq(posts.destinationId, destinationId),
        ne(posts.id, excludeId),
        or(eq(posts.state, "processing"), and(eq(posts.state, "published"), gte(posts.publishedAt, since))),
      ),
    )
    .get()!;
}

/** Non-terminal posts on a destination (a destination with any cannot be disconnected). */
export function countLivePostsOnDestination(db: Db, destinationId: string, liveStates: string[]): number {
  return db
    .select({ n: sql<number>`count(*)` })
    .from(posts)
    .where(and(eq(posts.destinationId, destinationId), inArray(posts.state, liveStates)))
    .get()!.n;
}

/** Queue slots taken: (window id, local date) pairs of live queued posts on the given destinations. */
export function takenQueueSlots(
  db: Db,
  workspaceId: string,
  destinationIds: string[],
  liveStates: string[],
): { windowId: string; localDate: string; destinationId: string; postId: string }[] {
  if (destinationIds.length === 0) return [];
  return db
    .select({
      windowId: posts.queueWindowId,
      localDate: posts.queueLocalDate,
      destinationId: posts.destinationId,
      postId: posts.id,
    })
    .from(posts)
    .where(
      and(
        eq(posts.workspaceId, workspaceId),
        inArray(posts.destinationId, destinationIds),
        inArray(posts.state, liveStates),
        sql`${posts.queueWindowId} IS NOT NULL`,
      ),
    )
    .all() as { windowId: string; localDate: string; destinationId: string; postId: string }[];
}

/** Ready posts that are due but not yet claimed, and the oldest due time (for /health). */
export function dueWork(db: Db, now: number): { count: number; oldest: number | null } {
  return db
    .select({
      count: sql<number>`count(*)`,
      oldest: sql<number | null>`min(coalesce(${posts.nextActionAt}, ${posts.scheduledAt}))`,
    })
    .from(posts)
    .where(and(eq(posts.state, "ready"), or(isNull(posts.nextActionAt), lte(posts.nextActionAt, now))))
    .get()!;
}
