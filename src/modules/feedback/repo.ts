// Feedback messages (`feedback`): kept whether or not their e-mail went out.
import { eq } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";

/** A stored feedback message. */
export type FeedbackRow = Tables["feedback"]["$inferSelect"];

/** Stores a new message. */
export async function insertFeedback(db: Db, row: Tables["feedback"]["$inferInsert"]): Promise<void> {
  const { feedback } = tablesOf(db);
  await db.insert(feedback).values(row);
}

/** Changes a message's columns (its e-mail's outcome). */
export async function updateFeedback(db: Db, id: string, changes: Partial<FeedbackRow>): Promise<void> {
  const { feedback } = tablesOf(db);
  await db.update(feedback).set(changes).where(eq(feedback.id, id));
}
