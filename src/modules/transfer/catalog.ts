// The tables an export holds, in an order that respects foreign keys (a table comes after every
// table it references), with the columns of each. Keys and names come from the SQLite definitions,
// which the PostgreSQL ones mirror (test/db/schema-parity.test.ts); the table objects are the current
// dialect's, bound by openDatabase.
import { getTableColumns, getTableName, is, Table } from "drizzle-orm";
import { getTableConfig, type SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "../../db/schema.ts";
import * as lite from "../../db/sqlite/schema.ts";

/** One column: its property key in drizzle rows and its name in the database (and the file). */
export interface CatalogColumn {
  key: string;
  name: string;
  column: SQLiteColumn;
}

/** One table of the export. */
export interface CatalogTable {
  name: string;
  /** The current dialect's table (typed as SQLite, like every table of src/db/schema.ts). */
  table: SQLiteTable;
  columns: CatalogColumn[];
  /** The primary key's columns, in key order (rows are read in this order). */
  primaryKey: CatalogColumn[];
}

function tablesOf(module: Record<string, unknown>): Map<string, SQLiteTable> {
  const found = new Map<string, SQLiteTable>();
  for (const value of Object.values(module))
    if (is(value, Table)) found.set(getTableName(value), value as SQLiteTable);
  return found;
}

/**
 * Table names such that every table follows the tables it references; among tables whose
 * references are all placed, the alphabetically first goes next, so the order never varies.
 */
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
    if (next === undefined) throw new Error("the schema's foreign keys form a cycle; export cannot order it");
    order.push(next);
    placed.add(next);
  }
  return order;
}

/** Every table of the schema in foreign-key order, bound to the dialect in use now. */
export function catalog(): CatalogTable[] {
  const definitions = tablesOf(lite);
  const current = tablesOf(schema);
  return foreignKeyOrder(definitions).map((name) => {
    const table = current.get(name);
    if (!table) throw new Error(`table ${name} is missing from src/db/schema.ts`);
    const columns = Object.entries(getTableColumns(table)).map(([key, column]) => ({
      key,
      name: column.name,
      column: column as SQLiteColumn,
    }));
    const byName = new Map(columns.map((c) => [c.name, c]));
    const config = getTableConfig(definitions.get(name)!);
    const keyNames =
      config.primaryKeys[0]?.columns.map((c) => c.name) ??
      config.columns.filter((c) => c.primary).map((c) => c.name);
    if (keyNames.length === 0) throw new Error(`table ${name} has no primary key; export cannot page it`);
    return { name, table, columns, primaryKey: keyNames.map((n) => byName.get(n)!) };
  });
}
