// The column and table builders a table definition uses (src/db/tables.ts): one set per dialect, so
// every table is written once. Their TypeScript types are SQLite's, the type every repository sees;
// the PostgreSQL set (builders-pg.ts) builds the same tables with PostgreSQL's column kinds.
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/** The SQLite builders; their types are the builders' types on every dialect. */
export const sqliteBuilders = {
  table: sqliteTable,
  /** Text; `enum` narrows its TypeScript type (the database does not check it). */
  text: <TName extends string, U extends string, T extends Readonly<[U, ...U[]]>>(
    name: TName,
    config?: { enum: T },
  ) => text(name, config),
  /** A whole number: counts and timestamps (epoch milliseconds; bigint read as a number on PostgreSQL). */
  integer: <TName extends string>(name: TName) => integer(name),
  /** A boolean (0/1 on SQLite). */
  boolean: <TName extends string>(name: TName) => integer(name, { mode: "boolean" }),
  /** A JSON value stored as text on both engines, so both hold the same strings; give its type with `$type`. */
  json: <TName extends string>(name: TName) => text(name, { mode: "json" }),
  /** A numeric primary key the database assigns in increasing order (AUTOINCREMENT, an identity). */
  autoIncrementKey: <TName extends string>(name: TName) => integer(name).primaryKey({ autoIncrement: true }),
  index,
  uniqueIndex,
  primaryKey,
};

/** What a table definition builds with (typed as SQLite's builders on every dialect). */
export type TableBuilders = typeof sqliteBuilders;
