import { and, asc, eq, inArray, isNull, lt } from "drizzle-orm";
import { firstRow } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";

/** A stored password reset link (its token only as a hash). */
export type PasswordResetRow = Tables["passwordResets"]["$inferSelect"];

/** Stores a new reset link (call inside a transaction). */
export async function insertPasswordReset(db: Db, row: PasswordResetRow): Promise<void> {
  const { passwordResets } = tablesOf(db);
  await db.insert(passwordResets).values(row);
}

/** The reset link whose token hashes to `tokenHash`, whatever its state. */
export async function findPasswordResetByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<PasswordResetRow | undefined> {
  const { passwordResets } = tablesOf(db);
  return db.select().from(passwordResets).where(eq(passwordResets.tokenHash, tokenHash)).then(firstRow);
}

/** Marks one link used; false when another request used it first. */
export async function markPasswordResetUsed(db: Db, id: string, at: number): Promise<boolean> {
  const { passwordResets } = tablesOf(db);
  const changed = await db
    .update(passwordResets)
    .set({ usedAt: at })
    .where(and(eq(passwordResets.id, id), isNull(passwordResets.usedAt)))
    .returning({ id: passwordResets.id });
  return changed.length === 1;
}

/** Ends every unused link of a person (a new password makes the other links worthless). */
export async function endOpenPasswordResets(db: Db, userId: string, at: number): Promise<void> {
  const { passwordResets } = tablesOf(db);
  await db
    .update(passwordResets)
    .set({ usedAt: at })
    .where(and(eq(passwordResets.userId, userId), isNull(passwordResets.usedAt)));
}

/** Deletes links that expired before `before` (at most `limit`, oldest first), so the table stays small. */
export async function deleteExpiredPasswordResets(db: Db, before: number, limit: number): Promise<void> {
  const { passwordResets } = tablesOf(db);
  const old = await db
    .select({ id: passwordResets.id })
    .from(passwordResets)
    .where(lt(passwordResets.expiresAt, before))
    .orderBy(asc(passwordResets.expiresAt))
    .limit(limit);
  if (old.length === 0) return;
  await db.delete(passwordResets).where(
    inArray(
      passwordResets.id,
      old.map((row) => row.id),
    ),
  );
}

/** Replaces a person's password hash (Argon2id, made outside the transaction). */
export async function setUserPasswordHash(db: Db, userId: string, passwordHash: string): Promise<void> {
  const { users } = tablesOf(db);
  await db.update(users).set({ passwordHash }).where(eq(users.id, userId));
}

/** The person a link belongs to: their address and their account's name (what their password must not be). */
export async function findResetPerson(
  db: Db,
  userId: string,
): Promise<{ id: string; email: string; accountId: string; accountName: string } | undefined> {
  const { accounts, users } = tablesOf(db);
  return db
    .select({ id: users.id, email: users.email, accountId: users.accountId, accountName: accounts.name })
    .from(users)
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .where(eq(users.id, userId))
    .then(firstRow);
}
