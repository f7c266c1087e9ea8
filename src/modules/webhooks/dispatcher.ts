import { newDelivery } from "./service.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { WEBHOOK_EVENT_TYPES } from "./present.ts";
import {
  insertDelivery,
  listEnabledEndpoints,
  listOutboxAfter,
  readDispatchCursor,
  writeDispatchCursor,
  type EndpointRow,
  type OutboxEvent,
} from "./repo.ts";

/** Events read per transaction. */
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
 * Fans new outbox events out into deliveries: one per enabled endpoint that matches. Each batch
 * is one transaction that also moves the cursor, so every event is fanned out exactly once even
 * with two servers on one data dir or a crash in between. Returns how many deliveries it created.
 */
export function dispatchWebhookEvents(h: Herald): number {
  let created = 0;
  for (;;) {
    const batch = inTransaction(h.db, (tx) => {
      const events = listOutboxAfter(tx, readDispatchCursor(tx), BATCH);
      if (events.length === 0) return { events: 0, deliveries: 0 };
      const now = h.clock.now();
      const endpointsOf = new Map<string, EndpointRow[]>();
      let deliveries = 0;
      for (const event of events) {
        if (!EVENT_TYPES.has(event.type)) continue;
        let endpoints = endpointsOf.get(event.workspaceId);
        if (!endpoints)
          endpointsOf.set(event.workspaceId, (endpoints = listEnabledEndpoints(tx, event.workspaceId)));
        for (const endpoint of endpoints) {
          if (!endpointMatches(endpoint, event)) continue;
          const inserted = insertDelivery(tx, newDelivery(endpoint, event, now, null));
          if (inserted) deliveries += 1;
        }
      }
      writeDispatchCursor(tx, events[events.length - 1]!.rowid);
      return { events: events.length, deliveries };
    });
    created += batch.deliveries;
    if (batch.events < BATCH) return created;
  }
}
