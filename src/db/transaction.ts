import { currentTransaction, engineOf, type Db } from "./engine.ts";

/**
 * Runs `work` in one write transaction and returns its result. On SQLite the write lock is taken up
 * front (BEGIN IMMEDIATE) and writes of this process wait their turn; on PostgreSQL the transaction
 * is SERIALIZABLE and retried from the start on a serialization failure, so `work` must not have
 * effects outside the database. A call made inside a transaction joins it.
 */
export function inTransaction<T>(db: Db, work: (tx: Db) => Promise<T> | T): Promise<T> {
  const open = currentTransaction.getStore();
  if (open && engineOf(open) === engineOf(db)) return Promise.resolve(work(open));
  return engineOf(db).transaction(async (tx) => work(tx));
}
