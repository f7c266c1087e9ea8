// The few places where SQLite and PostgreSQL need different SQL, one function each. Repositories
// use these instead of writing dialect-specific fragments themselves.
import { sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { isPostgres, type Db } from "./engine.ts";

/**
 * A select that claims rows for work: on PostgreSQL the rows are locked and rows another process
 * has locked are skipped (`FOR UPDATE SKIP LOCKED`); SQLite's write transaction already holds the
 * whole database.
 */
export function skipLocked<Q>(db: Db, query: Q): Q {
  if (!isPostgres(db)) return query;
  return (query as unknown as { for(s: string, o: object): Q }).for("update", { skipLocked: true });
}

/** `count(*)` as a number (PostgreSQL returns bigint counts as text). */
export function countAll(): SQL<number> {
  return sql<number>`count(*)`.mapWith(Number);
}

/** How many rows of a group satisfy `condition` (0 for none). */
export function countWhere(condition: SQL): SQL<number> {
  return sql<number>`coalesce(sum(case when ${condition} then 1 else 0 end), 0)`.mapWith(Number);
}

/** The largest value of a numeric column, or null over no rows, as a number. */
export function maxOf(column: SQLWrapper): SQL<number | null> {
  return sql<number | null>`max(${column})`.mapWith(Number);
}

/** The smallest value of a numeric column, or null over no rows, as a number. */
export function minOf(column: SQLWrapper): SQL<number | null> {
  return sql<number | null>`min(${column})`.mapWith(Number);
}

/** `value - by`, but never below zero (counters that must not go negative). */
export function decrementedToZero(column: SQLWrapper, by = 1): SQL {
  return sql`case when ${column} > ${by} then ${column} - ${by} else 0 end`;
}

/**
 * Whether a JSON-array-of-objects column (stored as text on both engines) holds an object whose
 * `key` equals `value`.
 */
export function jsonArrayHasObject(db: Db, column: SQLWrapper, key: string, value: string): SQL {
  if (isPostgres(db)) {
    return sql`cast(${column} as jsonb) @> jsonb_build_array(jsonb_build_object(${key}::text, ${value}::text))`;
  }
  const path = `$.${key}`;
  return sql`exists (select 1 from json_each(${column}) where json_extract(value, ${path}) = ${value})`;
}
