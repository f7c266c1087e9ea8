// The sender's and the fan-out's writes over many rows on PostgreSQL, in one statement with one
// parameter: the rows as a JSON array, read back with json_to_recordset. The SQL text is the same
// whatever the number of rows, so drizzle builds next to nothing per call, and PostgreSQL gets one
// round trip. (A statement a row, or a multi-row VALUES with a typed parameter per value, cost more
// than everything else the sender does there.)
import { getTableColumns, sql, type SQL } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { tablesOf } from "../../db/tables.ts";
import type { DeliveryRow, SuccessfulAttempt } from "./repo.ts";

/** What a PostgreSQL handle runs raw SQL with (the SQLite-typed `Db` does not show it). */
interface PgExecute {
  execute(query: SQL): Promise<Record<string, unknown>[]>;
}

function execute(db: Db, query: SQL): Promise<Record<string, unknown>[]> {
  return (db as unknown as PgExecute).execute(query);
}

/** The columns of the deliveries table: their list, their recordset definition, and row encoding. */
function deliveryColumns(db: Db) {
  const { webhookDeliveries } = tablesOf(db);
  const columns = Object.entries(getTableColumns(webhookDeliveries));
  return {
    names: sql.raw(columns.map(([, c]) => `"${c.name}"`).join(", ")),
    definition: sql.raw(columns.map(([, c]) => `"${c.name}" ${c.getSQLType()}`).join(", ")),
    encode: (row: DeliveryRow) =>
      Object.fromEntries(
        columns.map(([key, c]) => {
          const value = row[key as keyof DeliveryRow];
          return [c.name, value === null ? null : c.mapToDriverValue(value)];
        }),
      ),
  };
}

/** Stores deliveries, skipping those the endpoint already has; returns how many were stored. */
export async function insertDeliveriesPg(db: Db, rows: DeliveryRow[]): Promise<number> {
  const { webhookDeliveries } = tablesOf(db);
  if (rows.length === 0) return 0;
  const { names, definition, encode } = deliveryColumns(db);
  const json = JSON.stringify(rows.map(encode));
  const inserted = await execute(
    db,
    sql`insert into ${webhookDeliveries} (${names})
      select ${names} from json_to_recordset(${json}::text::json) as r(${definition})
      on conflict do nothing returning id`,
  );
  return inserted.length;
}

/**
 * Records successful attempts (see `recordSuccessfulAttempt` in repo.ts): each delivery succeeded,
 * its attempt count up by one, the attempt logged under that number; with `endStreaks`, the failure
 * streak of their endpoints ends in the same statement. Returns the endpoint id of each delivery
 * still there.
 */
export async function recordSuccessesPg(
  db: Db,
  attempts: SuccessfulAttempt[],
  options: { endStreaks?: boolean } = {},
): Promise<Map<string, string>> {
  const { webhookDeliveries, webhookDeliveryAttempts, webhookEndpoints } = tablesOf(db);
  if (attempts.length === 0) return new Map();
  const json = JSON.stringify(
    attempts.map((a) => ({
      id: a.deliveryId,
      started_at: a.startedAt,
      response_status: a.responseStatus,
      duration_ms: a.durationMs,
      now: a.now,
    })),
  );
  const rows = await execute(
    db,
    sql`with v as (
        select * from json_to_recordset(${json}::text::json)
          as r(id text, started_at bigint, response_status bigint, duration_ms bigint, now bigint)
      ), done as (
        update ${webhookDeliveries} as d
        set attempt_count = d.attempt_count + 1, status = 'succeeded', last_attempt_at = v.started_at,
          last_response_status = v.response_status, last_error = null, last_duration_ms = v.duration_ms,
          delivered_at = v.now, next_attempt_at = null, failed_at = null
        from v where d.id = v.id
        returning d.id, d.endpoint_id, d.attempt_count, v.started_at, v.duration_ms, v.response_status
      ), logged as (
        insert into ${webhookDeliveryAttempts}
          (delivery_id, number, started_at, duration_ms, response_status, error)
        select id, attempt_count, started_at, duration_ms, response_status, null from done
      )${
        options.endStreaks
          ? sql`, streaks as (
        update ${webhookEndpoints} set failing_since = null
        where id in (select endpoint_id from done) and failing_since is not null
      )`
          : sql``
      }
      select id, endpoint_id from done`,
  );
  return new Map(rows.map((r) => [r.id as string, r.endpoint_id as string]));
}
