import { AsyncLocalStorage } from "node:async_hooks";
import { currentTransaction, engineOf, type Db } from "./engine.ts";

/** What to do once the transaction open in this call chain has committed. */
const commitCallbacks = new AsyncLocalStorage<(() => void)[]>();

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

/**
 * `inTransaction` for work whose invariants are each held by a unique index (a second writer gets a
 * unique violation, or `ON CONFLICT` sees its row once it commits) or by a row it locks or upserts
 * before deciding (the idempotency key, a month's X usage): Create Post without assets or a queue slot.
 * On PostgreSQL it runs at READ COMMITTED, so writers of unrelated rows never abort each other on
 * SERIALIZABLE's predicate locks (which cover whole index pages); on SQLite it is `inTransaction`.
 * docs/decisions.md (Issue 28: PostgreSQL speed) lists each invariant and what holds it.
 */
export function inLockedTransaction<T>(db: Db, work: (tx: Db) => Promise<T> | T): Promise<T> {
  return run(db, work, true);
}

function run<T>(db: Db, work: (tx: Db) => Promise<T> | T, guarded: boolean): Promise<T> {
  const open = currentTransaction.getStore();
  if (open && engineOf(open) === engineOf(db)) return Promise.resolve(work(open));
  let callbacks: (() => void)[] = [];
  const committed = engineOf(db).transaction(
    async (tx) => {
      callbacks = []; // a retried attempt (PostgreSQL) starts over
      return commitCallbacks.run(callbacks, () => work(tx));
    },
    { guarded },
  );
  return committed.then((result) => {
    for (const callback of callbacks) {
      try {
        callback();
      } catch {
        // A callback is a nudge (wake a job); its failure does not undo the commit.
      }
    }
    return result;
  });
}

/**
 * Runs `callback` once the transaction open in this call chain has committed (never if it rolls
 * back), or at once outside a transaction: for nudging work that must see the commit, such as waking
 * the webhook sender after an event is written.
 */
export function afterCommit(db: Db, callback: () => void): void {
  const open = currentTransaction.getStore();
  const callbacks = commitCallbacks.getStore();
  if (open && callbacks && engineOf(open) === engineOf(db)) callbacks.push(callback);
  else callback();
}
