// The first comments' receipts (`comment_receipts`): written due with a post's published outcome,
// claimed by a lease like a post, and finished as published or failed.
import { and, eq, inArray, isNull, lt, lte, or } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";

/** A first comment's receipt and its work state. */
export type CommentReceiptRow = Tables["commentReceipts"]["$inferSelect"];

/** What finishing or rescheduling a comment changes. */
export type CommentReceiptEdit = Partial<Omit<CommentReceiptRow, "id" | "postId" | "createdAt">>;

/** Stores a post's first comment, due now (inside the transaction that publishes the post). */
export async function insertCommentReceipt(db: Db, row: CommentReceiptRow): Promise<void> {
  const { commentReceipts } = tablesOf(db);
  await db.insert(commentReceipts).values(row);
}

/** The first-comment receipts of these posts. */
export async function listCommentReceipts(db: Db, postIds: string[]): Promise<CommentReceiptRow[]> {
  if (postIds.length === 0) return [];
  const { commentReceipts } = tablesOf(db);
  return db.select().from(commentReceipts).where(inArray(commentReceipts.postId, postIds));
}

/** The post's first-comment receipt, if it has one. */
export async function findCommentReceipt(db: Db, postId: string): Promise<CommentReceiptRow | undefined> {
  return (await listCommentReceipts(db, [postId]))[0];
}

/** Comments due now that no live process holds (a lease that ran out is a process that died). */
export async function listDueComments(db: Db, now: number, limit: number): Promise<CommentReceiptRow[]> {
  const { commentReceipts: c } = tablesOf(db);
  return db
    .select()
    .from(c)
    .where(
      and(
        eq(c.state, "pending"),
        lte(c.nextAttemptAt, now),
        or(isNull(c.leaseExpiresAt), lt(c.leaseExpiresAt, now)),
      ),
    )
    .limit(limit);
}

/**
 * Takes a due comment for `owner` until `until` (a conditional update: one process wins); the row as
 * claimed, or null when it is not due or another process holds it.
 */
export async function claimComment(
  db: Db,
  id: string,
  owner: string,
  now: number,
  until: number,
): Promise<CommentReceiptRow | null> {
  const { commentReceipts: c } = tablesOf(db);
  const rows = await db
    .update(c)
    .set({ leaseOwner: owner, leaseExpiresAt: until })
    .where(
      and(
        eq(c.id, id),
        eq(c.state, "pending"),
        lte(c.nextAttemptAt, now),
        or(isNull(c.leaseExpiresAt), lt(c.leaseExpiresAt, now)),
      ),
    )
    .returning();
  return rows[0] ?? null;
}

/** Edits a comment this process holds; false when its lease went to another process. */
export async function updateLeasedComment(
  db: Db,
  id: string,
  owner: string,
  changes: CommentReceiptEdit,
): Promise<boolean> {
  const { commentReceipts: c } = tablesOf(db);
  const rows = await db
    .update(c)
    .set(changes)
    .where(and(eq(c.id, id), eq(c.leaseOwner, owner), eq(c.state, "pending")))
    .returning({ id: c.id });
  return rows.length === 1;
}

/**
 * A failed comment due again now (a person's retry); false when it is not failed. `sendBlind`: the
 * person accepted a possible second comment, so an unanswered call is not looked up first.
 */
export async function requeueFailedComment(
  db: Db,
  postId: string,
  now: number,
  sendBlind: boolean,
): Promise<boolean> {
  const { commentReceipts: c } = tablesOf(db);
  const rows = await db
    .update(c)
    .set({
      state: "pending",
      error: null,
      attempts: 0,
      nextAttemptAt: now,
      leaseOwner: null,
      leaseExpiresAt: null,
      ...(sendBlind ? { callStartedAt: null } : {}),
    })
    .where(and(eq(c.postId, postId), eq(c.state, "failed")))
    .returning({ id: c.id });
  return rows.length === 1;
}
