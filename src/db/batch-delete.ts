import { asc, inArray, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { skipLocked } from "./dialect.ts";
import type { Db } from "./open.ts";

/** One bounded delete: the table, the rows that may go, and how to pick them. */
export interface BatchDelete {
  table: SQLiteTable;
  /** The primary key's columns (a row value when there are several). */
  key: SQLiteColumn[];
  /** Which rows may go; it should lead with an indexed time column so no statement scans the table. */
  where: SQL | undefined;
  /** The indexed time column the oldest rows are taken by. */
  oldestFirst: SQLiteColumn;
}

/**
 * The keys of the (at most `limit`) oldest rows a batch may delete: a walk of the time index, locked
 * and skipping rows another process is deleting on PostgreSQL (two cleaners split the work instead
 * of waiting on each other); SQLite has one writer at a time, so a second cleaner finds what the
 * first left. Tests read its plan.
 */
export function oldestRowsQuery(db: Db, batch: BatchDelete, limit: number) {
  const { table, key, where, oldestFirst } = batch;
  return skipLocked(
    db,
    db
      .select(Object.fromEntries(key.map((column, i) => [`k${i}`, column])))
      .from(table)
      .where(where)
      .orderBy(asc(oldestFirst))
      .limit(limit),
  );
}

/** Deletes at most `limit` rows of a batch, oldest first, in one statement; returns how many went. */
export async function deleteOldestRows(db: Db, batch: BatchDelete, limit: number): Promise<number> {
  const { table, key } = batch;
  const picked = oldestRowsQuery(db, batch, limit);
  const target =
    key.length === 1
      ? inArray(key[0]!, picked)
      : sql`(${sql.join(
          key.map((column) => sql`${column}`),
          sql`, `,
        )}) in ${picked}`;
  const deleted = await db.delete(table).where(target).returning({ k: key[0]! });
  return deleted.length;
}
