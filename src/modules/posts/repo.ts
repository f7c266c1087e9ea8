import {
  and,
  asc,
  desc,
  eq,
  getTableColumns,
  gte,
  inArray,
  isNull,
  lt,
  lte,
  ne,
  or,
  sql,
  type Column,
  type SQL,
} from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import type { PostState } from "./states.ts";
import { countAll, countWhere, maxOf, minOf } from "../../db/dialect.ts";
import { firstRow, isPostgres } from "../../db/engine.ts";
import { insertRow, runPrepared } from "../../db/prepared.ts";

/** A stored post. */
export type PostRow = Tables["posts"]["$inferSelect"];
/** A stored receipt (one per published body item). */
export type ReceiptRow = Tables["receipts"]["$inferSelect"];
/** A stored publishing attempt. */
export type AttemptRow = Tables["attempts"]["$inferSelect"];
/** A stored asset. */
export type AssetRow = Tables["assets"]["$inferSelect"];

/** A post of a workspace. */
export async function findPost(db: Db, workspaceId: string, id: string): Promise<PostRow | undefined> {
  const { posts } = tablesOf(db);
  return runPrepared(
    db,
    "post_of_workspace",
    (d) =>
      d
        .select()
        .from(posts)
        .where(
          and(eq(posts.workspaceId, sql.placeholder("workspaceId")), eq(posts.id, sql.placeholder("id"))),
        ),
    { workspaceId, id },
  ).then(firstRow);
}

/**
 * A post of a workspace with its receipts in item order (GET one post). On PostgreSQL in one statement
 * (a round trip saved): the post's columns on every row, a receipt's beside them (none: one row with the
 * receipt's columns null). On SQLite as two lookups: there the join costs about 35 µs against 5 µs for
 * the two (measured with bun:sqlite on the same plan of indexes), and no round trip is saved.
 */
export async function findPostWithReceipts(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<{ post: PostRow; receipts: ReceiptRow[] } | undefined> {
  if (!isPostgres(db)) {
    const post = await findPost(db, workspaceId, id);
    return post && { post, receipts: await listReceipts(db, [id]) };
  }
  const { posts, receipts } = tablesOf(db);
  const rows = await runPrepared(
    db,
    "post_of_workspace_with_receipts",
    (d) =>
      d
        .select({
          ...getTableColumns(posts),
          receiptId: receipts.id,
          receiptItemIndex: receipts.itemIndex,
          receiptProviderObjectId: receipts.providerObjectId,
          receiptUrl: receipts.url,
          receiptExtra: receipts.extra,
          receiptState: receipts.state,
          receiptPublishedAt: receipts.publishedAt,
        })
        .from(posts)
        .leftJoin(receipts, eq(receipts.postId, posts.id))
        .where(
          and(eq(posts.workspaceId, sql.placeholder("workspaceId")), eq(posts.id, sql.placeholder("id"))),
        ),
    { workspaceId, id },
  );
  const first = rows[0];
  if (!first) return undefined;
  const {
    receiptId: _id,
    receiptItemIndex: _itemIndex,
    receiptProviderObjectId: _providerObjectId,
    receiptUrl: _url,
    receiptExtra: _extra,
    receiptState: _state,
    receiptPublishedAt: _publishedAt,
    ...post
  } = first;
  const found = rows.flatMap((r) =>
    r.receiptId === null
      ? []
      : [
          {
            id: r.receiptId,
            postId: post.id,
            itemIndex: r.receiptItemIndex!,
            providerObjectId: r.receiptProviderObjectId!,
            url: r.receiptUrl!,
            extra: r.receiptExtra!,
            state: r.receiptState!,
            publishedAt: r.receiptPublishedAt!,
          },
        ],
  );
  return { post, receipts: found.length < 2 ? found : found.sort((a, b) => a.itemIndex - b.itemIndex) };
}

/** A post by id alone (engine). */
export async function findPostById(db: Db, id: string): Promise<PostRow | undefined> {
  const { posts } = tablesOf(db);
  return runPrepared(
    db,
    "post_by_id",
    (d) =>
      d
        .select()
        .from(posts)
        .where(eq(posts.id, sql.placeholder("id"))),
    { id },
  ).then(firstRow);
}

/** Fields a non-state edit may set: a post's `state` changes only through `transitionPost`. */
export type PostEdit = Omit<Partial<PostRow>, "id" | "state" | "version">;

/** Stores a new post (callers go through `enterPosts`, which applies the state table). */
export async function insertPost(db: Db, row: PostRow): Promise<void> {
  const { posts } = tablesOf(db);
  await insertRow(db, posts, row);
}

/**
 * Inserts a post unless a unique index of posts already holds one like it (its queue slot, a
 * recycled copy's number), which a concurrent writer may have taken after this transaction read
 * it free: false then, and the transaction goes on (no error aborts it).
 */
export async function insertPostUnlessTaken(db: Db, row: PostRow): Promise<boolean> {
  const { posts } = tablesOf(db);
  const inserted = await db.insert(posts).values(row).onConflictDoNothing().returning({ id: posts.id });
  return inserted.length === 1;
}

/** Applies a non-state edit and bumps the version; false when `expectVersion` no longer matches. */
export async function updatePost(
  db: Db,
  id: string,
  changes: PostEdit,
  expectVersion?: number,
): Promise<boolean> {
  const { posts } = tablesOf(db);
  const where =
    expectVersion === undefined ? eq(posts.id, id) : and(eq(posts.id, id), eq(posts.version, expectVersion));
  const result = await db
    .update(posts)
    .set({ ...changes, version: sql`${posts.version} + 1` })
    .where(where)
    .returning({ id: posts.id });
  return result.length === 1;
}

/** What a conditional write expects of the row: its state, and for engine runs the lease owner. */
export interface PostExpectation {
  state: string;
  leasedBy?: string;
}

/**
 * The one conditional UPDATE of a post: applies `set` (version bumped) only while the row is as
 * expected; null when it moved on. State changes come only from `transitionPosts` (transition.ts).
 */
export async function updatePostIfStill(
  tx: Db,
  id: string,
  expected: PostExpectation,
  set: Partial<PostRow>,
): Promise<PostRow | null> {
  const { posts } = tablesOf(tx);
  // Prepared once per shape (the columns set, whether the lease owner is checked): the engine runs
  // two of these per published post, and building the SQL costs more than running it.
  const keys = Object.keys(set)
    .filter((k) => set[k as keyof PostRow] !== undefined)
    .sort();
  const leased = expected.leasedBy !== undefined;
  const values: Record<string, unknown> = { id, state: expected.state, leasedBy: expected.leasedBy ?? null };
  const columns = getTableColumns(posts) as Record<string, Column>;
  for (const k of keys) {
    const value = set[k as keyof PostRow];
    values[`set_${k}`] = value === null ? null : columns[k]!.mapToDriverValue(value);
  }
  const rows = await runPrepared(
    tx,
    `post_update_if_still:${leased ? "leased:" : ""}${keys.join(",")}`,
    (d) => {
      const where: SQL[] = [eq(posts.id, sql.placeholder("id")), eq(posts.state, sql.placeholder("state"))];
      if (leased) where.push(eq(posts.leaseOwner, sql.placeholder("leasedBy")));
      // sql`${placeholder}`: the value goes through as encoded above (a null stays NULL).
      const assignments: Record<string, SQL> = { version: sql`${posts.version} + 1` };
      for (const k of keys) assignments[k] = sql`${sql.placeholder(`set_${k}`)}`;
      return d
        .update(posts)
        .set(assignments as Partial<PostRow>)
        .where(and(...where))
        .returning();
    },
    values,
  );
  return rows[0] ?? null;
}

/** One post of a batched claim: its id, the state it is expected in and its attempt count after. */
export interface LockedClaim {
  id: string;
  from: string;
  attemptCount: number;
}

/**
 * PostgreSQL: several posts this transaction read locked enter `processing` with one lease, in one
 * UPDATE (each only while still in its expected state; version bumped, deferral cleared, attempt
 * count set). The rows after, in no particular order; a post that moved on is absent.
 */
export async function claimLockedPosts(
  tx: Db,
  claims: LockedClaim[],
  lease: { owner: string; until: number },
  now: number,
): Promise<PostRow[]> {
  const { posts } = tablesOf(tx);
  return runPrepared(
    tx,
    "post_claim_locked",
    (d) =>
      d
        .update(posts)
        .set({
          state: "processing",
          leaseOwner: sql`${sql.placeholder("owner")}`,
          leaseExpiresAt: sql`${sql.placeholder("until")}`,
          deferredReason: null,
          deferredUntil: null,
          updatedAt: sql`${sql.placeholder("now")}`,
          attemptCount: sql`claim.attempt_count`,
          version: sql`${posts.version} + 1`,
        })
        .from(
          sql`json_to_recordset(${sql.placeholder("claims")}::text::json) AS claim(id text, "from" text, attempt_count bigint)`,
        )
        .where(and(eq(posts.id, sql`claim.id`), eq(posts.state, sql`claim."from"`)))
        .returning(),
    {
      claims: JSON.stringify(claims.map((c) => ({ id: c.id, from: c.from, attempt_count: c.attemptCount }))),
      owner: lease.owner,
      until: lease.until,
      now,
    },
  );
}

/** Removes a draft. */
export async function deletePostRow(db: Db, id: string): Promise<void> {
  const { posts } = tablesOf(db);
  await db.delete(posts).where(eq(posts.id, id));
}

/** The draft of a group for a channel, if any. */
export async function findGroupDraft(
  db: Db,
  workspaceId: string,
  group: string,
  channel: string,
): Promise<PostRow | undefined> {
  const { posts } = tablesOf(db);
  return runPrepared(
    db,
    "group_draft",
    (d) =>
      d
        .select()
        .from(posts)
        .where(
          and(
            eq(posts.workspaceId, sql.placeholder("workspaceId")),
            eq(posts.groupKey, sql.placeholder("group")),
            eq(posts.channel, sql.placeholder("channel")),
            // A literal, not a parameter: only then can SQLite use the partial index of drafts.
            sql`${posts.state} = 'draft'`,
          ),
        ),
    { workspaceId, group, channel },
  ).then(firstRow);
}

/** Filters of the post listing. */
export interface PostFilter {
  states: PostState[] | null;
  channel?: string;
  group?: string;
  destinationId?: string;
  createdAfter?: number;
  scheduledBefore?: number;
  /** Only posts whose approval has this status. */
  approval?: "requested" | "approved" | "changes_requested";
}

/**
 * Below this many posts in a time filter's range (`created_after`, `scheduled_before`), the page is
 * read from those posts by id; from this many on, the id-ordered walk meets matches often enough.
 */
export const TIME_RANGE_PROBE = 1000;

/**
 * One page (plus one row) of a workspace's posts, newest first, read along an index in id order so a
 * page costs about the same among a million posts as among ten. A view of several states reads one
 * range per state (`posts_workspace_state`) and merges them: a single `IN` would walk the whole
 * workspace, or sort every match, to fill a page of a rare view. A time filter is a range of its own
 * index, not in id order: when it holds few posts they are read by id (sorting at most
 * TIME_RANGE_PROBE rows), otherwise the walk skips it (checked row by row, never sorted whole).
 */
export async function listPosts(
  db: Db,
  workspaceId: string,
  filter: PostFilter,
  afterId: string | null,
  limit: number,
): Promise<PostRow[]> {
  const inRange = await postsInSmallTimeRange(db, workspaceId, filter, afterId);
  if (inRange?.length === 0) return [];
  const page = (states: PostState[] | null) =>
    postListingQuery(db, workspaceId, { ...filter, states }, afterId, limit, inRange);
  if (inRange || !filter.states || filter.states.length < 2) return page(filter.states);
  const pages: PostRow[] = [];
  for (const state of filter.states) pages.push(...(await page([state])));
  return pages.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).slice(0, limit + 1);
}

/**
 * The ids of the workspace's posts in a time filter's range (before the cursor), when there are
 * fewer than TIME_RANGE_PROBE; null when there is no time filter or its ranges hold more.
 */
async function postsInSmallTimeRange(
  db: Db,
  workspaceId: string,
  filter: PostFilter,
  afterId: string | null,
): Promise<string[] | null> {
  for (const probe of timeRangeProbes(db, workspaceId, filter, afterId)) {
    const rows = await probe;
    if (rows.length < TIME_RANGE_PROBE) return rows.map((row) => row.id);
  }
  return null;
}

/** The count-limited reads of each time filter's range (tests read their plans). */
export function timeRangeProbes(db: Db, workspaceId: string, filter: PostFilter, afterId: string | null) {
  const { posts } = tablesOf(db);
  const ranges: [Column, SQL][] = [];
  if (filter.createdAfter !== undefined)
    ranges.push([posts.createdAt, gte(posts.createdAt, filter.createdAfter)]);
  if (filter.scheduledBefore !== undefined)
    ranges.push([posts.scheduledAt, lt(posts.scheduledAt, filter.scheduledBefore)]);
  return ranges.map(([column, range]) =>
    db
      .select({ id: posts.id })
      .from(posts)
      .where(and(eq(posts.workspaceId, workspaceId), range, afterId ? lt(posts.id, afterId) : undefined))
      .orderBy(asc(column))
      .limit(TIME_RANGE_PROBE),
  );
}

/**
 * The query of one listing page over at most one state (what listPosts runs; tests read its plan).
 * `inRange`: the ids a time filter's small range holds; null: the time filters are checked row by row
 * along the id order (a `+` keeps the database from sorting a wide range of their indexes instead).
 */
export function postListingQuery(
  db: Db,
  workspaceId: string,
  filter: PostFilter,
  afterId: string | null,
  limit: number,
  inRange: string[] | null = null,
) {
  const { posts } = tablesOf(db);
  // Ids from the workspace's own range are looked up by primary key alone (no index on the workspace
  // to walk instead); otherwise the page walks one of the workspace's indexes.
  const conditions: (SQL | undefined)[] = [
    inRange ? inArray(posts.id, inRange) : eq(posts.workspaceId, workspaceId),
  ];
  if (filter.states) conditions.push(inArray(posts.state, filter.states));
  if (filter.channel) conditions.push(eq(posts.channel, filter.channel));
  if (filter.group) conditions.push(eq(posts.groupKey, filter.group));
  if (filter.destinationId) conditions.push(eq(posts.destinationId, filter.destinationId));
  if (filter.approval) {
    const { postApprovals } = tablesOf(db);
    conditions.push(
      inArray(
        posts.id,
        db
          .select({ id: postApprovals.postId })
          .from(postApprovals)
          .where(and(eq(postApprovals.workspaceId, workspaceId), eq(postApprovals.status, filter.approval))),
      ),
    );
  }
  if (filter.createdAfter !== undefined) conditions.push(sql`+${posts.createdAt} >= ${filter.createdAfter}`);
  if (filter.scheduledBefore !== undefined)
    conditions.push(sql`+${posts.scheduledAt} < ${filter.scheduledBefore}`);
  if (afterId) conditions.push(lt(posts.id, afterId));
  return db
    .select()
    .from(posts)
    .where(and(...conditions))
    .orderBy(desc(posts.id))
    .limit(limit + 1);
}

/** Receipts of posts, in item order. */
export async function listReceipts(db: Db, postIds: string[]): Promise<ReceiptRow[]> {
  const { receipts } = tablesOf(db);
  if (postIds.length === 0) return [];
  // One post (every single-post response) is the hot case: a prepared query, sorted here (SQLite's
  // ORDER BY costs more than the lookup even though the index is already in that order).
  if (postIds.length === 1) {
    const rows = await runPrepared(
      db,
      "receipts_of_post",
      (d) =>
        d
          .select()
          .from(receipts)
          .where(eq(receipts.postId, sql.placeholder("postId"))),
      { postId: postIds[0] },
    );
    return rows.length < 2 ? rows : rows.sort((a, b) => a.itemIndex - b.itemIndex);
  }
  return db.select().from(receipts).where(inArray(receipts.postId, postIds)).orderBy(asc(receipts.itemIndex));
}

/** Stores the receipt of one published item. */
export async function insertReceipt(db: Db, row: ReceiptRow): Promise<void> {
  const { receipts } = tablesOf(db);
  await db.insert(receipts).values(row);
}

/** Attempts of posts, oldest first. */
export async function listAttempts(db: Db, postIds: string[]): Promise<AttemptRow[]> {
  const { attempts } = tablesOf(db);
  if (postIds.length === 0) return [];
  return db.select().from(attempts).where(inArray(attempts.postId, postIds)).orderBy(asc(attempts.number));
}

/** Stores an attempt (written before the provider is called). */
export async function insertAttempt(db: Db, row: AttemptRow): Promise<void> {
  const { attempts } = tablesOf(db);
  await db.insert(attempts).values(row);
}

/** Records how an attempt ended. */
export async function finishAttempt(
  db: Db,
  id: string,
  changes: Pick<AttemptRow, "status" | "finishedAt" | "retrySafety" | "error" | "provider">,
): Promise<void> {
  const { attempts } = tablesOf(db);
  await db.update(attempts).set(changes).where(eq(attempts.id, id));
}

/** Attempts left `started` by a post's earlier run. */
export async function findStartedAttempts(db: Db, postId: string): Promise<AttemptRow[]> {
  const { attempts } = tablesOf(db);
  return db
    .select()
    .from(attempts)
    .where(and(eq(attempts.postId, postId), eq(attempts.status, "started")));
}

/** Assets of a workspace by id (deleted ones excluded). */
export async function findAssets(db: Db, workspaceId: string, ids: string[]): Promise<AssetRow[]> {
  const { assets } = tablesOf(db);
  if (ids.length === 0) return [];
  return db
    .select()
    .from(assets)
    .where(and(eq(assets.workspaceId, workspaceId), inArray(assets.id, ids), isNull(assets.deletedAt)));
}

/** Posts whose scheduled time has come (engine). */
export async function listDueScheduled(db: Db, now: number, limit: number): Promise<PostRow[]> {
  const { posts } = tablesOf(db);
  return db
    .select()
    .from(posts)
    .where(and(eq(posts.state, "scheduled"), lte(posts.scheduledAt, now)))
    .orderBy(asc(posts.scheduledAt))
    .limit(limit);
}

/** Ready posts whose next action is due (engine), oldest first. */
export async function listDueReady(db: Db, now: number, limit: number): Promise<PostRow[]> {
  const { posts } = tablesOf(db);
  return db
    .select()
    .from(posts)
    .where(and(eq(posts.state, "ready"), or(isNull(posts.nextActionAt), lte(posts.nextActionAt, now))))
    .orderBy(sql`${posts.nextActionAt} asc nulls first`, asc(posts.id))
    .limit(limit);
}

/** Processing posts whose lease has run out (their process died or stalled). */
export async function listExpiredLeases(db: Db, now: number, limit: number): Promise<PostRow[]> {
  const { posts } = tablesOf(db);
  return db
    .select()
    .from(posts)
    .where(and(eq(posts.state, "processing"), lt(posts.leaseExpiresAt, now)))
    .limit(limit);
}

/** Extends a lease still held by `owner`; false when it was lost. */
export async function renewLease(db: Db, id: string, owner: string, leaseUntil: number): Promise<boolean> {
  const { posts } = tablesOf(db);
  const renewed = await db
    .update(posts)
    .set({ leaseExpiresAt: leaseUntil })
    .where(and(eq(posts.id, id), eq(posts.leaseOwner, owner), eq(posts.state, "processing")))
    .returning({ id: posts.id });
  return renewed.length === 1;
}

/**
 * A destination's pace as a claim must see it (velocity): posts published since `since` plus posts
 * claimed and not finished by any process (they publish about now), other than `excludeId`.
 */
export async function destinationPace(
  db: Db,
  destinationId: string,
  since: number,
  excludeId: string,
): Promise<{ count: number; inFlight: number; oldest: number | null; newest: number | null }> {
  const { posts } = tablesOf(db);
  const [pace] = await db
    .select({
      count: countAll(),
      inFlight: countWhere(eq(posts.state, "processing")),
      oldest: minOf(posts.publishedAt),
      newest: maxOf(posts.publishedAt),
    })
    .from(posts)
    .where(
      and(
        eq(posts.destinationId, destinationId),
        ne(posts.id, excludeId),
        or(eq(posts.state, "processing"), and(eq(posts.state, "published"), gte(posts.publishedAt, since))),
      ),
    );
  return pace!;
}

/** Non-terminal posts on a destination (a destination with any cannot be disconnected). */
export async function countLivePostsOnDestination(
  db: Db,
  destinationId: string,
  liveStates: string[],
): Promise<number> {
  const { posts } = tablesOf(db);
  const [row] = await db
    .select({ n: countAll() })
    .from(posts)
    .where(and(eq(posts.destinationId, destinationId), inArray(posts.state, liveStates)));
  return row!.n;
}

/** How many posts are in each of `states` (states without posts are left out). */
export async function countPostsByState(db: Db, states: readonly string[]): Promise<Map<string, number>> {
  const { posts } = tablesOf(db);
  const rows = await db
    .select({ state: posts.state, n: countAll() })
    .from(posts)
    .where(inArray(posts.state, [...states]))
    .groupBy(posts.state);
  return new Map(rows.map((r) => [r.state, r.n]));
}

/** Queue slots taken: (window id, local date) pairs of live queued posts on the given destinations. */
export async function takenQueueSlots(
  db: Db,
  workspaceId: string,
  destinationIds: string[],
  liveStates: string[],
): Promise<{ windowId: string; localDate: string; destinationId: string; postId: string }[]> {
  const { posts } = tablesOf(db);
  if (destinationIds.length === 0) return [];
  const rows = await db
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
    );
  return rows as { windowId: string; localDate: string; destinationId: string; postId: string }[];
}

/** Ready posts that are due but not yet claimed, and the oldest due time (for /health). */
export async function dueWork(db: Db, now: number): Promise<{ count: number; oldest: number | null }> {
  const { posts } = tablesOf(db);
  const [due] = await db
    .select({
      count: countAll(),
      oldest: minOf(sql`coalesce(${posts.nextActionAt}, ${posts.scheduledAt})`),
    })
    .from(posts)
    .where(and(eq(posts.state, "ready"), or(isNull(posts.nextActionAt), lte(posts.nextActionAt, now))));
  return due!;
}
