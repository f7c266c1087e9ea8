// The transfer's data access, over every table at once: the catalog (the tables in an order that
// respects foreign keys, a table after every table it references, with the columns of each) and the
// generic reads and writes of export and import. Keys and foreign keys are read from the SQLite build
// of the tables (the same definitions on both engines); the table objects are the open database's.
import { getTableColumns, sql, type SQL } from "drizzle-orm";
import { getTableConfig, type SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { countAll } from "../../db/dialect.ts";
import { engineOf, type Db } from "../../db/engine.ts";
import { byName, DEFINITIONS, FOREIGN_KEY_ORDER } from "../../db/table-definitions.ts";
import { tablesOf } from "../../db/tables.ts";

/** One column: its property key in drizzle rows and its name in the database (and the file). */
export interface CatalogColumn {
  key: string;
  name: string;
  column: SQLiteColumn;
}

/** One table of the export. */
export interface CatalogTable {
  name: string;
  /** The open database's table (typed as SQLite, like every table of `tablesOf`). */
  table: SQLiteTable;
  columns: CatalogColumn[];
  /** The primary key's columns, in key order (rows are read in this order). */
  primaryKey: CatalogColumn[];
}

/** Every table in foreign-key order, as the database `db` belongs to holds it. */
export function catalog(db: Db): CatalogTable[] {
  const current = byName(tablesOf(db));
  return FOREIGN_KEY_ORDER.map((name) => {
    const table = current.get(name)!;
    const columns = Object.entries(getTableColumns(table)).map(([key, column]) => ({
      key,
      name: column.name,
      column: column as SQLiteColumn,
    }));
    const byColumnName = new Map(columns.map((c) => [c.name, c]));
    const config = getTableConfig(DEFINITIONS.get(name)!);
    const keyNames =
      config.primaryKeys[0]?.columns.map((c) => c.name) ??
      config.columns.filter((c) => c.primary).map((c) => c.name);
    if (keyNames.length === 0) throw new Error(`table ${name} has no primary key; export cannot page it`);
    return { name, table, columns, primaryKey: keyNames.map((n) => byColumnName.get(n)!) };
  });
}

/** How many rows a table holds. */
export async function countRows(db: Db, table: CatalogTable): Promise<number> {
  const [row] = await db.select({ n: countAll() }).from(table.table);
  return row!.n;
}

/**
 * The rows of one table in primary-key order, a page at a time: each page starts after the last
 * key of the one before (row-value comparison, which both engines answer from the key's index).
 */
export async function* rowsOf(
  db: Db,
  table: CatalogTable,
  pageRows: number,
): AsyncGenerator<Record<string, unknown>> {
  const keyColumns = table.primaryKey.map((c) => c.column);
  let after: SQL | undefined;
  for (;;) {
    const page = (await db
      .select()
      .from(table.table)
      .where(after)
      .orderBy(...keyColumns)
      .limit(pageRows)) as Record<string, unknown>[];
    yield* page;
    if (page.length < pageRows) return;
    const last = page.at(-1)!;
    const values = table.primaryKey.map((c) => sql`${last[c.key]}`);
    after = sql`(${sql.join(keyColumns, sql`, `)}) > (${sql.join(values, sql`, `)})`;
  }
}

/** Removes every row of a table. */
export async function deleteRows(db: Db, table: CatalogTable): Promise<void> {
  await db.delete(table.table);
}

/** Inserts rows (drizzle row objects) into a table, in one statement. */
export async function insertRowBatch(
  db: Db,
  table: CatalogTable,
  rows: Record<string, unknown>[],
): Promise<void> {
  await db.insert(table.table).values(rows as never[]);
}

/**
 * PostgreSQL identity columns (SQLite's AUTOINCREMENT) were given explicit values: move their
 * sequences past them, or the next insert would collide. (SQLite does this by itself.)
 */
export async function advanceIdentities(db: Db, tables: CatalogTable[]): Promise<void> {
  for (const t of tables) {
    for (const c of t.columns) {
      if (!(c.column as { generatedIdentity?: unknown }).generatedIdentity) continue;
      await engineOf(db).query(
        `SELECT setval(pg_get_serial_sequence(?, ?), (SELECT max("${c.name}") FROM "${t.name}"))`,
        [t.name, c.name],
      );
    }
  }
}
