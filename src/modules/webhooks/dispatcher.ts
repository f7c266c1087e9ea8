import { newDelivery } from "./service.ts";
import { inGuardedTransaction } from "../../db/transaction.ts";
import type { Db } from "../../db/open.ts";
import type { Herald } from "../../herald.ts";
import { WEBHOOK_EVENT_TYPES } from "./present.ts";
import {
  claimUndispatchedEvents,
  insertDeliveries,
  listEnabledEndpoints,
  markEventsDispatched,
  type DeliveryRow,
  type EndpointRow,
  type OutboxEvent,
} from "./repo.ts";

/** Events claimed per transaction. */
const BATCH = 500;

const EVENT_TYPES = new Set<string>(WEBHOOK_EVENT_TYPES);

/**
 * Whether an endpoint gets an event: it lists the type, its destination filter matches the post's
 * destination, and it existed when the event happened (a new endpoint is not sent history).
 */
export function endpointMatches(
  endpoint: EndpointRow,
  event: Pick<OutboxEvent, "type" | "destinationId" | "createdAt">,
): boolean {
  if (!endpoint.eventTypes.includes(event.type)) return false;
  if (event.createdAt < endpoint.createdAt) return false;
  if (endpoint.destinationFilterMode === "all") return true;
  return event.destinationId !== null && endpoint.destinationIds.includes(event.destinationId);
}

/**
 * Fans outbox events not yet dispatched out into deliveries: one per enabled endpoint that matches.
 * Each batch is one transaction that claims the events, creates their deliveries and marks them
 * dispatched, so every event is fanned out once even with several servers on one database or a
 * crash in between; an event whose transaction committed late is found by its own mark. Returns
 * how many deliveries it created; `onBatch` runs after each batch that created some has committed.
 */
export async function dispatchWebhookEvents(h: Herald, onBatch?: () => void): Promise<number> {
  let created = 0;
  for (;;) {
    const batch = await inGuardedTransaction(h.db, (tx) => dispatchBatch(h, tx));
    created += batch.deliveries;
    // The sender may claim these deliveries while the next batch is being fanned out.
    if (batch.deliveries > 0) onBatch?.();
    if (batch.events < BATCH) return created;
  }
}

/** One batch, inside its transaction (no effects outside it: PostgreSQL may run it again). */
async function dispatchBatch(h: Herald, tx: Db): Promise<{ events: number; deliveries: number }> {
  const events = await claimUndispatchedEvents(tx, BATCH);
  if (events.length === 0) return { events: 0, deliveries: 0 };
  const now = h.clock.now();
  const endpointsOf = new Map<string, EndpointRow[]>();
  const rows: DeliveryRow[] = [];
  for (const event of events) {
    if (!EVENT_TYPES.has(event.type)) continue;
    let endpoints = endpointsOf.get(event.workspaceId);
    if (!endpoints) {
      endpoints = await listEnabledEndpoints(tx, event.workspaceId);
      endpointsOf.set(event.workspaceId, endpoints);
    }
    for (const endpoint of endpoints) {
      if (endpointMatches(endpoint, event)) rows.push(newDelivery(endpoint, event, now, null));
    }
  }
  const deliveries = await insertDeliveries(tx, rows);
  await markEventsDispatched(
    tx,
    events.map((e) => e.id),
    now,
  );
  return { events: events.length, deliveries };
}
