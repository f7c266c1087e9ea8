import { and, asc, eq, gt, inArray, isNull, lte, or, sql } from "drizzle-orm";
import { skipLocked } from "../../db/dialect.ts";
import type { Db } from "../../db/open.ts";
import { insertRow, runPostgresText, runPrepared } from "../../db/prepared.ts";
import { firstRow, isPostgres } from "../../db/engine.ts";
import { tablesOf } from "../../db/tables.ts";
import type { DestinationRow } from "../destinations/repo.ts";
import type { AttemptRow, PostEdit, PostRow, ReceiptRow } from "../posts/repo.ts";
import { editPostIfStill } from "../posts/transition.ts";
import { FIRST_REFRESH_DELAY_MS, zeroMetrics } from "../analytics/cadence.ts";

// The engine's hot queries run once or twice per published post: prepared (built once per handle),
// since building drizzle SQL costs more than SQLite takes to run them.

/**
 * A non-state edit of a post this process is publishing (attempt count, lease renewal); false when
 * the lease was lost (another process recovered the post), in which case nothing is written.
 * State changes go through `transitionPost` with `leasedBy`.
 */
export async function updateLeasedPost(
  db: Db,
  id: string,
  owner: string,
  changes: PostEdit,
): Promise<boolean> {
  return editPostIfStill(db, id, { state: "processing", leasedBy: owner }, changes);
}

/**
 * Extends the lease of a post this process is publishing, in the transaction that stores a receipt:
 * false when the lease was lost (another process recovered the post), and then nothing may be
 * written. The version moves (the receipt changes the post as the API shows it, and its ETag); on
 * PostgreSQL the row stays locked until that transaction ends.
 */
export async function holdLease(
  tx: Db,
  id: string,
  owner: string,
  now: number,
  until: number,
): Promise<boolean> {
  const { posts } = tablesOf(tx);
  const rows = await runPrepared(
    tx,
    "engine_hold_lease",
    (d) =>
      d
        .update(posts)
        .set({ leaseExpiresAt: raw("until"), updatedAt: raw("now"), version: sql`${posts.version} + 1` })
        .where(
          and(
            eq(posts.id, sql.placeholder("id")),
            eq(posts.state, "processing"),
            eq(posts.leaseOwner, sql.placeholder("owner")),
          ),
        )
        .returning({ id: posts.id }),
    { id, owner, now, until },
  );
  return rows.length === 1;
}

/** Posts waiting for their assets. */
export async function listPreparing(db: Db, limit: number): Promise<PostRow[]> {
  const { posts } = tablesOf(db);
  return db.select().from(posts).where(eq(posts.state, "preparing")).limit(limit);
}

/** States the engine takes posts from when they come due (`next_action_at`, or the scheduled time). */
export type DueState = "ready" | "scheduled" | "awaiting-provider";

/**
 * Due posts in `state` to take inside a write transaction, oldest due first: on PostgreSQL locked,
 * skipping those another process is taking (processes never wait on or collide with each other's
 * batch). Ordered by the `posts_due` index alone, so the database reads the first `limit` entries
 * instead of sorting every due post (thousands when they share one due time); a scheduled post's
 * `next_action_at` is its scheduled time, so the due ones come first there too.
 */
export async function takeDue(tx: Db, state: DueState, now: number, limit: number): Promise<PostRow[]> {
  const { posts } = tablesOf(tx);
  const due =
    state !== "scheduled"
      ? or(isNull(posts.nextActionAt), lte(posts.nextActionAt, sql.placeholder("now")))
      : lte(posts.scheduledAt, sql.placeholder("now"));
  return runPrepared(
    tx,
    `engine_take_due_${state}`,
    (d) =>
      skipLocked(
        d,
        d
          .select()
          .from(posts)
          .where(and(eq(posts.state, state), due))
          .orderBy(asc(posts.nextActionAt))
          .limit(sql.placeholder("limit")),
      ),
    { now, limit },
  );
}

/**
 * Due ready posts to claim inside a write transaction, at most one per destination: each
 * destination's head (its earliest ready post by `next_action_at`, then id; ids follow creation
 * time), and only while none of its posts is `processing`, so a destination has one publication in
 * flight at a time, across processes, and its posts go in due order. A destination with a post due
 * but still `scheduled` waits for it to be promoted (a burst is promoted in batches, in several
 * processes at once, and a later post of the destination may be ready first; a scheduled post's
 * `next_action_at` is its scheduled time). Posts without a destination
 * have no order to keep and come as they are due. Oldest due first, `limit` at most; on PostgreSQL
 * locked, skipping rows another process is taking.
 *
 * An index lookup along `posts_destination_queue` (state, destination, due, id): the destinations
 * with ready posts are walked one seek each (a recursive "next destination after this one"), and
 * each one's head and its processing check are one seek more; the posts table is never scanned, so
 * the cost follows the destinations with ready posts, not the posts.
 *
 * Two processes claiming at once on PostgreSQL (READ COMMITTED): each statement chooses heads from
 * its own snapshot, in which a destination has at most one eligible post (its head, and only with
 * nothing `processing`). Only the head can be taken, and only by one: the row lock goes to one
 * claimer, the other skips the locked row (SKIP LOCKED), or, if the first has already committed, it
 * locks the new row version and PostgreSQL re-checks the outer conditions on it: the post is no
 * longer `ready`, so it is dropped. A stale snapshot can only hide a newer head (it still sees the
 * older head as ready), never show a second one, so no destination gets two posts in flight.
 */
export function readyHeadsQuery(db: Db, now: unknown, limit: unknown) {
  const { posts } = tablesOf(db);
  const due = sql`(next_action_at IS NULL OR next_action_at <= ${now})`;
  // Ids of the heads of destinations with nothing processing, and of due posts without a destination.
  const candidates = sql`
    WITH RECURSIVE waiting(destination_id) AS (
      SELECT min(destination_id) FROM posts WHERE state = 'ready'
      UNION ALL
      SELECT (SELECT min(n.destination_id) FROM posts n WHERE n.state = 'ready' AND n.destination_id > w.destination_id)
      FROM waiting w WHERE w.destination_id IS NOT NULL
    )
    SELECT (
      SELECT h.id FROM posts h WHERE h.state = 'ready' AND h.destination_id = w.destination_id
      ORDER BY h.next_action_at, h.id LIMIT 1
    ) FROM waiting w
    WHERE w.destination_id IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM posts b WHERE b.state = 'processing' AND b.destination_id = w.destination_id
    ) AND NOT EXISTS (
      SELECT 1 FROM posts s WHERE s.state = 'scheduled' AND s.destination_id = w.destination_id
      AND s.next_action_at <= ${now}
    )
    UNION ALL
    SELECT id FROM (
      SELECT u.id FROM posts u WHERE u.state = 'ready' AND u.destination_id IS NULL AND ${due}
      ORDER BY u.next_action_at, u.id LIMIT ${limit}
    ) unbound`;
  // The outer conditions are the ones PostgreSQL re-checks on a row another claimer changed. Its
  // state test is an expression (`|| ''`), so neither engine reads the outer rows along the state
  // index (every due post of a burst) but by primary key from the few candidates.
  return skipLocked(
    db,
    db
      .select()
      .from(posts)
      .where(sql`${posts.state} || '' = 'ready' AND ${due} AND ${posts.id} IN (${candidates})`)
      .orderBy(asc(posts.nextActionAt), asc(posts.id))
      .limit(limit as number),
  );
}

/** Claimable ready posts, one per destination at most (see `readyHeadsQuery`). */
export async function takeReadyHeads(tx: Db, now: number, limit: number): Promise<PostRow[]> {
  return runPrepared(
    tx,
    "engine_take_ready_heads",
    (d) => readyHeadsQuery(d, sql.placeholder("now"), sql.placeholder("limit")),
    { now, limit },
  );
}

/** The earliest time after `now` at which a post in `state` comes due, or null (one index lookup). */
export async function nextDueAt(db: Db, state: DueState, now: number): Promise<number | null> {
  const { posts } = tablesOf(db);
  const rows = await runPrepared(
    db,
    `engine_next_due_${state}`,
    (d) =>
      d
        .select({ at: posts.nextActionAt })
        .from(posts)
        .where(and(eq(posts.state, state), gt(posts.nextActionAt, sql.placeholder("now"))))
        .orderBy(asc(posts.nextActionAt))
        .limit(1),
    { now },
  );
  return rows[0]?.at ?? null;
}

/** A destination by id, disconnected ones included (read once per claim). */
export async function findDestinationRow(db: Db, id: string): Promise<DestinationRow | undefined> {
  const { destinations } = tablesOf(db);
  return runPrepared(
    db,
    "engine_destination",
    (d) =>
      d
        .select()
        .from(destinations)
        .where(eq(destinations.id, sql.placeholder("id"))),
    { id },
  ).then(firstRow);
}

/** Extends the leases `owner` still holds on these posts (one statement for all of them). */
export async function renewLeases(db: Db, ids: string[], owner: string, until: number): Promise<void> {
  const { posts } = tablesOf(db);
  if (ids.length === 0) return;
  await db
    .update(posts)
    .set({ leaseExpiresAt: until })
    .where(and(inArray(posts.id, ids), eq(posts.leaseOwner, owner), eq(posts.state, "processing")));
}

/**
 * A placeholder whose value is sent as given (an update's `set` takes only this form): JSON columns
 * take theirs encoded by `jsonValue`, which keeps a null SQL NULL as a built query would.
 */
function raw(name: string) {
  return sql`${sql.placeholder(name)}`;
}

function jsonValue(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/**
 * Stores the attempts of one claim (written in its transaction, before any provider is called): on
 * PostgreSQL one statement for all of them; on SQLite, and for a single one, the prepared insert per
 * row (cheaper there than building a statement of many rows).
 */
export async function insertAttemptRows(db: Db, rows: AttemptRow[]): Promise<void> {
  const { attempts } = tablesOf(db);
  if (rows.length > 1 && isPostgres(db)) await db.insert(attempts).values(rows);
  else for (const row of rows) await insertRow(db, attempts, row);
}

/** Records how an attempt ended. */
export async function finishAttemptRow(
  db: Db,
  id: string,
  changes: Pick<AttemptRow, "status" | "finishedAt" | "retrySafety" | "error" | "provider">,
): Promise<void> {
  const { attempts } = tablesOf(db);
  await runPrepared(
    db,
    "engine_finish_attempt",
    (d) =>
      d
        .update(attempts)
        .set({
          status: raw("status"),
          finishedAt: raw("finishedAt"),
          retrySafety: raw("retrySafety"),
          error: raw("error"),
          provider: raw("provider"),
        })
        .where(eq(attempts.id, sql.placeholder("id"))),
    { id, ...changes, error: jsonValue(changes.error), provider: jsonValue(changes.provider) },
  );
}

/** Stores the receipt of one published item. */
export async function insertReceiptRow(db: Db, row: ReceiptRow): Promise<void> {
  const { receipts } = tablesOf(db);
  await insertRow(db, receipts, row);
}

/** Everything a published post's outcome writes (see `writePublishedOutcome`). */
export interface PublishedOutcome {
  postId: string;
  /** The lease owner the post must still have: otherwise nothing is written. */
  owner: string;
  attemptId: string;
  now: number;
  /** The last item's receipt, when it was sent in this run. */
  receipt: ReceiptRow | undefined;
  /** The attempt log's provider details of the last call. */
  provider: Record<string, unknown> | null;
  /** The `post.published` event: its id and payload (the post summary after the move). */
  event: { id: string; payload: Record<string, unknown> };
}

/**
 * On PostgreSQL, a published post's whole outcome in one statement (its own transaction): the post
 * moves from `processing` to `published` only while `owner` holds its lease, and the last receipt,
 * the attempt's end, the analytics row and the outbox event are written from that update's row, so
 * either all of them are written or (lease lost, post moved on, any of them failing) none. The same
 * writes as `transitionPost` to `published` plus `finishAttemptRow`, for a post whose channel has no
 * monthly usage to consume; ten round trips become one. False when the lease was lost.
 */
export async function writePublishedOutcome(db: Db, o: PublishedOutcome): Promise<boolean> {
  const params: unknown[] = [
    o.now,
    o.postId,
    o.owner,
    jsonValue(o.provider),
    o.attemptId,
    JSON.stringify(zeroMetrics()),
    o.now + FIRST_REFRESH_DELAY_MS,
    o.event.id,
    JSON.stringify(o.event.payload),
  ];
  const r = o.receipt;
  if (r)
    params.push(
      r.id,
      r.itemIndex,
      r.providerObjectId,
      r.url,
      JSON.stringify(r.extra),
      r.state,
      r.publishedAt,
    );
  const rows = await runPostgresText(db, r ? PUBLISHED_WITH_RECEIPT : PUBLISHED_ALONE, params);
  return rows.length === 1;
}

// Every write after `moved` selects from it: a post whose lease was lost (no row) writes nothing.
// Parameters in a select list are cast (PostgreSQL would otherwise take them as text).
const PUBLISHED = `WITH moved AS (
  UPDATE posts SET state = 'published', version = version + 1, published_at = $1, next_action_at = NULL,
    last_error = NULL, retry_safety = 'safe', provider_pending = NULL, lease_owner = NULL,
    lease_expires_at = NULL, deferred_reason = NULL, deferred_until = NULL, updated_at = $1
  WHERE id = $2 AND state = 'processing' AND lease_owner = $3
  RETURNING id, workspace_id, group_key, channel, destination_id
), attempt AS (
  UPDATE attempts SET status = 'succeeded', finished_at = $1, retry_safety = 'safe', error = NULL,
    provider = $4::text
  WHERE id = $5 AND post_id IN (SELECT id FROM moved)
), analytics AS (
  INSERT INTO post_analytics (post_id, workspace_id, group_key, channel, destination_id, published_at, state,
    metrics, offered, fetched_at, provider_as_of, next_refresh_at, last_error, lease_owner, lease_expires_at)
  SELECT id, workspace_id, group_key, channel, destination_id, $1::bigint, 'pending', $6::text, '[]', NULL, NULL,
    $7::bigint, NULL, NULL, NULL FROM moved
  ON CONFLICT DO NOTHING
), event AS (
  INSERT INTO events_outbox (id, workspace_id, type, post_id, destination_id, payload, created_at)
  SELECT $8::text, workspace_id, 'post.published', id, destination_id, $9::text, $1::bigint FROM moved
)`;

const PUBLISHED_ALONE = `${PUBLISHED}
SELECT id FROM moved`;

const PUBLISHED_WITH_RECEIPT = `${PUBLISHED}, receipt AS (
  INSERT INTO receipts (id, post_id, item_index, provider_object_id, url, extra, state, published_at)
  SELECT $10::text, id, $11::bigint, $12::text, $13::text, $14::text, $15::text, $16::bigint FROM moved
)
SELECT id FROM moved`;
