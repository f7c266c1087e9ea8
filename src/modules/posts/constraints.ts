import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import { ProblemError } from "../../core/problem.ts";

// The columns of the posts' unique indexes, as SQLite names them in "UNIQUE constraint failed: …".
const QUEUE_SLOT = "posts.destination_id, posts.queue_window_id, posts.queue_local_date";
const GROUP_DRAFT = "posts.workspace_id, posts.group_key, posts.channel";

/** The 409 problem for a unique index of posts that fired (queue slot, group draft), else null. */
export function problemOfConstraint(error: unknown): ProblemError | null {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (!e.message.includes("UNIQUE constraint failed")) continue;
    if (e.message.includes(QUEUE_SLOT)) {
      const detail = "Another request took this queue window for the destination at the same time.";
      return new ProblemError("public_conflict", detail, {
        errors: [{ pointer: "/when", code: "custom", detail: "taken meanwhile; send the request again" }],
      });
    }
    if (e.message.includes(GROUP_DRAFT)) {
      const detail = "The group already holds a draft for this channel; update or publish it first.";
      return new ProblemError("public_post_group_channel_conflict", detail, {
        errors: [{ pointer: "/posts", code: "custom", detail: "another request made this channel's draft" }],
      });
    }
  }
  return null;
}

/** `inTransaction` for writes of posts: a unique index of posts that fires answers 409, never 500. */
export async function inPostsTransaction<T>(db: Db, work: (tx: Db) => Promise<T> | T): Promise<T> {
  try {
    return await inTransaction(db, work);
  } catch (error) {
    throw problemOfConstraint(error) ?? error;
  }
}
