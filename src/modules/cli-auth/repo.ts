import { and, asc, desc, eq, gt, inArray, lt, notExists } from "drizzle-orm";
import { firstRow } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";

/** A stored CLI authorization. */
export type CliAuthorizationRow = Tables["cliAuthorizations"]["$inferSelect"];

/** Stores a new authorization (call inside a transaction). */
export async function insertCliAuthorization(db: Db, row: CliAuthorizationRow): Promise<void> {
  const { cliAuthorizations } = tablesOf(db);
  await db.insert(cliAuthorizations).values(row);
}

/** The authorization a device secret belongs to (by the secret's hash), whatever its state. */
export async function findCliAuthorizationBySecretHash(
  db: Db,
  secretHash: string,
): Promise<CliAuthorizationRow | undefined> {
  const { cliAuthorizations } = tablesOf(db);
  return db
    .select()
    .from(cliAuthorizations)
    .where(eq(cliAuthorizations.deviceSecretHash, secretHash))
    .then(firstRow);
}

/** The newest unexpired authorization with this user code (by the code's hash), whatever its state. */
export async function findLiveCliAuthorizationByCode(
  db: Db,
  userCodeHash: string,
  now: number,
): Promise<CliAuthorizationRow | undefined> {
  const { cliAuthorizations } = tablesOf(db);
  return db
    .select()
    .from(cliAuthorizations)
    .where(and(eq(cliAuthorizations.userCodeHash, userCodeHash), gt(cliAuthorizations.expiresAt, now)))
    .orderBy(desc(cliAuthorizations.id))
    .limit(1)
    .then(firstRow);
}

/** An authorization by id. */
export async function findCliAuthorization(db: Db, id: string): Promise<CliAuthorizationRow | undefined> {
  const { cliAuthorizations } = tablesOf(db);
  return db.select().from(cliAuthorizations).where(eq(cliAuthorizations.id, id)).then(firstRow);
}

/** Records a poll: when, and the interval the next one must wait. */
export async function recordPoll(db: Db, id: string, at: number, intervalSeconds: number): Promise<void> {
  const { cliAuthorizations } = tablesOf(db);
  await db
    .update(cliAuthorizations)
    .set({ lastPolledAt: at, intervalSeconds })
    .where(eq(cliAuthorizations.id, id));
}

/**
 * Approves or denies a pending authorization; false when it was not pending any more (decided by
 * someone else meanwhile).
 */
export async function decidePending(
  db: Db,
  id: string,
  decision: {
    status: "approved" | "denied";
    accountId: string;
    userId: string;
    workspaceId: string | null;
    at: number;
  },
): Promise<boolean> {
  const { cliAuthorizations } = tablesOf(db);
  const changed = await db
    .update(cliAuthorizations)
    .set({
      status: decision.status,
      accountId: decision.accountId,
      userId: decision.userId,
      workspaceId: decision.workspaceId,
      decidedAt: decision.at,
    })
    .where(and(eq(cliAuthorizations.id, id), eq(cliAuthorizations.status, "pending")))
    .returning({ id: cliAuthorizations.id });
  return changed.length === 1;
}

/** Marks an approved authorization exchanged with the key made for it; false when it was not approved. */
export async function markExchanged(db: Db, id: string, credentialId: string, at: number): Promise<boolean> {
  const { cliAuthorizations } = tablesOf(db);
  const changed = await db
    .update(cliAuthorizations)
    .set({ status: "exchanged", credentialId, exchangedAt: at })
    .where(and(eq(cliAuthorizations.id, id), eq(cliAuthorizations.status, "approved")))
    .returning({ id: cliAuthorizations.id });
  return changed.length === 1;
}

/**
 * Deletes authorizations that expired before `before` (at most `limit`, oldest first), except those a
 * signup intent still references (they go once the intent has gone).
 */
export async function deleteExpiredCliAuthorizations(db: Db, before: number, limit: number): Promise<void> {
  const { cliAuthorizations, signupIntents } = tablesOf(db);
  const referenced = db
    .select({ id: signupIntents.id })
    .from(signupIntents)
    .where(eq(signupIntents.cliAuthorizationId, cliAuthorizations.id));
  const old = await db
    .select({ id: cliAuthorizations.id })
    .from(cliAuthorizations)
    .where(and(lt(cliAuthorizations.expiresAt, before), notExists(referenced)))
    .orderBy(asc(cliAuthorizations.expiresAt))
    .limit(limit);
  if (old.length === 0) return;
  await db.delete(cliAuthorizations).where(
    inArray(
      cliAuthorizations.id,
      old.map((row) => row.id),
    ),
  );
}

/** An account's workspaces, oldest first (the first is the one a new credential names by default). */
export async function listAccountWorkspacesOldestFirst(db: Db, accountId: string) {
  const { workspaces } = tablesOf(db);
  return db
    .select({ id: workspaces.id, name: workspaces.name })
    .from(workspaces)
    .where(eq(workspaces.accountId, accountId))
    .orderBy(asc(workspaces.id));
}
