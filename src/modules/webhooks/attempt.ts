// Claiming due deliveries and making one attempt of one: sign, check the URL, send.
import { isPostgres } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { inGuardedTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { deliverWebhook } from "./deliver.ts";
import type { AttemptOutcome } from "./outcomes.ts";
import { renderEventBody } from "./present.ts";
import {
  claimDueDeliveries,
  findEndpointsByIds,
  updateDelivery,
  type DeliveryRow,
  type EndpointRow,
} from "./repo.ts";
import { activeSecrets } from "./service.ts";
import { signatureHeader } from "./signing.ts";
import { webhookTransport } from "./transport.ts";

/** A claimed delivery is not due again for this long (an attempt takes at most ~15 s: DNS + 10 s). */
export const CLAIM_LEASE_MS = 30_000;

/**
 * Deliveries claimed together, with what their attempts share: the endpoints as they were at the
 * claim, and each signing secret unsealed once (not once per delivery).
 */
export interface ClaimedBatch {
  deliveries: DeliveryRow[];
  endpoints: Map<string, EndpointRow>;
  unsealed: Map<string, string>;
}

/**
 * Claims up to `limit` due deliveries and reads their endpoints. On SQLite in one transaction (the
 * writer commits it with others); on PostgreSQL the claim is a single statement on its own, atomic
 * by itself and at READ COMMITTED as in the guarded transaction, and the endpoints are read after
 * it: three round trips fewer per claim (BEGIN, the isolation level, COMMIT), which bounded the
 * sender there.
 */
export function claimBatch(h: Herald, limit: number): Promise<ClaimedBatch> {
  const claim = async (db: Db): Promise<ClaimedBatch> => {
    const now = h.clock.now();
    const deliveries = await claimDueDeliveries(db, now, now + CLAIM_LEASE_MS, limit);
    const endpointIds = [...new Set(deliveries.map((d) => d.endpointId))];
    const endpoints = await findEndpointsByIds(db, endpointIds);
    return { deliveries, endpoints: new Map(endpoints.map((e) => [e.id, e])), unsealed: new Map() };
  };
  return isPostgres(h.db) ? claim(h.db) : inGuardedTransaction(h.db, claim);
}

/**
 * One attempt of one claimed delivery: sign and send (the URL rules and DNS run again first, in
 * deliverWebhook). Returns what to store, or null when there is no attempt to store: the endpoint
 * is gone, or disabled (the delivery is failed here).
 */
export async function attemptDelivery(
  h: Herald,
  batch: ClaimedBatch,
  delivery: DeliveryRow,
): Promise<Omit<AttemptOutcome, "random"> | null> {
  const endpoint = batch.endpoints.get(delivery.endpointId);
  if (!endpoint) return null; // deleted meanwhile: its deliveries went with it
  if (!endpoint.enabled) {
    await inGuardedTransaction(h.db, (tx) =>
      updateDelivery(tx, delivery.id, {
        status: "failed",
        failedAt: h.clock.now(),
        nextAttemptAt: null,
        lastError: "endpoint disabled",
      }),
    );
    return null;
  }
  const startedAt = h.clock.now();
  const body = renderEventBody(delivery, endpoint.contentMode);
  const unseal = (sealed: string) => {
    let secret = batch.unsealed.get(sealed);
    if (secret === undefined) batch.unsealed.set(sealed, (secret = h.secrets.decrypt(sealed)));
    return secret;
  };
  const headers = {
    "content-type": "application/json",
    "user-agent": `Herald/${h.version} (+webhooks)`,
    "service-event-id": delivery.eventId,
    "service-delivery-id": delivery.id,
    "service-signature": signatureHeader(
      activeSecrets(endpoint, startedAt, unseal),
      Math.floor(startedAt / 1000),
      body,
    ),
  };
  const outcome = await deliverWebhook(webhookTransport(h), h.config.devAllowPrivateNetwork, {
    url: endpoint.url,
    body,
    headers,
  });
  return { deliveryId: delivery.id, endpointId: endpoint.id, startedAt, outcome };
}
