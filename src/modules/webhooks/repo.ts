import {
  and,
  asc,
  desc,
  eq,
  getTableColumns,
  inArray,
  isNotNull,
  isNull,
  lt,
  lte,
  ne,
  sql,
  type SQL,
} from "drizzle-orm";
import type { BatchDelete } from "../../db/batch-delete.ts";
import { countAll, minOf, skipLocked } from "../../db/dialect.ts";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import { firstRow, isPostgres } from "../../db/engine.ts";
import { insertRow, runPrepared } from "../../db/prepared.ts";
import { insertDeliveriesPg, recordSuccessesPg } from "./repo-pg-batch.ts";

/** A stored webhook endpoint. */
export type EndpointRow = Tables["webhookEndpoints"]["$inferSelect"];
/** A stored delivery. */
export type DeliveryRow = Tables["webhookDeliveries"]["$inferSelect"];
/** One attempt of a delivery. */
export type DeliveryAttemptRow = Tables["webhookDeliveryAttempts"]["$inferSelect"];
/** A delivery status. */
export type DeliveryStatus = DeliveryRow["status"];

// ---- endpoints ---------------------------------------------------------------------------------

/** Stores a new endpoint. */
export async function insertEndpoint(db: Db, row: EndpointRow): Promise<void> {
  const { webhookEndpoints } = tablesOf(db);
  await db.insert(webhookEndpoints).values(row);
}

/** An endpoint of a workspace. */
export async function findEndpoint(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<EndpointRow | undefined> {
  const { webhookEndpoints } = tablesOf(db);
  return db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.workspaceId, workspaceId), eq(webhookEndpoints.id, id)))
    .then(firstRow);
}

/** An endpoint by id alone (the sender, which has no workspace in hand). */
export async function findEndpointById(db: Db, id: string): Promise<EndpointRow | undefined> {
  const { webhookEndpoints } = tablesOf(db);
  return db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).then(firstRow);
}

/** Endpoints by id (the sender, for a claimed batch); missing ones were deleted. */
export async function findEndpointsByIds(db: Db, ids: string[]): Promise<EndpointRow[]> {
  const { webhookEndpoints } = tablesOf(db);
  if (ids.length === 0) return [];
  if (ids.length === 1) {
    return runPrepared(
      db,
      "webhook_endpoint_by_id",
      (d) =>
        d
          .select()
          .from(webhookEndpoints)
          .where(eq(webhookEndpoints.id, sql.placeholder("id"))),
      { id: ids[0] },
    );
  }
  return db.select().from(webhookEndpoints).where(inArray(webhookEndpoints.id, ids));
}

/** One page (plus one row) of a workspace's endpoints, newest first. */
export async function listEndpoints(
  db: Db,
  workspaceId: string,
  afterId: string | null,
  limit: number,
): Promise<EndpointRow[]> {
  const { webhookEndpoints } = tablesOf(db);
  const conditions: SQL[] = [eq(webhookEndpoints.workspaceId, workspaceId)];
  if (afterId) conditions.push(lt(webhookEndpoints.id, afterId));
  return db
    .select()
    .from(webhookEndpoints)
    .where(and(...conditions))
    .orderBy(desc(webhookEndpoints.id))
    .limit(limit + 1);
}

/** The enabled endpoints of a workspace (fan-out). */
export async function listEnabledEndpoints(db: Db, workspaceId: string): Promise<EndpointRow[]> {
  const { webhookEndpoints } = tablesOf(db);
  return db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.workspaceId, workspaceId), eq(webhookEndpoints.enabled, true)));
}

/** Changes an endpoint's columns. */
export async function updateEndpoint(db: Db, id: string, changes: Partial<EndpointRow>): Promise<void> {
  const { webhookEndpoints } = tablesOf(db);
  await db.update(webhookEndpoints).set(changes).where(eq(webhookEndpoints.id, id));
}

/** Removes an endpoint; its deliveries and their attempts go with it (foreign keys cascade). */
export async function deleteEndpoint(db: Db, id: string): Promise<void> {
  const { webhookEndpoints } = tablesOf(db);
  await db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id));
}

/** The account that owns a workspace (audit records of Herald's own writes). */
export async function findWorkspaceAccountId(db: Db, workspaceId: string): Promise<string | null> {
  const { workspaces } = tablesOf(db);
  const row = await db
    .select({ accountId: workspaces.accountId })
    .from(workspaces)
    .where(eq(workspaces.id, workspaceId))
    .then(firstRow);
  return row?.accountId ?? null;
}

// ---- the outbox ----------------------------------------------------------------------------------

/** One outbox event waiting to be fanned out. */
export interface OutboxEvent {
  id: string;
  workspaceId: string;
  type: string;
  destinationId: string | null;
  payload: Record<string, unknown>;
  createdAt: number;
}

/**
 * Claims up to `limit` events not yet fanned out, oldest id first. Each event carries its own
 * `dispatched_at` mark (no high-water mark), so an event whose transaction committed after a newer
 * one is still found; on PostgreSQL another dispatcher's rows are skipped, not waited for.
 */
export async function claimUndispatchedEvents(db: Db, limit: number): Promise<OutboxEvent[]> {
  const { eventsOutbox } = tablesOf(db);
  const query = db
    .select({
      id: eventsOutbox.id,
      workspaceId: eventsOutbox.workspaceId,
      type: eventsOutbox.type,
      destinationId: eventsOutbox.destinationId,
      payload: eventsOutbox.payload,
      createdAt: eventsOutbox.createdAt,
    })
    .from(eventsOutbox)
    .where(isNull(eventsOutbox.dispatchedAt))
    .orderBy(asc(eventsOutbox.id))
    .limit(limit);
  return skipLocked(db, query);
}

/** Marks events fanned out; call in the transaction that created their deliveries. */
export async function markEventsDispatched(db: Db, ids: string[], now: number): Promise<void> {
  const { eventsOutbox } = tablesOf(db);
  if (ids.length === 0) return;
  await db.update(eventsOutbox).set({ dispatchedAt: now }).where(inArray(eventsOutbox.id, ids));
}

/**
 * Writes an event into the outbox (a post's state change, the chat notification of an automatic
 * disable); call in the transaction of the change that causes it.
 */
export async function insertOutboxEvent(
  db: Db,
  event: {
    workspaceId: string;
    type: string;
    payload: Record<string, unknown>;
    postId?: string | null;
    destinationId?: string | null;
  },
  now: number,
): Promise<string> {
  const { eventsOutbox } = tablesOf(db);
  const id = newId("evt");
  await insertRow(db, eventsOutbox, {
    id,
    workspaceId: event.workspaceId,
    type: event.type,
    postId: event.postId ?? null,
    destinationId: event.destinationId ?? null,
    payload: event.payload,
    createdAt: now,
  });
  return id;
}

// ---- deliveries ----------------------------------------------------------------------------------

/** Stores a delivery; false when the endpoint already has the (non-redelivery) delivery of that event. */
export async function insertDelivery(db: Db, row: DeliveryRow): Promise<boolean> {
  const { webhookDeliveries } = tablesOf(db);
  const inserted = await db
    .insert(webhookDeliveries)
    .values(row)
    .onConflictDoNothing()
    .returning({ id: webhookDeliveries.id });
  return inserted.length > 0;
}

/**
 * Stores the deliveries of a fan-out batch, skipping any the endpoint already has (as
 * `insertDelivery`); returns how many were stored. On PostgreSQL one statement for all
 * (repo-pg-batch.ts); on SQLite a prepared statement each.
 */
export async function insertDeliveries(db: Db, rows: DeliveryRow[]): Promise<number> {
  const { webhookDeliveries } = tablesOf(db);
  if (isPostgres(db)) return insertDeliveriesPg(db, rows);
  let stored = 0;
  const columns = Object.entries(getTableColumns(webhookDeliveries));
  for (const row of rows) {
    const values: Record<string, unknown> = {};
    // Encoded here as drizzle would, but a null stays SQL NULL (a placeholder would encode it).
    for (const [key, column] of columns) {
      const value = row[key as keyof DeliveryRow];
      values[key] = value === null ? null : column.mapToDriverValue(value);
    }
    const inserted = await runPrepared(
      db,
      "webhook_delivery_insert",
      (d) =>
        d
          .insert(webhookDeliveries)
          .values(
            Object.fromEntries(columns.map(([key]) => [key, placeholder(key)])) as unknown as DeliveryRow,
          )
          .onConflictDoNothing()
          .returning({ id: webhookDeliveries.id }),
      values,
    );
    stored += inserted.length;
  }
  return stored;
}

/** A delivery of an endpoint. */
export async function findDelivery(db: Db, endpointId: string, id: string): Promise<DeliveryRow | undefined> {
  const { webhookDeliveries } = tablesOf(db);
  return db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.id, id)))
    .then(firstRow);
}

/** A delivery by id alone. */
export async function findDeliveryById(db: Db, id: string): Promise<DeliveryRow | undefined> {
  const { webhookDeliveries } = tablesOf(db);
  return db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).then(firstRow);
}

/** One page (plus one row) of an endpoint's deliveries, newest first, optionally of one status. */
export async function listDeliveries(
  db: Db,
  endpointId: string,
  status: DeliveryStatus | undefined,
  afterId: string | null,
  limit: number,
): Promise<DeliveryRow[]> {
  const { webhookDeliveries } = tablesOf(db);
  const conditions: SQL[] = [eq(webhookDeliveries.endpointId, endpointId)];
  if (status) conditions.push(eq(webhookDeliveries.status, status));
  if (afterId) conditions.push(lt(webhookDeliveries.id, afterId));
  return db
    .select()
    .from(webhookDeliveries)
    .where(and(...conditions))
    .orderBy(desc(webhookDeliveries.id))
    .limit(limit + 1);
}

/**
 * Claims up to `limit` due deliveries for this process: their next attempt moves to `leaseUntil`,
 * so no other sender takes them meanwhile, and a sender that dies mid-attempt leaves them due
 * again when the lease ends (at least once). One prepared statement (the claim runs every few
 * deliveries), atomic on its own: on SQLite call it inside a transaction (writes go through one),
 * on PostgreSQL it may run alone. The longest-waiting first, in the order of the due index
 * (by `next_attempt_at`; ties in the order they were stored): sorting ties by id made SQLite sort
 * every due row on each claim.
 */
export async function claimDueDeliveries(
  db: Db,
  now: number,
  leaseUntil: number,
  limit: number,
): Promise<DeliveryRow[]> {
  const { webhookDeliveries } = tablesOf(db);
  const claimed = await runPrepared(
    db,
    "webhook_deliveries_claim",
    (d) => {
      const due = d
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(
          and(
            eq(webhookDeliveries.status, "pending"),
            lte(webhookDeliveries.nextAttemptAt, sql.placeholder("now")),
          ),
        )
        .orderBy(asc(webhookDeliveries.nextAttemptAt))
        .limit(sql.placeholder("limit"));
      return d
        .update(webhookDeliveries)
        .set({ nextAttemptAt: placeholder("leaseUntil") })
        .where(inArray(webhookDeliveries.id, skipLocked(d, due)))
        .returning();
    },
    { now, leaseUntil, limit },
  );
  // RETURNING comes in no set order.
  return claimed.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Hands claimed deliveries back, due at `now`: those this process claimed (its lease is still on
 * them) and did not attempt. A delivery whose lease was taken over since is left alone.
 */
export async function releaseClaims(
  db: Db,
  claims: { id: string; leaseUntil: number }[],
  now: number,
): Promise<void> {
  const { webhookDeliveries } = tablesOf(db);
  for (const claim of claims) {
    await runPrepared(
      db,
      "webhook_delivery_release",
      (d) =>
        d
          .update(webhookDeliveries)
          .set({ nextAttemptAt: placeholder("now") })
          .where(
            and(
              eq(webhookDeliveries.id, sql.placeholder("id")),
              eq(webhookDeliveries.status, "pending"),
              eq(webhookDeliveries.nextAttemptAt, sql.placeholder("leaseUntil")),
            ),
          ),
      { ...claim, now },
    );
  }
}

/** A successful attempt to record. */
export interface SuccessfulAttempt {
  deliveryId: string;
  startedAt: number;
  durationMs: number;
  responseStatus: number;
  now: number;
}

/**
 * Records a successful attempt: the delivery is `succeeded` whatever happened to it meanwhile, its
 * attempt count goes up by one and the attempt is logged under that number. Returns the delivery's
 * endpoint id, or null when the delivery is gone (its endpoint was deleted). Prepared statements:
 * this runs once per delivery.
 */
export async function recordSuccessfulAttempt(db: Db, attempt: SuccessfulAttempt): Promise<string | null> {
  const { webhookDeliveries, webhookDeliveryAttempts } = tablesOf(db);
  const [row] = await runPrepared(
    db,
    "webhook_delivery_succeeded",
    (d) =>
      d
        .update(webhookDeliveries)
        .set({
          attemptCount: sql`${webhookDeliveries.attemptCount} + 1`,
          status: "succeeded",
          lastAttemptAt: placeholder("startedAt"),
          lastResponseStatus: placeholder("responseStatus"),
          lastError: null,
          lastDurationMs: placeholder("durationMs"),
          deliveredAt: placeholder("now"),
          nextAttemptAt: null,
          failedAt: null,
        })
        .where(eq(webhookDeliveries.id, sql.placeholder("deliveryId")))
        .returning({ number: webhookDeliveries.attemptCount, endpointId: webhookDeliveries.endpointId }),
    { ...attempt },
  );
  if (!row) return null;
  await runPrepared(
    db,
    "webhook_attempt_insert",
    (d) =>
      d.insert(webhookDeliveryAttempts).values({
        deliveryId: placeholder("deliveryId"),
        number: placeholder("number"),
        startedAt: placeholder("startedAt"),
        durationMs: placeholder("durationMs"),
        responseStatus: placeholder("responseStatus"),
        error: null,
      }),
    {
      deliveryId: attempt.deliveryId,
      number: row.number,
      startedAt: attempt.startedAt,
      durationMs: attempt.durationMs,
      responseStatus: attempt.responseStatus,
    },
  );
  return row.endpointId;
}

/**
 * Records successful attempts as `recordSuccessfulAttempt` does, each delivery once; returns the
 * endpoint id of each (null when its delivery is gone). On PostgreSQL one statement for all
 * (repo-pg-batch.ts); on SQLite prepared statements.
 */
export async function recordSuccessfulAttempts(
  db: Db,
  attempts: SuccessfulAttempt[],
): Promise<(string | null)[]> {
  if (!isPostgres(db)) {
    const endpoints: (string | null)[] = [];
    for (const attempt of attempts) endpoints.push(await recordSuccessfulAttempt(db, attempt));
    return endpoints;
  }
  const endpoints = await recordSuccessesPg(db, attempts);
  return attempts.map((a) => endpoints.get(a.deliveryId) ?? null);
}

/** Ends an endpoint's failure streak (a delivery succeeded); nothing when it had none. */
export async function clearEndpointFailing(db: Db, id: string): Promise<void> {
  const { webhookEndpoints } = tablesOf(db);
  await runPrepared(
    db,
    "webhook_endpoint_clear_failing",
    (d) =>
      d
        .update(webhookEndpoints)
        .set({ failingSince: null })
        .where(and(eq(webhookEndpoints.id, sql.placeholder("id")), isNotNull(webhookEndpoints.failingSince))),
    { id },
  );
}

/** A value of a prepared statement where drizzle's types take SQL only (`set`). */
function placeholder(name: string): SQL {
  return sql`${sql.placeholder(name)}`;
}

/** Changes a delivery's columns. */
export async function updateDelivery(db: Db, id: string, changes: Partial<DeliveryRow>): Promise<void> {
  const { webhookDeliveries } = tablesOf(db);
  await db.update(webhookDeliveries).set(changes).where(eq(webhookDeliveries.id, id));
}

/** Marks every pending delivery of an endpoint failed, with a reason; returns how many. */
export async function failPendingDeliveries(
  db: Db,
  endpointId: string,
  now: number,
  reason: string,
): Promise<number> {
  const { webhookDeliveries } = tablesOf(db);
  const failed = await db
    .update(webhookDeliveries)
    .set({ status: "failed", failedAt: now, nextAttemptAt: null, lastError: reason })
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, "pending")))
    .returning({ id: webhookDeliveries.id });
  return failed.length;
}

/**
 * Finished deliveries created before `before`, oldest first (retention deletes them in batches, their
 * attempts with them by ON DELETE CASCADE; a pending one is never taken). `<>` keeps the status
 * index out, so the time index is walked instead of every finished delivery sorted.
 */
export function finishedDeliveriesBefore(db: Db, before: number): BatchDelete {
  const { webhookDeliveries: t } = tablesOf(db);
  const where = and(lt(t.createdAt, before), ne(t.status, "pending"));
  return { table: t, key: [t.id], where, oldestFirst: t.createdAt };
}

/** Records one attempt of a delivery. */
export async function insertDeliveryAttempt(db: Db, row: DeliveryAttemptRow): Promise<void> {
  const { webhookDeliveryAttempts } = tablesOf(db);
  await db.insert(webhookDeliveryAttempts).values(row);
}

/** The attempts of some deliveries, in order. */
export async function listDeliveryAttempts(db: Db, deliveryIds: string[]): Promise<DeliveryAttemptRow[]> {
  const { webhookDeliveryAttempts } = tablesOf(db);
  if (deliveryIds.length === 0) return [];
  return db
    .select()
    .from(webhookDeliveryAttempts)
    .where(inArray(webhookDeliveryAttempts.deliveryId, deliveryIds))
    .orderBy(asc(webhookDeliveryAttempts.deliveryId), asc(webhookDeliveryAttempts.number));
}

/**
 * Webhook work waiting (for /health): pending deliveries, the oldest one's age basis, and events not yet
 * fanned out.
 */
export async function webhookBacklog(db: Db): Promise<{
  pendingDeliveries: number;
  oldestPendingAt: number | null;
  undispatchedEvents: number;
}> {
  const { eventsOutbox, webhookDeliveries } = tablesOf(db);
  const [deliveries] = await db
    .select({ n: countAll(), oldest: minOf(webhookDeliveries.createdAt) })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.status, "pending"));
  const [events] = await db
    .select({ n: countAll() })
    .from(eventsOutbox)
    .where(isNull(eventsOutbox.dispatchedAt));
  return {
    pendingDeliveries: deliveries!.n,
    oldestPendingAt: deliveries!.oldest,
    undispatchedEvents: events!.n,
  };
}

/** Outbox events fanned out before `before`, oldest first (retention deletes them in batches). */
export function dispatchedEventsBefore(db: Db, before: number): BatchDelete {
  const { eventsOutbox: t } = tablesOf(db);
  return { table: t, key: [t.id], where: lt(t.dispatchedAt, before), oldestFirst: t.dispatchedAt };
}
