import { and, eq, lt, sql } from "drizzle-orm";
import { insertRow, runPrepared } from "../../db/prepared.ts";
import type { BatchDelete } from "../../db/batch-delete.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import { firstRow } from "../../db/engine.ts";

/** A stored idempotency key. */
export type IdempotencyRow = Tables["idempotencyKeys"]["$inferSelect"];

/** The key row of an account, if any. */
export async function findIdempotencyKey(
  db: Db,
  accountId: string,
  key: string,
): Promise<IdempotencyRow | undefined> {
  const { idempotencyKeys } = tablesOf(db);
  return runPrepared(
    db,
    "idempotency_key",
    (d) =>
      d
        .select()
        .from(idempotencyKeys)
        .where(
          and(
            eq(idempotencyKeys.accountId, sql.placeholder("accountId")),
            eq(idempotencyKeys.key, sql.placeholder("key")),
          ),
        ),
    { accountId, key },
  ).then(firstRow);
}

/**
 * Marks a key as taken by a request that is now running, unless the account already holds it: true
 * when this call took it. One statement that also answers the common case (a new key); when another
 * transaction is inserting the same key, PostgreSQL waits for it and then reports the key as held
 * (READ COMMITTED), or fails with a serialization error that is retried (SERIALIZABLE).
 */
export async function claimIdempotencyKey(
  db: Db,
  row: { accountId: string; key: string; requestHash: string; createdAt: number; expiresAt: number },
): Promise<boolean> {
  const { idempotencyKeys } = tablesOf(db);
  const value = (name: string) => sql`${sql.placeholder(name)}`;
  const taken = await runPrepared(
    db,
    "claim_idempotency_key",
    (d) =>
      d
        .insert(idempotencyKeys)
        .values({
          accountId: value("accountId"),
          key: value("key"),
          requestHash: value("requestHash"),
          state: "in_flight",
          createdAt: value("createdAt"),
          expiresAt: value("expiresAt"),
        })
        .onConflictDoNothing()
        .returning({ key: idempotencyKeys.key }),
    row,
  );
  return taken.length === 1;
}

/** Marks a key as taken by a request that is now running. */
export async function insertInFlightKey(
  db: Db,
  row: { accountId: string; key: string; requestHash: string; createdAt: number; expiresAt: number },
): Promise<void> {
  const { idempotencyKeys } = tablesOf(db);
  await insertRow(db, idempotencyKeys, { ...row, state: "in_flight" });
}

/** Stores the first result so later requests with the same key replay it. */
export async function completeIdempotencyKey(
  db: Db,
  accountId: string,
  key: string,
  result: { status: number; body: string; headers: Record<string, string> },
): Promise<void> {
  const { idempotencyKeys } = tablesOf(db);
  const value = (name: string) => sql`${sql.placeholder(name)}`;
  await runPrepared(
    db,
    "complete_idempotency_key",
    (d) =>
      d
        .update(idempotencyKeys)
        .set({
          state: "completed",
          responseStatus: value("status"),
          responseBody: value("body"),
          responseHeaders: value("headers"),
        })
        .where(
          and(
            eq(idempotencyKeys.accountId, sql.placeholder("accountId")),
            eq(idempotencyKeys.key, sql.placeholder("key")),
          ),
        ),
    { status: result.status, body: result.body, headers: JSON.stringify(result.headers), accountId, key },
  );
}

/** Frees a key whose request was refused before it changed anything. */
export async function deleteIdempotencyKey(db: Db, accountId: string, key: string): Promise<void> {
  const { idempotencyKeys } = tablesOf(db);
  await db
    .delete(idempotencyKeys)
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)));
}

/** Keys past their 24 h life at `now`, oldest first (retention deletes them in batches). */
export function expiredIdempotencyKeys(db: Db, now: number): BatchDelete {
  const { idempotencyKeys: t } = tablesOf(db);
  return { table: t, key: [t.accountId, t.key], where: lt(t.expiresAt, now), oldestFirst: t.expiresAt };
}
