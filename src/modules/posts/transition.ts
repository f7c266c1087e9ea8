// The one door for a post's state: every change of `posts.state` (and every new post) goes through
// `transitionPosts` / `enterPosts`, which apply the table below with its lease, deferral, X usage and
// outbox bookkeeping. docs/posts.md shows the table rendered from POST_MOVES (a test keeps them equal).
import type { Db } from "../../db/open.ts";
import { ProblemError, type FieldError } from "../../core/problem.ts";
import { insertPostAnalytics } from "../analytics/repo.ts";
import { recordPostEvent } from "./events.ts";
import { isPostgres } from "../../db/engine.ts";
import {
  claimLockedPosts,
  findPostById,
  insertPost,
  insertPostUnlessTaken,
  updatePostIfStill,
  type PostEdit,
  type PostExpectation,
  type PostRow,
} from "./repo.ts";
import type { PostAction, PostState } from "./states.ts";
import { consumeXUsage, releaseXUsage } from "./repo-x-usage.ts";
import { isMetered, reserveXUsage, usageMonth } from "./x-usage.ts";

/** One move of the state table: `from` null is a new post; `action` names the user verb causing it. */
export interface PostMove {
  from: PostState | null;
  to: PostState;
  by: string;
  action?: PostAction;
}

/** Every move a post may make, with what causes it: the single source of docs/posts.md's diagram. */
export const POST_MOVES: readonly PostMove[] = [
  { from: null, to: "draft", by: "create, when = draft" },
  { from: null, to: "preparing", by: "create, an asset not ready" },
  { from: null, to: "scheduled", by: "create, future time or queue window" },
  { from: null, to: "ready", by: "create, when = now" },
  { from: "draft", to: "preparing", by: "publish drafts, an asset not ready", action: "publish" },
  { from: "draft", to: "scheduled", by: "publish drafts, future time or queue window", action: "publish" },
  { from: "draft", to: "ready", by: "publish drafts, due", action: "publish" },
  { from: "preparing", to: "scheduled", by: "assets ready, time ahead" },
  { from: "preparing", to: "ready", by: "assets ready, time due" },
  { from: "preparing", to: "needs-attention", by: "time came, assets not ready" },
  { from: "preparing", to: "cancelled", by: "cancel", action: "cancel" },
  { from: "scheduled", to: "scheduled", by: "reschedule", action: "reschedule" },
  { from: "scheduled", to: "scheduled", by: "move in queue", action: "move" },
  { from: "scheduled", to: "ready", by: "time came (tick)" },
  { from: "scheduled", to: "ready", by: "reschedule to now", action: "reschedule" },
  { from: "scheduled", to: "missed", by: "found past the missed tolerance" },
  { from: "scheduled", to: "cancelled", by: "cancel", action: "cancel" },
  { from: "ready", to: "ready", by: "reschedule to now", action: "reschedule" },
  { from: "ready", to: "scheduled", by: "reschedule", action: "reschedule" },
  { from: "ready", to: "processing", by: "claimed with a lease" },
  { from: "ready", to: "missed", by: "never started, past the missed tolerance" },
  { from: "ready", to: "cancelled", by: "cancel", action: "cancel" },
  { from: "processing", to: "published", by: "every item has a receipt" },
  { from: "processing", to: "ready", by: "transient failure, automatic retry" },
  { from: "processing", to: "ready", by: "recovery, idempotent network" },
  { from: "processing", to: "failed", by: "rejected content or retries exhausted" },
  { from: "processing", to: "needs-attention", by: "reauthorize or outcome unknown" },
  { from: "processing", to: "needs-attention", by: "recovery, other networks" },
  { from: "processing", to: "awaiting-provider", by: "network still processing" },
  { from: "processing", to: "awaiting-provider", by: "recovery, a status check that can run again" },
  { from: "awaiting-provider", to: "processing", by: "status check due, claimed with a lease" },
  { from: "failed", to: "ready", by: "retry", action: "retry" },
  { from: "failed", to: "ready", by: "reschedule to now", action: "reschedule" },
  { from: "failed", to: "scheduled", by: "reschedule", action: "reschedule" },
  { from: "needs-attention", to: "ready", by: "retry (acknowledge risk if unsafe)", action: "retry" },
  { from: "needs-attention", to: "ready", by: "reschedule to now", action: "reschedule" },
  { from: "needs-attention", to: "scheduled", by: "reschedule", action: "reschedule" },
  { from: "needs-attention", to: "cancelled", by: "cancel", action: "cancel" },
  { from: "missed", to: "ready", by: "retry", action: "retry" },
  { from: "missed", to: "ready", by: "reschedule to now", action: "reschedule" },
  { from: "missed", to: "scheduled", by: "reschedule", action: "reschedule" },
  { from: "missed", to: "cancelled", by: "cancel", action: "cancel" },
];

/** Whether the table allows a move (`from` null: a new post in `to`). */
export function isMoveAllowed(from: PostState | null, to: PostState): boolean {
  return POST_MOVES.some((m) => m.from === from && m.to === to);
}

/** The table as the mermaid diagram docs/posts.md shows (one arrow per pair, causes joined). */
export function postMovesDiagram(): string {
  const name = (s: PostState | null) => (s === null ? "[*]" : s.replace("-", "_"));
  const arrows = new Map<string, string[]>();
  for (const m of POST_MOVES) {
    const key = `${name(m.from)} --> ${name(m.to)}`;
    arrows.set(key, [...(arrows.get(key) ?? []), m.by]);
  }
  const lines = [...arrows].map(([arrow, causes]) => `    ${arrow}: ${causes.join(" / ")}`);
  return ["```mermaid", "stateDiagram-v2", ...lines, "```"].join("\n");
}

/** A move the table does not allow: a 409 `public_conflict` should a request ever reach one. */
export class PostMoveRefused extends ProblemError {
  constructor(
    readonly from: PostState | null,
    readonly to: PostState,
  ) {
    const detail = from === null ? `A new post cannot be ${to}.` : `A ${from} post cannot become ${to}.`;
    super("public_conflict", detail);
  }
}

/** States whose X post holds a reservation of the month of its scheduled time. */
const HOLDS_X_RESERVATION: ReadonlySet<string> = new Set<PostState>([
  "preparing",
  "scheduled",
  "ready",
  "processing",
  "awaiting-provider",
  "needs-attention",
]);

/** The month whose X reservation the post holds in its state, or null. */
function reservedMonth(row: Pick<PostRow, "channel" | "state" | "scheduledAt">): string | null {
  if (!isMetered(row.channel) || row.scheduledAt === null || !HOLDS_X_RESERVATION.has(row.state)) return null;
  return usageMonth(row.scheduledAt);
}

/** Fields a caller may set with a move (state, lease, version and updated_at are the door's own). */
export type PostChanges = Omit<
  Partial<PostRow>,
  "id" | "state" | "version" | "updatedAt" | "leaseOwner" | "leaseExpiresAt"
>;

/**
 * A non-state edit of a post still in `state` (and, with `leasedBy`, still leased by that owner);
 * false when it moved on or the lease was lost, in which case nothing is written.
 */
export async function editPostIfStill(
  tx: Db,
  id: string,
  expected: PostExpectation,
  changes: PostEdit,
): Promise<boolean> {
  return (await updatePostIfStill(tx, id, expected, changes)) !== null;
}

/** One move asked of `transitionPosts`. */
export interface PostMoveRequest {
  /** The post as the caller read it: its `state` is the expected one (the move's `from`). */
  post: PostRow;
  to: PostState;
  changes?: PostChanges;
  /** Required to enter `processing`: the lease the claiming process takes. */
  lease?: { owner: string; until: number };
  /** Engine runs: move only while this owner still holds the lease. */
  leasedBy?: string;
  /**
   * `post` was read in this transaction, locked (PostgreSQL's FOR UPDATE, or SQLite's write
   * transaction): it is the row as it is, and is not read again (the engine's claim).
   */
  current?: boolean;
  /**
   * Give back an X reservation and take it again for the new time even within one month, so the
   * monthly limit is checked again (reschedule). Otherwise a held reservation moves only when the
   * month changes.
   */
  reReserve?: boolean;
  /**
   * No event: the post returns to a state the user already heard about (a status check found the
   * network still processing the same item, so `awaiting-provider` again).
   */
  quiet?: boolean;
}

/**
 * Applies moves of the state table inside the caller's write transaction: refuses a move the table
 * does not allow (PostMoveRefused), writes each only if the post is still in its expected state
 * (and leased by `leasedBy`), sets the lease entering `processing` and clears it otherwise, keeps
 * a deferral only on a post entering `ready` whose caller sets one, releases, consumes or reserves
 * X usage (reservations of one month taken together, 402 with `xErrors` past the limit), and
 * writes the outbox event of the new state. Returns each post after its move, or null when it
 * had moved on (a lost race, not an error).
 */
export async function transitionPosts(args: {
  tx: Db;
  now: number;
  moves: PostMoveRequest[];
  /** The monthly X limit a reservation may not pass (`xMonthlyLimit(h.config)`). */
  xLimit: number;
  xErrors?: FieldError[];
}): Promise<(PostRow | null)[]> {
  const { tx, now, moves } = args;
  for (const m of moves) {
    const from = m.post.state as PostState;
    if (!isMoveAllowed(from, m.to)) throw new PostMoveRefused(from, m.to);
    if ((m.to === "processing") !== (m.lease !== undefined)) {
      throw new Error(`a lease is taken exactly when entering processing (${from} → ${m.to})`);
    }
  }
  const releases: string[] = [];
  const consumes: string[] = [];
  const reserves = new Map<string, { workspaceId: string; month: string; count: number }>();
  const results: (PostRow | null)[] = [];
  const claimed = isPostgres(tx) && moves.length > 1 ? await claimInOneUpdate(tx, moves, now) : null;
  if (claimed) for (const [i, m] of moves.entries()) results.push(bookkeep(m, m.post, claimed[i]!));
  // Otherwise one move at a time, in order: moves of one call may touch the same rows and counters.
  else for (const m of moves) results.push(await applyMove(m));
  async function applyMove(m: PostMoveRequest): Promise<PostRow | null> {
    const before = m.current ? m.post : await findPostById(tx, m.post.id);
    const expected: PostExpectation = { state: m.post.state, leasedBy: m.leasedBy };
    if (!before || before.state !== expected.state) return null;
    if (m.leasedBy !== undefined && before.leaseOwner !== m.leasedBy) return null;
    const intoReady = m.to === "ready";
    const after = await updatePostIfStill(tx, before.id, expected, {
      ...m.changes,
      state: m.to,
      leaseOwner: m.lease?.owner ?? null,
      leaseExpiresAt: m.lease?.until ?? null,
      deferredReason: intoReady ? (m.changes?.deferredReason ?? null) : null,
      deferredUntil: intoReady ? (m.changes?.deferredUntil ?? null) : null,
      updatedAt: now,
    });
    return bookkeep(m, before, after);
  }
  /** The X usage a move releases, consumes or reserves (written after every move). */
  function bookkeep(m: PostMoveRequest, before: PostRow, after: PostRow | null): PostRow | null {
    if (!after) return null;
    const was = reservedMonth(before);
    const will = reservedMonth(after);
    const moved = was !== will || m.reReserve === true;
    if (was !== null && after.state === "published") consumes.push(`${before.workspaceId}|${was}`);
    else if (was !== null && moved) releases.push(`${before.workspaceId}|${was}`);
    if (will !== null && moved) {
      const key = `${after.workspaceId}|${will}`;
      const entry = reserves.get(key) ?? { workspaceId: after.workspaceId, month: will, count: 0 };
      reserves.set(key, { ...entry, count: entry.count + 1 });
    }
    return after;
  }
  for (const key of releases) await releaseXUsage(tx, ...splitKey(key));
  for (const key of consumes) await consumeXUsage(tx, ...splitKey(key));
  const xErrors = args.xErrors ?? [];
  for (const r of reserves.values()) await reserveXUsage(tx, { ...r, limit: args.xLimit }, xErrors);
  for (const [i, after] of results.entries()) {
    if (!after) continue;
    // A published post starts its analytics (read on a cadence from now on).
    if (after.state === "published") await insertPostAnalytics(tx, after, after.publishedAt ?? now);
    if (!moves[i]!.quiet) await recordPostEvent(tx, after, now);
  }
  return results;
}

/**
 * The engine's claim on PostgreSQL: moves that all take locked rows this transaction read
 * (`current`) into `processing` with one lease, changing nothing but the attempt count, in one
 * UPDATE instead of one per post. Each post's row after (null if it moved on, as `applyMove`);
 * null when the moves are anything else.
 */
async function claimInOneUpdate(
  tx: Db,
  moves: PostMoveRequest[],
  now: number,
): Promise<(PostRow | null)[] | null> {
  const lease = moves[0]!.lease;
  const claim = (m: PostMoveRequest) =>
    m.current === true &&
    m.to === "processing" &&
    m.lease?.owner === lease?.owner &&
    m.lease?.until === lease?.until &&
    m.leasedBy === undefined &&
    m.reReserve === undefined &&
    Object.keys(m.changes ?? {}).every((k) => k === "attemptCount");
  if (!lease || !moves.every(claim) || new Set(moves.map((m) => m.post.id)).size !== moves.length)
    return null;
  const claims = moves.map((m) => ({
    id: m.post.id,
    from: m.post.state,
    attemptCount: m.changes?.attemptCount ?? m.post.attemptCount,
  }));
  const after = new Map((await claimLockedPosts(tx, claims, lease, now)).map((row) => [row.id, row]));
  return moves.map((m) => after.get(m.post.id) ?? null);
}

function splitKey(key: string): [string, string] {
  const at = key.lastIndexOf("|");
  return [key.slice(0, at), key.slice(at + 1)];
}

/** One move of the table (see `transitionPosts`): the post after it, or null when it had moved on. */
export async function transitionPost(
  args: { tx: Db; now: number; xLimit: number; xErrors?: FieldError[] } & PostMoveRequest,
): Promise<PostRow | null> {
  const { tx, now, xLimit, xErrors, ...move } = args;
  return (await transitionPosts({ tx, now, xLimit, xErrors, moves: [move] }))[0]!;
}

/**
 * Stores new posts inside the caller's write transaction: each must start in a state the table
 * allows for a new post, without lease or deferral; X posts reserve their scheduled month (taken
 * together per month, 402 with `xErrors` past the limit). New posts' states have no events.
 * `unlessTaken` (posts that reserve nothing): a post a unique index refuses is left out instead of
 * failing the transaction; the posts stored are returned.
 */
export async function enterPosts(args: {
  tx: Db;
  rows: PostRow[];
  xLimit: number;
  xErrors?: FieldError[];
  unlessTaken?: boolean;
}): Promise<PostRow[]> {
  const { tx, rows } = args;
  const months = new Map<string, { workspaceId: string; month: string; count: number }>();
  for (const row of rows) {
    if (!isMoveAllowed(null, row.state as PostState)) throw new PostMoveRefused(null, row.state as PostState);
    if (row.leaseOwner !== null || row.deferredReason !== null) {
      throw new Error("a new post has no lease and no deferral");
    }
    const month = reservedMonth(row);
    if (month === null) continue;
    if (args.unlessTaken) throw new Error("a post that reserves X usage cannot be entered unless taken");
    const key = `${row.workspaceId}|${month}`;
    const entry = months.get(key) ?? { workspaceId: row.workspaceId, month, count: 0 };
    months.set(key, { ...entry, count: entry.count + 1 });
  }
  const xErrors = args.xErrors ?? [];
  for (const r of months.values()) await reserveXUsage(tx, { ...r, limit: args.xLimit }, xErrors);
  if (!args.unlessTaken) {
    for (const row of rows) await insertPost(tx, row);
    return rows;
  }
  const stored: PostRow[] = [];
  for (const row of rows) if (await insertPostUnlessTaken(tx, row)) stored.push(row);
  return stored;
}
