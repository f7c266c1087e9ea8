import { and, desc, eq, gt, isNull, lt } from "drizzle-orm";
import { firstRow } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";

/** A stored session. */
export type SessionRow = Tables["sessions"]["$inferSelect"];

/** Stores a new session (call inside a transaction). */
export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  const { sessions } = tablesOf(db);
  await db.insert(sessions).values(row);
}

/** The session whose token hashes to `tokenHash`, unless revoked or expired, with its user and account. */
export async function findLiveSession(db: Db, tokenHash: string, now: number) {
  const { accounts, sessions, users } = tablesOf(db);
  return db
    .select({ session: sessions, email: users.email, role: users.role, accountName: accounts.name })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .innerJoin(accounts, eq(accounts.id, sessions.accountId))
    .where(and(eq(sessions.tokenHash, tokenHash), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
    .then(firstRow);
}

/** Marks a session revoked (an earlier revocation time is kept). */
export async function markSessionRevoked(db: Db, id: string, at: number): Promise<void> {
  const { sessions } = tablesOf(db);
  await db
    .update(sessions)
    .set({ revokedAt: at })
    .where(and(eq(sessions.id, id), isNull(sessions.revokedAt)));
}

/** Deletes a user's sessions that ended (expired) before `before`, so a user's rows do not pile up. */
export async function deleteEndedSessions(db: Db, userId: string, before: number): Promise<void> {
  const { sessions } = tablesOf(db);
  await db.delete(sessions).where(and(eq(sessions.userId, userId), lt(sessions.expiresAt, before)));
}

/** A user's sessions that are neither revoked nor expired, newest first. */
export async function listLiveSessions(db: Db, userId: string, now: number): Promise<SessionRow[]> {
  const { sessions } = tablesOf(db);
  return db
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, now)))
    .orderBy(desc(sessions.createdAt));
}

/** Revokes every live session of a user ("sign out everywhere"); returns how many ended. */
export async function revokeUserSessions(db: Db, userId: string, at: number): Promise<number> {
  const { sessions } = tablesOf(db);
  const ended = await db
    .update(sessions)
    .set({ revokedAt: at })
    .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt), gt(sessions.expiresAt, at)))
    .returning({ id: sessions.id });
  return ended.length;
}
