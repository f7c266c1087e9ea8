import type { Database } from "bun:sqlite";
import { ENGINE, engineOf, isPostgres, type Db } from "../../db/engine.ts";

/** The part of drizzle's PostgreSQL database this needs (Db is typed as SQLite). */
interface PgRoot {
  transaction<T>(
    work: (tx: object) => Promise<T>,
    config: { isolationLevel: "repeatable read"; accessMode: "read only" },
  ): Promise<T>;
}

/**
 * Runs `work` on a read-only view of one consistent snapshot of the database, while other processes
 * go on writing: PostgreSQL `REPEATABLE READ READ ONLY` (which never fails to serialize, so it needs
 * no retry); on SQLite a deferred transaction on the read-only connection (WAL keeps its snapshot).
 *
 * This reaches behind the Engine interface (the drizzle root and the SQLite reader); it belongs in
 * src/db as `Engine.snapshot` and moves there when that exists.
 */
export async function inSnapshot<T>(db: Db, work: (snapshot: Db) => Promise<T>): Promise<T> {
  if (isPostgres(db)) {
    const root = db as unknown as PgRoot;
    return root.transaction((tx) => work(Object.assign(tx, { [ENGINE]: engineOf(db) }) as unknown as Db), {
      isolationLevel: "repeatable read",
      accessMode: "read only",
    });
  }
  const reader = (db as unknown as { $client: Database }).$client;
  reader.exec("BEGIN DEFERRED");
  try {
    const result = await work(db);
    reader.exec("COMMIT");
    return result;
  } catch (error) {
    if (reader.inTransaction) reader.exec("ROLLBACK");
    throw error;
  }
}
