import { and, asc, desc, eq, gt, inArray, lt, lte, sql, type SQL } from "drizzle-orm";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import {
  eventsOutbox,
  webhookDeliveries,
  webhookDeliveryAttempts,
  webhookDispatchCursor,
  webhookEndpoints,
  workspaces,
} from "../../db/schema.ts";

/** A stored webhook endpoint. */
export type EndpointRow = typeof webhookEndpoints.$inferSelect;
/** A stored delivery. */
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
/** One attempt of a delivery. */
export type DeliveryAttemptRow = typeof webhookDeliveryAttempts.$inferSelect;
/** A delivery status. */
export type DeliveryStatus = DeliveryRow["status"];

// ---- endpoints ---------------------------------------------------------------------------------

/** Stores a new endpoint. */
export function insertEndpoint(db: Db, row: EndpointRow): void {
  db.insert(webhookEndpoints).values(row).run();
}

/** An endpoint of a workspace. */
export function findEndpoint(db: Db, workspaceId: string, id: string): EndpointRow | undefined {
  return db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.workspaceId, workspaceId), eq(webhookEndpoints.id, id)))
    .get();
}

/** An endpoint by id alone (the sender, which has no workspace in hand). */
export function findEndpointById(db: Db, id: string): EndpointRow | undefined {
  return db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get();
}

/** One page (plus one row) of a workspace's endpoints, newest first. */
export function listEndpoints(
  db: Db,
  workspaceId: string,
  afterId: string | null,
  limit: number,
): EndpointRow[] {
  const conditions: SQL[] = [eq(webhookEndpoints.workspaceId, workspaceId)];
  if (afterId) conditions.push(lt(webhookEndpoints.id, afterId));
  return db
    .select()
    .from(webhookEndpoints)
    .where(and(...conditions))
    .orderBy(desc(webhookEndpoints.id))
    .limit(limit + 1)
    .all();
}

/** The enabled endpoints of a workspace (fan-out). */
export function listEnabledEndpoints(db: Db, workspaceId: string): EndpointRow[] {
  return db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.workspaceId, workspaceId), eq(webhookEndpoints.enabled, true)))
    .all();
}

/** Changes an endpoint's columns. */
export function updateEndpoint(db: Db, id: string, changes: Partial<EndpointRow>): void {
  db.update(webhookEndpoints).set(changes).where(eq(webhookEndpoints.id, id)).run();
}

/** Removes an endpoint; its deliveries and their attempts go with it (foreign keys cascade). */
export function deleteEndpoint(db: Db, id: string): void {
  db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id)).run();
}

/** The account that owns a workspace (audit records of Herald's own writes). */
export function findWorkspaceAccountId(db: Db, workspaceId: string): string | null {
  return (
    db
      .select({ accountId: workspaces.accountId })
      .from(workspaces)
      .where(eq(workspaces.id, workspaceId))
      .get()?.accountId ?? null
  );
}

// ---- the outbox and the dispatch cursor -----------------------------------------------------------

/** One outbox event with its rowid (the dispatch order). */
export interface OutboxEvent {
  rowid: number;
  id: string;
  workspaceId: string;
  type: string;
  destinationId: string | null;
  payload: Record<string, unknown>;
  createdAt: number;
}

const CURSOR_NAME = "webhooks";

/**
 * The rowid of the last outbox event the dispatcher has fanned out (0 before the first). Rowids
 * grow in commit order because SQLite has one writer at a time, so nothing committed later can
 * appear behind the cursor (outbox cleanups must keep the newest row, or rowids would be reused).
 */
export function readDispatchCursor(db: Db): number {
  return (
    db.select().from(webhookDispatchCursor).where(eq(webhookDispatchCursor.name, CURSOR_NAME)).get()
      ?.lastRowid ?? 0
  );
}

/** Moves the dispatch cursor; call in the transaction that created the deliveries. */
export function writeDispatchCursor(db: Db, rowid: number): void {
  db.insert(webhookDispatchCursor)
    .values({ name: CURSOR_NAME, lastRowid: rowid })
    .onConflictDoUpdate({ target: webhookDispatchCursor.name, set: { lastRowid: rowid } })
    .run();
}

/** Outbox events after a rowid, oldest first. */
export function listOutboxAfter(db: Db, rowid: number, limit: number): OutboxEvent[] {
  const rowidColumn = sql<number>`${eventsOutbox}.rowid`;
  return db
    .select({
      rowid: rowidColumn,
      id: eventsOutbox.id,
      workspaceId: eventsOutbox.workspaceId,
      type: eventsOutbox.type,
      destinationId: eventsOutbox.destinationId,
      payload: eventsOutbox.payload,
      createdAt: eventsOutbox.createdAt,
    })
    .from(eventsOutbox)
    .where(gt(rowidColumn, rowid))
    .orderBy(asc(rowidColumn))
    .limit(limit)
    .all();
}

/** Writes an event into the outbox (the chat notification of an automatic disable). */
export function insertOutboxEvent(
  db: Db,
  event: { workspaceId: string; type: string; payload: Record<string, unknown> },
  now: number,
): string {
  const id = newId("evt");
  db.insert(eventsOutbox)
    .values({
      id,
      workspaceId: event.workspaceId,
      type: event.type,
      postId: null,
      destinationId: null,
      payload: event.payload,
      createdAt: now,
    })
    .run();
  return id;
}

// ---- deliveries ----------------------------------------------------------------------------------

/** Stores a delivery; false when the endpoint already has the (non-redelivery) delivery of that event. */
export function insertDelivery(db: Db, row: DeliveryRow): boolean {
  return (
    db
      .insert(webhookDeliveries)
      .values(row)
      .onConflictDoNothing()
      .returning({ id: webhookDeliveries.id })
      .all().length > 0
  );
}

/** A delivery of an endpoint. */
export function findDelivery(db: Db, endpointId: string, id: string): DeliveryRow | undefined {
  return db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.id, id)))
    .get();
}

/** A delivery by id alone. */
export function findDeliveryById(db: Db, id: string): DeliveryRow | undefined {
  return db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get();
}

/** One page (plus one row) of an endpoint's deliveries, newest first, optionally of one status. */
export function listDeliveries(
  db: Db,
  endpointId: string,
  status: DeliveryStatus | undefined,
  afterId: string | null,
  limit: number,
): DeliveryRow[] {
  const conditions: SQL[] = [eq(webhookDeliveries.endpointId, endpointId)];
  if (status) conditions.push(eq(webhookDeliveries.status, status));
  if (afterId) conditions.push(lt(webhookDeliveries.id, afterId));
  return db
    .select()
    .from(webhookDeliveries)
    .where(and(...conditions))
    .orderBy(desc(webhookDeliveries.id))
    .limit(limit + 1)
    .all();
}

/**
 * Claims up to `limit` due deliveries for this process: their next attempt moves to `leaseUntil`,
 * so no other sender takes them meanwhile, and a sender that dies mid-attempt leaves them due
 * again when the lease ends (at least once). Call inside an IMMEDIATE transaction.
 */
export function claimDueDeliveries(db: Db, now: number, leaseUntil: number, limit: number): DeliveryRow[] {
  const due = db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.status, "pending"), lte(webhookDeliveries.nextAttemptAt, now)))
    .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id))
    .limit(limit)
    .all();
  if (due.length === 0) return [];
  db.update(webhookDeliveries)
    .set({ nextAttemptAt: leaseUntil })
    .where(
      inArray(
        webhookDeliveries.id,
        due.map((d) => d.id),
      ),
    )
    .run();
  return due.map((d) => ({ ...d, nextAttemptAt: leaseUntil }));
}

/** Changes a delivery's columns. */
export function updateDelivery(db: Db, id: string, changes: Partial<DeliveryRow>): void {
  db.update(webhookDeliveries).set(changes).where(eq(webhookDeliveries.id, id)).run();
}

/** Marks every pending delivery of an endpoint failed, with a reason; returns how many. */
export function failPendingDeliveries(db: Db, endpointId: string, now: number, reason: string): number {
  return db
    .update(webhookDeliveries)
    .set({ status: "failed", failedAt: now, nextAttemptAt: null, lastError: reason })
    .where(and(eq(webhookDeliveries.endpointId, endpointId), eq(webhookDeliveries.status, "pending")))
    .returning({ id: webhookDeliveries.id })
    .all().length;
}

/** Deletes finished deliveries (and their attempts) created before `before`; returns how many. */
export function deleteFinishedDeliveries(db: Db, before: number): number {
  return db
    .delete(webhookDeliveries)
    .where(
      and(
        inArray(webhookDeliveries.status, ["succeeded", "failed"]),
        lt(webhookDeliveries.createdAt, before),
      ),
    )
    .returning({ id: webhookDeliveries.id })
    .all().length;
}

/** Records one attempt of a delivery. */
export function insertDeliveryAttempt(db: Db, row: DeliveryAttemptRow): void {
  db.insert(webhookDeliveryAttempts).values(row).run();
}

/** The attempts of some deliveries, in order. */
export function listDeliveryAttempts(db: Db, deliveryIds: string[]): DeliveryAttemptRow[] {
  if (deliveryIds.length === 0) return [];
  return db
    .select()
    .from(webhookDeliveryAttempts)
    .where(inArray(webhookDeliveryAttempts.deliveryId, deliveryIds))
    .orderBy(asc(webhookDeliveryAttempts.deliveryId), asc(webhookDeliveryAttempts.number))
    .all();
}

/** Webhook work waiting (for /health): pending deliveries, the oldest one's age basis, and events not yet fanned out. */
export function webhookBacklog(db: Db): {
  pendingDeliveries: number;
  oldestPendingAt: number | null;
  undispatchedEvents: number;
} {
  const deliveries = db
    .select({ n: sql<number>`count(*)`, oldest: sql<number | null>`min(${webhookDeliveries.createdAt})` })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.status, "pending"))
    .get()!;
  const cursor = readDispatchCursor(db);
  const events = db
    .select({ n: sql<number>`count(*)` })
    .from(eventsOutbox)
    .where(gt(sql<number>`${eventsOutbox}.rowid`, cursor))
    .get()!;
  return {
    pendingDeliveries: deliveries.n,
    oldestPendingAt: deliveries.oldest,
    undispatchedEvents: events.n,
  };
}

/**
 * Deletes outbox events created before `before` that the dispatcher has fanned out, always keeping
 * the newest row (SQLite would otherwise reuse rowids behind the dispatch cursor). Returns how many.
 */
export function deleteDispatchedEvents(db: Db, before: number): number {
  const cursor = readDispatchCursor(db);
  const rowid = sql<number>`${eventsOutbox}.rowid`;
  const newest =
    db
      .select({ max: sql<number | null>`max(${eventsOutbox}.rowid)` })
      .from(eventsOutbox)
      .get()?.max ?? 0;
  return db
    .delete(eventsOutbox)
    .where(and(lt(eventsOutbox.createdAt, before), lte(rowid, cursor), lt(rowid, newest)))
    .returning({ id: eventsOutbox.id })
    .all().length;
}
