import { Column, getTableColumns, getTableName, SQL, sql, type Table } from "drizzle-orm";
import { activeHandle, isPostgres, type Db } from "./engine.ts";

type Values = Record<string, unknown>;
type Run = (values: Values) => Promise<unknown>;

/** What a built query offers once prepared (SQLite and PostgreSQL builders alike). */
interface Preparable {
  prepare(name: string): { execute(values: Values): unknown };
}

/** drizzle's SQLite prepared query: raw row arrays, and the selected columns in their order. */
interface SqlitePrepared {
  values(values: Values): unknown[][];
  fields?: { path: string[]; field: unknown }[];
}

const queriesByHandle = new WeakMap<Db, Map<string, Run>>();

/**
 * A query the hot paths run on every request, built (SQL text, column mapping) once per handle and
 * then run with `sql.placeholder` values: drizzle otherwise rebuilds the SQL of every query, which
 * costs more than SQLite takes to run it. `name` identifies the query (one name, one shape); the
 * handle is the key because a prepared query is bound to its connection (a transaction's handle gets
 * its own).
 */
export async function runPrepared<Q extends PromiseLike<unknown>>(
  db: Db,
  name: string,
  build: (db: Db) => Q,
  values: Values,
): Promise<Awaited<Q>> {
  // The connection that will run it: the open transaction's when the root handle is given inside one.
  const handle = activeHandle(db);
  let queries = queriesByHandle.get(handle);
  if (!queries) queriesByHandle.set(handle, (queries = new Map()));
  let run = queries.get(name);
  if (!run) queries.set(name, (run = prepare(handle, name, build(handle) as unknown as Preparable)));
  return (await run(values)) as Awaited<Q>;
}

function prepare(db: Db, name: string, builder: Preparable): Run {
  const query = builder.prepare(name);
  const fast = isPostgres(db) ? null : plainColumnRows(query as unknown as SqlitePrepared);
  return fast ?? (async (values) => query.execute(values));
}

/**
 * For a SQLite select of plain columns: rows mapped by a loop over the columns' decoders. drizzle's
 * general mapper (nested paths, joins, type checks on every value) costs more than the lookup itself
 * on the hot reads. Null when the select has anything else (joins, SQL expressions).
 */
function plainColumnRows(query: SqlitePrepared): Run | null {
  const fields = query.fields;
  if (!fields || !fields.every((f) => f.path.length === 1 && f.field instanceof Column)) return null;
  const names = fields.map((f) => f.path[0]!);
  const columns = fields.map((f) => f.field as Column);
  return async (values) =>
    query.values(values).map((raw) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) {
        const value = raw[i];
        row[names[i]!] = value === null ? null : columns[i]!.mapFromDriverValue(value);
      }
      return row;
    });
}

/**
 * Inserts one row with a statement built once per handle and table (the hot writes: posts, audit
 * records, idempotency keys, events). Values are encoded here, column by column, as drizzle would:
 * a null stays SQL NULL (drizzle's placeholders would encode a null JSON value as the text "null"),
 * and a column left out takes its default. Tables with SQL-expression defaults take the plain path.
 */
export async function insertRow<T extends Table>(db: Db, table: T, row: T["$inferInsert"]): Promise<void> {
  const handle = activeHandle(db);
  let inserts = insertsByHandle.get(handle);
  if (!inserts) insertsByHandle.set(handle, (inserts = new Map()));
  let insert = inserts.get(table);
  if (insert === undefined) inserts.set(table, (insert = prepareInsert(handle, table)));
  if (insert === null) {
    await (handle as unknown as { insert(t: T): { values(r: unknown): Promise<unknown> } })
      .insert(table)
      .values(row);
    return;
  }
  await insert(row as Record<string, unknown>);
}

type Insert = ((row: Record<string, unknown>) => Promise<void>) | null;
const insertsByHandle = new WeakMap<Db, Map<Table, Insert>>();

function prepareInsert(db: Db, table: Table): Insert {
  const columns = Object.entries(getTableColumns(table));
  if (columns.some(([, c]) => c.default instanceof SQL || c.defaultFn || c.onUpdateFn)) return null;
  // sql`${placeholder}` rather than a bare placeholder: drizzle then passes the value through as is.
  const placeholders = Object.fromEntries(columns.map(([key]) => [key, sql`${sql.placeholder(key)}`]));
  const query = (db as unknown as { insert(t: Table): { values(v: unknown): Preparable } })
    .insert(table)
    .values(placeholders)
    .prepare(`insert_${getTableName(table)}`);
  return async (row) => {
    const values: Values = {};
    for (const [key, column] of columns) {
      const value = row[key] === undefined ? (column.default ?? null) : row[key];
      values[key] = value === null ? null : column.mapToDriverValue(value);
    }
    await query.execute(values);
  };
}
