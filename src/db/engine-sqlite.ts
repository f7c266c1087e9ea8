import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { currentTransaction, ENGINE, type Db, type Engine } from "./engine.ts";
import { sqliteMigrations } from "./migrations-macro.ts" with { type: "macro" };

/**
 * Opens (creating if needed) `<dataDir>/herald.db` and applies pending migrations. Two connections:
 * the reader (`query_only`, so a write outside a transaction fails loudly instead of slipping into
 * another request's open transaction) and the writer, which only transactions use, one at a time.
 */
export function openSqlite(dataDir: string): Db {
  // Post content, media and sealed credentials live here: readable by the server's user only.
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, "herald.db");
  const writer = connect(path);
  const migrated = migrate(writer);
  const reader = connect(path);
  reader.exec("PRAGMA query_only = ON");

  let queue: Promise<unknown> = Promise.resolve();
  const engine: Engine = {
    dialect: "sqlite",
    migrated,
    transaction<T>(work: (tx: Db) => Promise<T>): Promise<T> {
      const run = queue.then(async () => {
        writer.exec("BEGIN IMMEDIATE");
        try {
          const result = await currentTransaction.run(writerDb, () => work(writerDb));
          writer.exec("COMMIT");
          return result;
        } catch (error) {
          if (writer.inTransaction) writer.exec("ROLLBACK");
          throw error;
        }
      });
      queue = run.catch(() => undefined);
      return run;
    },
    async snapshot<T>(work: (db: Db) => Promise<T>): Promise<T> {
      // Its own connection: the shared reader serves other requests meanwhile. WAL keeps the snapshot.
      const connection = connect(path);
      connection.exec("PRAGMA query_only = ON");
      connection.exec("BEGIN DEFERRED");
      try {
        const result = await work(Object.assign(drizzle(connection), { [ENGINE]: engine }) as unknown as Db);
        connection.exec("COMMIT");
        return result;
      } finally {
        if (connection.inTransaction) connection.exec("ROLLBACK");
        connection.close();
      }
    },
    async query<R>(text: string, params: unknown[] = []): Promise<R[]> {
      const run = () => writer.query(text).all(...(params as never[])) as R[];
      const open = currentTransaction.getStore();
      return open && open[ENGINE] === engine ? run() : engine.transaction(async () => run());
    },
    async ping() {
      reader.query("SELECT 1").get();
    },
    async close() {
      await queue;
      reader.close();
      writer.close();
    },
  };
  const writerDb = Object.assign(drizzle(writer), { [ENGINE]: engine }) as unknown as Db;
  return Object.assign(drizzle(reader), { [ENGINE]: engine }) as unknown as Db;
}

function connect(path: string): Database {
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  return sqlite;
}

/**
 * Applies the embedded migrations not yet recorded, inside one IMMEDIATE transaction so that a
 * server and an admin command starting together on one data dir never apply one twice.
 */
function migrate(sqlite: Database): string[] {
  const migrations = sqliteMigrations();
  sqlite.exec(
    "CREATE TABLE IF NOT EXISTS herald_migrations " +
      "(tag TEXT PRIMARY KEY, hash TEXT NOT NULL, applied_at INTEGER NOT NULL)",
  );
  return sqlite
    .transaction(() => {
      const applied = new Set(
        sqlite
          .query<{ tag: string }, []>("SELECT tag FROM herald_migrations")
          .all()
          .map((r) => r.tag),
      );
      const done: string[] = [];
      for (const m of migrations) {
        if (applied.has(m.tag)) continue;
        for (const statement of m.statements) sqlite.exec(statement);
        sqlite
          .query("INSERT INTO herald_migrations (tag, hash, applied_at) VALUES (?, ?, ?)")
          .run(m.tag, m.hash, Date.now());
        done.push(m.tag);
      }
      return done;
    })
    .immediate();
}
