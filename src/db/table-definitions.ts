// The tables' keys and foreign keys, read from one SQLite build of the definitions (the same on both
// engines; drizzle reads a table's config by its dialect). Shared by the jobs that walk every table
// (the transfer, removing an account); the table objects they read and write are the open database's.
import { getTableName } from "drizzle-orm";
import { getTableConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { defineTables, type Tables } from "./tables.ts";
import { sqliteBuilders } from "./tables/builders.ts";

/** The tables of a build by database name (typed as SQLite, like every table of `tablesOf`). */
export function byName(tables: Tables): Map<string, SQLiteTable> {
  return new Map(Object.values(tables).map((table) => [getTableName(table), table as SQLiteTable]));
}

/** The SQLite build, for keys and foreign keys. */
export const DEFINITIONS = byName(defineTables(sqliteBuilders));

/**
 * Table names such that every table follows the tables it references; among tables whose
 * references are all placed, the alphabetically first goes next, so the order never varies.
 */
export const FOREIGN_KEY_ORDER: readonly string[] = foreignKeyOrder(DEFINITIONS);

function foreignKeyOrder(definitions: Map<string, SQLiteTable>): string[] {
  const needs = new Map<string, Set<string>>();
  for (const [name, table] of definitions) {
    const referenced = getTableConfig(table).foreignKeys.map((fk) =>
      getTableName(fk.reference().foreignTable),
    );
    needs.set(name, new Set(referenced.filter((r) => r !== name)));
  }
  const order: string[] = [];
  const placed = new Set<string>();
  while (order.length < needs.size) {
    const next = [...needs.keys()]
      .filter((name) => !placed.has(name) && [...needs.get(name)!].every((r) => placed.has(r)))
      .sort()[0];
    if (next === undefined) throw new Error("the schema's foreign keys form a cycle; no table order exists");
    order.push(next);
    placed.add(next);
  }
  return order;
}
