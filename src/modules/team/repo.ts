import { and, desc, eq, inArray, isNotNull, isNull, lt, or, type SQL } from "drizzle-orm";
import { countAll } from "../../db/dialect.ts";
import { firstRow } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf } from "../../db/tables.ts";
import { forgetCredentials } from "../keys/credential-cache.ts";
import type { UserRow } from "../account/repo.ts";

/** One page (plus one row) of an account's people, newest first (user ids are time-ordered). */
export async function listMembersPage(
  db: Db,
  accountId: string,
  afterId: string | null,
  limit: number,
): Promise<UserRow[]> {
  const { users } = tablesOf(db);
  const conditions: SQL[] = [eq(users.accountId, accountId)];
  if (afterId !== null) conditions.push(lt(users.id, afterId));
  return db
    .select()
    .from(users)
    .where(and(...conditions))
    .orderBy(desc(users.id))
    .limit(limit + 1);
}

/** A person of the account by id (someone of another account is not found). */
export async function findMember(db: Db, accountId: string, id: string): Promise<UserRow | undefined> {
  const { users } = tablesOf(db);
  return db
    .select()
    .from(users)
    .where(and(eq(users.accountId, accountId), eq(users.id, id)))
    .then(firstRow);
}

/** How many owners the account has. */
export async function countOwners(db: Db, accountId: string): Promise<number> {
  const { users } = tablesOf(db);
  const row = await db
    .select({ n: countAll() })
    .from(users)
    .where(and(eq(users.accountId, accountId), eq(users.role, "owner")))
    .then(firstRow);
  return row?.n ?? 0;
}

/**
 * The live keys a person holds: those they created in the dashboard and those their `herald login`
 * approvals minted.
 */
export async function listKeysHeldBy(
  db: Db,
  accountId: string,
  userId: string,
): Promise<{ id: string; kind: string }[]> {
  const { apiKeys, cliAuthorizations } = tablesOf(db);
  const viaCli = await db
    .select({ id: cliAuthorizations.credentialId })
    .from(cliAuthorizations)
    .where(and(eq(cliAuthorizations.userId, userId), isNotNull(cliAuthorizations.credentialId)));
  const cliIds = viaCli.map((r) => r.id!).filter(Boolean);
  const held =
    cliIds.length > 0 ? or(eq(apiKeys.createdByUserId, userId), inArray(apiKeys.id, cliIds)) : null;
  const rows = await db
    .select({ id: apiKeys.id, kind: apiKeys.kind })
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.accountId, accountId),
        isNull(apiKeys.revokedAt),
        held ?? eq(apiKeys.createdByUserId, userId),
      ),
    );
  return rows;
}

/**
 * Deletes a person and what only made sense with them, inside the caller's transaction: their
 * sessions (every signed-in browser is signed out) and address confirmations; the keys they held are
 * revoked by the caller first. Rows that are history keep existing without the person: keys forget
 * their creator, CLI authorizations their approver (one approved but not yet exchanged is denied, so
 * no key is minted for someone who left).
 */
export async function deleteMember(db: Db, userId: string, now: number): Promise<void> {
  const { apiKeys, cliAuthorizations, emailConfirmations, sessions, users } = tablesOf(db);
  await db.delete(sessions).where(eq(sessions.userId, userId));
  await db.delete(emailConfirmations).where(eq(emailConfirmations.userId, userId));
  forgetCredentials(db);
  await db.update(apiKeys).set({ createdByUserId: null }).where(eq(apiKeys.createdByUserId, userId));
  await db
    .update(cliAuthorizations)
    .set({ status: "denied", decidedAt: now })
    .where(and(eq(cliAuthorizations.userId, userId), eq(cliAuthorizations.status, "approved")));
  await db.update(cliAuthorizations).set({ userId: null }).where(eq(cliAuthorizations.userId, userId));
  await db.delete(users).where(eq(users.id, userId));
}
