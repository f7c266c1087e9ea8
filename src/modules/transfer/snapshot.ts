import { engineOf, type Db } from "../../db/engine.ts";

/**
 * Runs `work` on a read-only view of one consistent snapshot of the database, while other processes
 * go on writing (PostgreSQL `REPEATABLE READ READ ONLY`; on SQLite a deferred read transaction on a
 * connection of its own).
 */
export function inSnapshot<T>(db: Db, work: (snapshot: Db) => Promise<T>): Promise<T> {
  return engineOf(db).snapshot(work);
}
