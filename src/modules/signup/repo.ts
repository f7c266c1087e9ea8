import { and, asc, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import { runPrepared } from "../../db/prepared.ts";
import { firstRow } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import { forgetCredentials } from "../keys/credential-cache.ts";

/** A stored signup intent. */
export type SignupIntentRow = Tables["signupIntents"]["$inferSelect"];

/** A stored e-mail confirmation. */
export type EmailConfirmationRow = Tables["emailConfirmations"]["$inferSelect"];

/** Stores a new signup intent (call inside a transaction). */
export async function insertSignupIntent(db: Db, row: SignupIntentRow): Promise<void> {
  const { signupIntents } = tablesOf(db);
  await db.insert(signupIntents).values(row);
}

/** The intent whose page token hashes to `tokenHash`, whatever its state. */
export async function findSignupIntentByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<SignupIntentRow | undefined> {
  const { signupIntents } = tablesOf(db);
  return db.select().from(signupIntents).where(eq(signupIntents.tokenHash, tokenHash)).then(firstRow);
}

/** Marks an intent completed by the account it made; false when another request completed it first. */
export async function markSignupCompleted(
  db: Db,
  id: string,
  accountId: string,
  at: number,
): Promise<boolean> {
  const { signupIntents } = tablesOf(db);
  const changed = await db
    .update(signupIntents)
    .set({ completedAt: at, accountId })
    .where(and(eq(signupIntents.id, id), isNull(signupIntents.completedAt)))
    .returning({ id: signupIntents.id });
  return changed.length === 1;
}

/** Deletes intents that expired before `before` (at most `limit`, oldest first). */
export async function deleteExpiredSignupIntents(db: Db, before: number, limit: number): Promise<void> {
  const { signupIntents } = tablesOf(db);
  const old = await db
    .select({ id: signupIntents.id })
    .from(signupIntents)
    .where(lt(signupIntents.expiresAt, before))
    .orderBy(asc(signupIntents.expiresAt))
    .limit(limit);
  if (old.length === 0) return;
  await db.delete(signupIntents).where(
    inArray(
      signupIntents.id,
      old.map((row) => row.id),
    ),
  );
}

/** Stores a new e-mail confirmation (call inside a transaction). */
export async function insertEmailConfirmation(db: Db, row: EmailConfirmationRow): Promise<void> {
  const { emailConfirmations } = tablesOf(db);
  await db.insert(emailConfirmations).values(row);
  forgetCredentials(db);
}

/** The confirmation whose link token hashes to `tokenHash`. */
export async function findEmailConfirmationByTokenHash(
  db: Db,
  tokenHash: string,
): Promise<EmailConfirmationRow | undefined> {
  const { emailConfirmations } = tablesOf(db);
  return db
    .select()
    .from(emailConfirmations)
    .where(eq(emailConfirmations.tokenHash, tokenHash))
    .then(firstRow);
}

/** Whether a user has an unconfirmed address (any unconfirmed row: confirming marks them all). */
export async function hasUnconfirmedAddress(db: Db, userId: string): Promise<boolean> {
  const { emailConfirmations } = tablesOf(db);
  const row = await db
    .select({ id: emailConfirmations.id })
    .from(emailConfirmations)
    .where(and(eq(emailConfirmations.userId, userId), isNull(emailConfirmations.confirmedAt)))
    .limit(1)
    .then(firstRow);
  return row !== undefined;
}

/** Marks every unconfirmed row of a user confirmed (older links and resent ones alike). */
export async function markAddressConfirmed(db: Db, userId: string, at: number): Promise<void> {
  const { emailConfirmations } = tablesOf(db);
  await db
    .update(emailConfirmations)
    .set({ confirmedAt: at })
    .where(and(eq(emailConfirmations.userId, userId), isNull(emailConfirmations.confirmedAt)));
  forgetCredentials(db);
}

/** Whether an account has an unconfirmed address (its owner signed up and has not confirmed yet). */
export async function hasUnconfirmedAccount(db: Db, accountId: string): Promise<boolean> {
  const { emailConfirmations } = tablesOf(db);
  // Prepared: every write of an account asks (requireConfirmedAccount).
  const row = await runPrepared(
    db,
    "unconfirmed_account",
    (d) =>
      d
        .select({ id: emailConfirmations.id })
        .from(emailConfirmations)
        .where(
          and(
            eq(emailConfirmations.accountId, sql.placeholder("accountId")),
            isNull(emailConfirmations.confirmedAt),
          ),
        )
        .limit(1),
    { accountId },
  ).then(firstRow);
  return row !== undefined;
}

/**
 * Accounts whose address waits for confirmation and that were created before `before` (oldest first,
 * at most `limit`): the unconfirmed-accounts job's work.
 */
export async function listUnconfirmedAccountsCreatedBefore(
  db: Db,
  before: number,
  limit: number,
): Promise<string[]> {
  const { emailConfirmations, accounts } = tablesOf(db);
  const rows = await db
    .selectDistinct({ id: accounts.id, createdAt: accounts.createdAt })
    .from(accounts)
    .innerJoin(emailConfirmations, eq(emailConfirmations.accountId, accounts.id))
    .where(and(isNull(emailConfirmations.confirmedAt), lt(accounts.createdAt, before)))
    .orderBy(asc(accounts.createdAt), asc(accounts.id))
    .limit(limit);
  return rows.map((row) => row.id);
}

/** When an account was created (null when it does not exist). */
export async function accountCreatedAt(db: Db, accountId: string): Promise<number | null> {
  const { accounts } = tablesOf(db);
  const row = await db
    .select({ createdAt: accounts.createdAt })
    .from(accounts)
    .where(eq(accounts.id, accountId))
    .then(firstRow);
  return row?.createdAt ?? null;
}
