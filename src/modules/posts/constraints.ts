import type { Db } from "../../db/open.ts";
import { inLockedTransaction, inTransaction } from "../../db/transaction.ts";
import { ProblemError } from "../../core/problem.ts";

// The posts' unique indexes as each engine names them: SQLite lists the columns ("UNIQUE constraint
// failed: …"), PostgreSQL the index ("duplicate key value violates unique constraint "…"").
const QUEUE_SLOT = [
  "posts.destination_id, posts.queue_window_id, posts.queue_local_date",
  '"posts_one_live_post_per_queue_slot"',
];
const GROUP_DRAFT = [
  "posts.workspace_id, posts.group_key, posts.channel",
  '"posts_one_draft_per_group_channel"',
];
const UNIQUE_VIOLATION = /UNIQUE constraint failed|duplicate key value violates unique constraint/;

/** The 409 problem for a unique index of posts that fired (queue slot, group draft), else null. */
export function problemOfConstraint(error: unknown): ProblemError | null {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (!UNIQUE_VIOLATION.test(e.message)) continue;
    if (QUEUE_SLOT.some((name) => e.message.includes(name))) {
      const detail = "Another request took this queue window for the destination at the same time.";
      const problem = new ProblemError("public_conflict", detail, {
        errors: [{ pointer: "/when", code: "custom", detail: "taken meanwhile; send the request again" }],
      });
      // The window was read free in this transaction: on PostgreSQL it is run again (another window
      // is found) like a serialization failure, which its plan may report this way instead.
      return Object.assign(problem, { concurrentWriter: true });
    }
    if (GROUP_DRAFT.some((name) => e.message.includes(name))) {
      const detail = "The group already holds a draft for this channel; update or publish it first.";
      return new ProblemError("public_post_group_channel_conflict", detail, {
        errors: [{ pointer: "/posts", code: "custom", detail: "another request made this channel's draft" }],
      });
    }
  }
  return null;
}

/**
 * `inTransaction` for writes of posts: a unique index of posts that fires answers 409, never 500.
 * `locked`: the work's invariants are held by indexes and row locks (`inLockedTransaction`).
 */
export async function inPostsTransaction<T>(
  db: Db,
  work: (tx: Db) => Promise<T> | T,
  locked = false,
): Promise<T> {
  try {
    return await (locked ? inLockedTransaction : inTransaction)(db, work);
  } catch (error) {
    throw problemOfConstraint(error) ?? error;
  }
}
