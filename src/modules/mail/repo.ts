// The mail outbox's rows (`mail_outbox`): messages queued with the write that causes them.
import { and, asc, eq, gt, like, lte } from "drizzle-orm";
import { countAll, skipLocked } from "../../db/dialect.ts";
import { firstRow } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";

/** One queued message. */
export type MailRow = Tables["mailOutbox"]["$inferSelect"];

/** Stores a queued message. */
export async function insertMail(db: Db, row: Tables["mailOutbox"]["$inferInsert"]): Promise<void> {
  const { mailOutbox } = tablesOf(db);
  await db.insert(mailOutbox).values(row);
}

/** Messages still waiting to be sent. */
export async function countPendingMail(db: Db): Promise<number> {
  const { mailOutbox } = tablesOf(db);
  const row = await db
    .select({ n: countAll() })
    .from(mailOutbox)
    .where(eq(mailOutbox.status, "pending"))
    .then(firstRow);
  return row?.n ?? 0;
}

/**
 * Claims the message due first: its next attempt moves to `leaseUntil`, so another process (which
 * skips rows being claimed on PostgreSQL) does not take it too. Call in a transaction.
 */
export async function claimDueMail(db: Db, now: number, leaseUntil: number): Promise<MailRow | undefined> {
  const { mailOutbox } = tablesOf(db);
  const query = db
    .select()
    .from(mailOutbox)
    .where(and(eq(mailOutbox.status, "pending"), lte(mailOutbox.nextAttemptAt, now)))
    .orderBy(asc(mailOutbox.nextAttemptAt), asc(mailOutbox.id))
    .limit(1);
  const message = await skipLocked(db, query).then(firstRow);
  if (!message) return undefined;
  await db.update(mailOutbox).set({ nextAttemptAt: leaseUntil }).where(eq(mailOutbox.id, message.id));
  return message;
}

/** Changes a message's columns. */
export async function updateMail(db: Db, id: string, changes: Partial<MailRow>): Promise<void> {
  const { mailOutbox } = tablesOf(db);
  await db.update(mailOutbox).set(changes).where(eq(mailOutbox.id, id));
}

/**
 * Messages whose kept text still holds `://`, after the message `afterId` (in id order): rows queued
 * before texts were sealed, and the few whose `://` is no link (e.g. `http:// ` with nothing after),
 * which rewriting leaves as they are; the cursor is what lets a run over them end.
 */
export async function findMailWithLinks(db: Db, afterId: string, limit: number): Promise<MailRow[]> {
  const { mailOutbox } = tablesOf(db);
  return db
    .select()
    .from(mailOutbox)
    .where(and(like(mailOutbox.textBody, "%://%"), gt(mailOutbox.id, afterId)))
    .orderBy(asc(mailOutbox.id))
    .limit(limit);
}
