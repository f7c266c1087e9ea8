import { AsyncLocalStorage } from "node:async_hooks";
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import type { Tables } from "./tables.ts";

/** The SQL dialects Herald stores its data in. */
export type Dialect = "sqlite" | "postgresql";

/**
 * The drizzle handle every repository takes. It is typed as an async SQLite database (the shared
 * query-builder surface: select, insert, update, delete, returning, onConflict…); at run time it is
 * SQLite or PostgreSQL. Repositories `await` builders and never call `.get()`, `.all()` or `.run()`,
 * which PostgreSQL's builders lack.
 */
export type Db = BaseSQLiteDatabase<"async", unknown> & { [ENGINE]: Engine };

export const ENGINE = Symbol("herald.engine");

/** What differs between the storage engines, behind one interface. */
export interface Engine {
  dialect: Dialect;
  /** Every table, built for this dialect (`tablesOf`). */
  tables: Tables;
  /** Tags of the migrations this process applied when it opened the database (often none). */
  migrated: string[];
  /**
   * Runs `work` in one write transaction (serialized writes; the whole transaction or nothing).
   * `guarded`: every write is conditional on its row (see `inGuardedTransaction`).
   */
  transaction<T>(work: (tx: Db) => Promise<T>, options?: { guarded?: boolean }): Promise<T>;
  /** Runs `work` on one consistent read-only snapshot (never retried; writers go on meanwhile). */
  snapshot<T>(work: (db: Db) => Promise<T>): Promise<T>;
  /** Raw SQL with `?` placeholders (export/import, health, tests); writes go through the writer. */
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<R[]>;
  /** Answers when the database does. */
  ping(): Promise<void>;
  /**
   * Why this process refuses every write until it is restarted (SQLite: a sync of the WAL failed),
   * or null.
   */
  writeFailure(): string | null;
  close(): Promise<void>;
}

/** The transaction the current async call chain runs in, if any (nested calls join it). */
export const currentTransaction = new AsyncLocalStorage<Db>();

/**
 * The root handle given to the application: inside a transaction (of the same engine) it is that
 * transaction, so code that reads through the root handle while a transaction is open (presenting a
 * result inside an atomic idempotent request, for one) sees the transaction's own writes, and on
 * PostgreSQL does not wait for a second pool connection while holding the first.
 */
export function followingTransactions(root: Db): Db {
  return new Proxy(root, {
    get(target, property) {
      // The engine (and its tables) is the open transaction's too: read without looking it up.
      if (property === ENGINE) return target[ENGINE];
      const base = activeHandle(target);
      const value = Reflect.get(base, property);
      return typeof value === "function" ? value.bind(base) : value;
    },
  });
}

/** The open transaction's handle when `db`'s engine has one in this call chain, else `db`. */
export function activeHandle(db: Db): Db {
  const open = currentTransaction.getStore();
  return open && open[ENGINE] === db[ENGINE] ? open : db;
}

/** The engine behind a handle. */
export function engineOf(db: Db): Engine {
  return db[ENGINE];
}

/** Whether a handle is PostgreSQL (the few dialect-specific queries branch on it). */
export function isPostgres(db: Db): boolean {
  return db[ENGINE].dialect === "postgresql";
}

/** Resolves the rows of a query to its first row (what `.get()` did on SQLite alone). */
export function firstRow<T>(rows: T[]): T | undefined {
  return rows[0];
}
