import { and, eq, lt } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { idempotencyKeys } from "../../db/schema.ts";

/** A stored idempotency key. */
export type IdempotencyRow = typeof idempotencyKeys.$inferSelect;

/** The key row of an account, if any. */
export function findIdempotencyKey(db: Db, accountId: string, key: string): IdempotencyRow | undefined {
  return db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)))
    .get();
}

/** Marks a key as taken by a request that is now running. */
export function insertInFlightKey(
  db: Db,
  row: { accountId: string; key: string; requestHash: string; createdAt: number; expiresAt: number },
): void {
  db.insert(idempotencyKeys)
    .values({ ...row, state: "in_flight" })
    .run();
}

/** Stores the first result so later requests with the same key replay it. */
export function completeIdempotencyKey(
  db: Db,
  accountId: string,
  key: string,
  result: { status: number; body: string; headers: Record<string, string> },
): void {
  db.update(idempotencyKeys)
    .set({
      state: "completed",
      responseStatus: result.status,
      responseBody: result.body,
      responseHeaders: JSON.stringify(result.headers),
    })
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)))
    .run();
}

/** Frees a key whose request was refused before it changed anything. */
export function deleteIdempotencyKey(db: Db, accountId: string, key: string): void {
  db.delete(idempotencyKeys)
    .where(and(eq(idempotencyKeys.accountId, accountId), eq(idempotencyKeys.key, key)))
    .run();
}

/** Removes keys past their 24 h life. */
export function deleteExpiredIdempotencyKeys(db: Db, now: number): void {
  db.delete(idempotencyKeys).where(lt(idempotencyKeys.expiresAt, now)).run();
}
