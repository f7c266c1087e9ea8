import type { Db } from "./open.ts";

/**
 * Runs `work` in one IMMEDIATE transaction (the write lock is taken up front, so two processes never
 * deadlock upgrading a read lock). `work` must be synchronous: bun:sqlite transactions cannot span awaits.
 */
export function inTransaction<T>(db: Db, work: (tx: Db) => T): T {
  return db.$client.transaction(() => work(db)).immediate();
}
