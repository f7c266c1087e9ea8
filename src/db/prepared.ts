import { Column, fillPlaceholders, getTableColumns, getTableName, SQL, sql, type Table } from "drizzle-orm";
import { activeHandle, engineOf, isPostgres, type Db } from "./engine.ts";

type Values = Record<string, unknown>;
/** Runs a prepared query on `handle`'s connection (PostgreSQL) or the one it was prepared on (SQLite). */
type Run = (handle: Db, values: Values) => Promise<unknown>;

/** What a built query offers once prepared (SQLite and PostgreSQL builders alike). */
interface Preparable {
  prepare(name: string): { execute(values: Values): unknown };
}

/** drizzle's SQLite prepared query: raw row arrays, and the selected columns in their order. */
interface SqlitePrepared {
  values(values: Values): unknown[][];
  fields?: { path: string[]; field: unknown }[];
}

/** drizzle's PostgreSQL (Bun.SQL) prepared query: its text, its parameters and the client it runs on. */
interface PostgresPrepared {
  queryString: string;
  params: unknown[];
  fields?: { path: string[]; field: unknown }[];
  customResultMapper?: unknown;
  client: PostgresClient;
  execute(values: Values): Promise<unknown>;
}

interface PostgresClient {
  unsafe(text: string, params: unknown[]): Promise<unknown[]> & { values(): Promise<unknown[][]> };
}

/**
 * Where prepared queries are kept: per connection handle on SQLite (a compiled statement belongs to
 * its connection, and SQLite's two handles live as long as the database), per engine on PostgreSQL,
 * where the same SQL text runs on whichever connection the handle holds (the pool, or a
 * transaction's), so a transaction does not build its queries again.
 */
const queriesByOwner = new WeakMap<object, Map<string, Run>>();

function ownerOf(handle: Db): object {
  return isPostgres(handle) ? engineOf(handle) : handle;
}

/**
 * A query the hot paths run on every request, built (SQL text, column mapping) once and then run
 * with `sql.placeholder` values: drizzle otherwise rebuilds the SQL of every query, which costs more
 * than the database takes to run it. `name` identifies the query (one name, one shape).
 */
export async function runPrepared<Q extends PromiseLike<unknown>>(
  db: Db,
  name: string,
  build: (db: Db) => Q,
  values: Values,
): Promise<Awaited<Q>> {
  // The connection that will run it: the open transaction's when the root handle is given inside one.
  const handle = activeHandle(db);
  const owner = ownerOf(handle);
  let queries = queriesByOwner.get(owner);
  if (!queries) queriesByOwner.set(owner, (queries = new Map()));
  let run = queries.get(name);
  if (!run) queries.set(name, (run = prepare(handle, name, build(handle) as unknown as Preparable)));
  return (await run(handle, values)) as Awaited<Q>;
}

function prepare(db: Db, name: string, builder: Preparable): Run {
  const query = builder.prepare(name);
  if (isPostgres(db)) return onConnectionOf(query as unknown as PostgresPrepared);
  const fast = plainColumnRows(query as unknown as SqlitePrepared);
  return fast ?? (async (_, values) => query.execute(values));
}

/** The Bun.SQL client a PostgreSQL handle runs its queries on: the pool's, or its transaction's. */
function clientOf(handle: Db): PostgresClient {
  return (handle as unknown as { session: { client: PostgresClient } }).session.client;
}

/**
 * A PostgreSQL prepared query run on the connection of the handle given at run time. Selects of
 * plain columns are mapped by a loop over the columns' decoders (as on SQLite); anything else
 * (joins, SQL expressions) goes through drizzle's own mapping, on a copy bound to that connection.
 */
function onConnectionOf(query: PostgresPrepared): Run {
  const { queryString, params, fields, customResultMapper } = query;
  if (!fields && !customResultMapper)
    return (handle, values) => clientOf(handle).unsafe(queryString, fillPlaceholders(params, values));
  const plain = !customResultMapper && fields!.every((f) => f.path.length === 1 && f.field instanceof Column);
  if (!plain)
    return (handle, values) => {
      const bound = Object.create(query) as PostgresPrepared;
      bound.client = clientOf(handle);
      return bound.execute(values);
    };
  const names = fields!.map((f) => f.path[0]!);
  const columns = fields!.map((f) => f.field as Column);
  return async (handle, values) => {
    const rows = await clientOf(handle).unsafe(queryString, fillPlaceholders(params, values)).values();
    return rows.map((raw) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) {
        const value = raw[i];
        row[names[i]!] = value === null ? null : columns[i]!.mapFromDriverValue(value);
      }
      return row;
    });
  };
}

/**
 * A fixed PostgreSQL statement text with positional parameters (`$1`…), run on the connection of
 * `db`'s open transaction or the pool's: for the few statements the query builder cannot express
 * (one data-modifying CTE writing several tables). Rows come back as the driver gives them.
 */
export async function runPostgresText(db: Db, text: string, params: unknown[]): Promise<unknown[]> {
  const handle = activeHandle(db);
  if (!isPostgres(handle)) throw new Error("runPostgresText runs on PostgreSQL only");
  return clientOf(handle).unsafe(text, params);
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
  return async (_, values) =>
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
 * Inserts one row with a statement built once per table (and SQLite handle) (the hot writes: posts, audit
 * records, idempotency keys, events). Values are encoded here, column by column, as drizzle would:
 * a null stays SQL NULL (drizzle's placeholders would encode a null JSON value as the text "null"),
 * and a column left out takes its default. Tables with SQL-expression defaults take the plain path.
 */
export async function insertRow<T extends Table>(db: Db, table: T, row: T["$inferInsert"]): Promise<void> {
  const handle = activeHandle(db);
  const owner = ownerOf(handle);
  let inserts = insertsByOwner.get(owner);
  if (!inserts) insertsByOwner.set(owner, (inserts = new Map()));
  let insert = inserts.get(table);
  if (insert === undefined) inserts.set(table, (insert = prepareInsert(handle, table)));
  if (insert === null) {
    await (handle as unknown as { insert(t: T): { values(r: unknown): Promise<unknown> } })
      .insert(table)
      .values(row);
    return;
  }
  await insert(handle, row as Record<string, unknown>);
}

type Insert = ((handle: Db, row: Record<string, unknown>) => Promise<void>) | null;
const insertsByOwner = new WeakMap<object, Map<Table, Insert>>();

function prepareInsert(db: Db, table: Table): Insert {
  const columns = Object.entries(getTableColumns(table));
  if (columns.some(([, c]) => c.default instanceof SQL || c.defaultFn || c.onUpdateFn)) return null;
  // sql`${placeholder}` rather than a bare placeholder: drizzle then passes the value through as is.
  const placeholders = Object.fromEntries(columns.map(([key]) => [key, sql`${sql.placeholder(key)}`]));
  const builder = (db as unknown as { insert(t: Table): { values(v: unknown): Preparable } })
    .insert(table)
    .values(placeholders);
  const run = prepare(db, `insert_${getTableName(table)}`, builder);
  return async (handle, row) => {
    const values: Values = {};
    for (const [key, column] of columns) {
      const value = row[key] === undefined ? (column.default ?? null) : row[key];
      values[key] = value === null ? null : column.mapToDriverValue(value);
    }
    await run(handle, values);
  };
}
