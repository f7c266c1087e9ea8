import { Database, type Statement } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { currentTransaction, ENGINE, followingTransactions, type Db, type Engine } from "./engine.ts";
import { GroupCommitWriter, WalSync } from "./sqlite-group-commit.ts";
import { refuseNewerDatabase } from "./newer-database.ts";
import { defineTables } from "./tables.ts";
import { sqliteBuilders } from "./tables/builders.ts";
import { sqliteMigrations } from "./migrations-macro.ts" with { type: "macro" };

/** The tables as SQLite stores them (one build per process; every SQLite database carries them). */
const TABLES = defineTables(sqliteBuilders);

/**
 * When a commit reaches the disk. `full`: every group of transactions is acknowledged only once the
 * WAL holding it is synced (WalSync, one fdatasync per group, off the event loop), so a commit Herald
 * acknowledged survives a power cut. `normal`: SQLite's own WAL + `synchronous = NORMAL`, synced at
 * checkpoints only: a power cut may roll back the last acknowledged commits (never corrupt the file).
 * SQLite itself runs NORMAL in both (checkpoints sync the WAL and the database file).
 */
export type SqliteSync = "full" | "normal";

/**
 * Opens (creating if needed) `<dataDir>/herald.db` and applies pending migrations. Two connections:
 * the reader (`query_only`, so a write outside a transaction fails loudly instead of slipping into
 * another request's open transaction) and the writer, which only transactions use, one at a time
 * and committed in groups (sqlite-group-commit.ts).
 */
export function openSqlite(dataDir: string, sync: SqliteSync = "full"): Db {
  // Post content, media and sealed credentials live here: readable by the server's user only.
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, "herald.db");
  const writer = cacheStatements(connect(path));
  let migrated: string[];
  try {
    migrated = migrate(writer, path);
  } catch (error) {
    writer.close();
    throw error;
  }
  const reader = connect(path);
  reader.exec("PRAGMA query_only = ON");
  const sharedRead = shareReadTransaction(reader);
  cacheStatements(reader, sharedRead.wrap);

  // The writer has opened the WAL (WAL mode, migrations): it exists from here on.
  const walSync = sync === "full" ? new WalSync(`${path}-wal`, dataDir) : null;
  const writes = new GroupCommitWriter(writer, sharedRead.end, walSync);
  const engine: Engine = {
    dialect: "sqlite",
    tables: TABLES,
    migrated,
    transaction<T>(work: (tx: Db) => Promise<T>): Promise<T> {
      return writes.run(() => currentTransaction.run(writerDb, () => work(writerDb)));
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
    writeFailure: () => walSync?.failure?.message ?? null,
    async close() {
      await writes.idle();
      walSync?.close();
      sharedRead.end();
      reader.close();
      writer.close();
    },
  };
  const writerDb = Object.assign(drizzle(writer), { [ENGINE]: engine }) as unknown as Db;
  return followingTransactions(Object.assign(drizzle(reader), { [ENGINE]: engine }) as unknown as Db);
}

/** Compiled statements kept per connection: compiling costs more than running most of Herald's queries. */
const STATEMENT_CACHE_SIZE = 500;

function connect(path: string): Database {
  const sqlite = new Database(path, { create: true, strict: true });
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA journal_mode = WAL");
  // Commits are synced by WalSync (HERALD_SQLITE_SYNC=full), not inside COMMIT; checkpoints sync.
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA foreign_keys = ON");
  // Statement journals and sorts in memory: no temporary file per write transaction.
  sqlite.exec("PRAGMA temp_store = MEMORY");
  return sqlite;
}

/**
 * Applies the embedded migrations not yet recorded, inside one IMMEDIATE transaction so that a
 * server and an admin command starting together on one data dir never apply one twice. A database
 * recording a migration this binary lacks (a newer Herald's) is refused before anything is applied.
 */
function migrate(sqlite: Database, path: string): string[] {
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
      refuseNewerDatabase(path, applied, migrations);
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

/**
 * drizzle compiles every query afresh (`prepare`); the connection keeps the last compiled statements by
 * their text instead. Statements run to completion synchronously, so one is never used by two queries
 * at once; one dropped from the cache is finalized by the garbage collector, not here, since a
 * drizzle prepared query may still hold it.
 */
function cacheStatements(sqlite: Database, onCompile?: (statement: Statement) => void): Database {
  const compile = sqlite.prepare.bind(sqlite);
  const cache = new Map<string, ReturnType<Database["prepare"]>>();
  sqlite.prepare = ((text: string) => {
    let statement = cache.get(text);
    if (statement) {
      cache.delete(text); // re-inserted below: the Map's order is least recently used first
    } else {
      statement = compile(text);
      onCompile?.(statement);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(text, statement);
    return statement;
  }) as Database["prepare"];
  return sqlite;
}

/**
 * Reads outside transactions share one read transaction per turn of the event loop: SQLite otherwise
 * opens and closes one (taking and releasing WAL locks) around every statement, which costs more
 * than most of Herald's lookups. The snapshot ends when the turn does, and before this process
 * begins or commits a write (so a request always reads its own writes, and checkpoints can reach the
 * end of the WAL); another process's commit shows from the next turn on, as if the read had come a
 * moment earlier.
 */
function shareReadTransaction(reader: Database) {
  let open = false;
  const end = () => {
    if (!open) return;
    open = false;
    // A failed statement may have ended it already (SQLite rolls back on some errors).
    if (reader.inTransaction) reader.exec("COMMIT");
  };
  const ensureOpen = () => {
    if (open) return;
    reader.exec("BEGIN");
    open = true;
    setImmediate(end);
  };
  return {
    end,
    /** Makes a reader statement join the shared transaction before it runs. */
    wrap(statement: Statement) {
      for (const method of ["all", "get", "values", "run", "iterate"] as const) {
        const run = statement[method].bind(statement) as (...args: unknown[]) => unknown;
        (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
          ensureOpen();
          return run(...args);
        };
      }
    },
  };
}
