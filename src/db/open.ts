import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { embeddedMigrations } from "./migrations-macro.ts" with { type: "macro" };
import * as schema from "./schema.ts";

/** The drizzle handle every repo uses. */
export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** Opens (creating if needed) `<dataDir>/herald.db` with Herald's pragmas and applies pending migrations. */
export function openDatabase(dataDir: string): Db {
  // Post content, media and sealed credentials live here: readable by the server's user only.
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const sqlite = new Database(join(dataDir, "herald.db"), { create: true, strict: true });
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  migrate(sqlite);
  return drizzle(sqlite, { schema }) as Db;
}

/**
 * Applies the embedded migrations not yet recorded, inside one IMMEDIATE transaction so that a
 * server and an admin command starting together on one data dir never apply one twice.
 */
function migrate(sqlite: Database): void {
  const migrations = embeddedMigrations();
  sqlite.exec(
    "CREATE TABLE IF NOT EXISTS herald_migrations (tag TEXT PRIMARY KEY, hash TEXT NOT NULL, applied_at INTEGER NOT NULL)",
  );
  sqlite
    .transaction(() => {
      const applied = new Set(
        sqlite
          .query<{ tag: string }, []>("SELECT tag FROM herald_migrations")
          .all()
          .map((r) => r.tag),
      );
      for (const m of migrations) {
        if (applied.has(m.tag)) continue;
        for (const statement of m.statements) sqlite.exec(statement);
        sqlite
          .query("INSERT INTO herald_migrations (tag, hash, applied_at) VALUES (?, ?, ?)")
          .run(m.tag, m.hash, Date.now());
      }
    })
    .immediate();
}
