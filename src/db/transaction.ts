import { currentTransaction, engineOf, type Db } from "./engine.ts";

/**
 * Runs `work` in one write transaction and returns its result. On SQLite the write lock is taken up
 * front (BEGIN IMMEDIATE) and writes of this process wait their turn; on PostgreSQL the transaction
 * is SERIALIZABLE and retried from the start on a serialization failure, so `work` must not have
 * effects outside the database. A call made inside a transaction joins it.
 */
export function inTransaction<T>(db: Db, work: (tx: Db) => Promise<T> | T): Promise<T> {
  return run(db, work, false);
}

/**
 * `inTransaction` for work whose every write is conditional on the row it changes still being as
 * read (a post's state and lease owner, a delivery's lease) or claims rows with `skipLocked`, and
 * whose reads decide nothing else: the engine's and the jobs' bookkeeping. On PostgreSQL it runs at
 * READ COMMITTED, where such writes are safe and processes working side by side do not abort each
 * other's transactions; on SQLite it is the same as `inTransaction`.
 */
export function inGuardedTransaction<T>(db: Db, work: (tx: Db) => Promise<T> | T): Promise<T> {
  return run(db, work, true);
}

function run<T>(db: Db, work: (tx: Db) => Promise<T> | T, guarded: boolean): Promise<T> {
  const open = currentTransaction.getStore();
  if (open && engineOf(open) === engineOf(db)) return Promise.resolve(work(open));
  return engineOf(db).transaction(async (tx) => work(tx), { guarded });
}
