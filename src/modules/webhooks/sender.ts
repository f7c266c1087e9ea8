import type { Db } from "../../db/open.ts";
import { inGuardedTransaction, inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { iso } from "../../lib/clock.ts";
import { recordAudit } from "../audit/repo.ts";
import { deliverWebhook, type WebhookOutcome } from "./deliver.ts";
import { ENDPOINT_DISABLED_EVENT_TYPE, renderEventBody } from "./present.ts";
import {
  claimDueDeliveries,
  failPendingDeliveries,
  findDeliveryById,
  findEndpointById,
  findWorkspaceAccountId,
  insertDeliveryAttempt,
  insertOutboxEvent,
  updateDelivery,
  updateEndpoint,
  type DeliveryRow,
  type EndpointRow,
} from "./repo.ts";
import { activeSecrets } from "./service.ts";
import { signatureHeader } from "./signing.ts";
import { webhookTransport } from "./transport.ts";

/** First retry delay; each later one doubles it. */
export const RETRY_BASE_MS = 30_000;
/** The longest wait between two attempts. */
export const RETRY_CAP_MS = 4 * 60 * 60 * 1000;
/** Each delay is its nominal value ± this fraction, at random. */
export const RETRY_JITTER = 0.2;
/**
 * How long a delivery is retried (from its creation), and how long an endpoint may fail without a
 * single success before Herald disables it: about three days.
 */
export const RETRY_WINDOW_MS = 72 * 60 * 60 * 1000;
/** A claimed delivery is not due again for this long (an attempt takes at most ~15 s: DNS + 10 s). */
export const CLAIM_LEASE_MS = 30_000;
/** Attempts in flight at once per process. */
const CONCURRENCY = 16;
/** A run stops claiming new work after this long (the next tick carries on). */
const RUN_BUDGET_MS = 50_000;

/** Why deliveries end when Herald disables their endpoint. */
export const DISABLED_FOR_FAILURES = "endpoint disabled after 3 days of failed deliveries";

/**
 * The wait before retry number `retry` (1-based): 30 s doubling up to 4 h, then every 4 h, each ±20 %
 * (`random` in [0, 1); 0.5 gives the nominal value).
 */
export function retryDelayMs(retry: number, random: number): number {
  const nominal = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** (retry - 1));
  return Math.round(nominal * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random));
}

/**
 * Sends due deliveries, CONCURRENCY at a time, claiming more as slots free up, until nothing is due
 * (or the run's time budget is spent, or the server is stopping: attempts under way then finish and
 * the rest stay due for the next start). Returns how many attempts it made.
 */
export async function sendDueDeliveries(h: Herald, stopping?: AbortSignal): Promise<number> {
  const started = Date.now();
  const running = new Set<Promise<void>>();
  let attempts = 0;
  for (;;) {
    const free = CONCURRENCY - running.size;
    const claimed =
      free > 0 && Date.now() - started < RUN_BUDGET_MS && !stopping?.aborted
        ? await inGuardedTransaction(h.db, (tx) => {
            const now = h.clock.now();
            return claimDueDeliveries(tx, now, now + CLAIM_LEASE_MS, free);
          })
        : [];
    for (const delivery of claimed) {
      attempts += 1;
      const attempt: Promise<void> = attemptDelivery(h, delivery)
        .catch((error) =>
          h.logger.error("webhook attempt failed unexpectedly", {
            delivery_id: delivery.id,
            error: (error as Error).message,
          }),
        )
        .finally(() => running.delete(attempt));
      running.add(attempt);
    }
    if (running.size === 0) return attempts;
    if (claimed.length === 0 || running.size >= CONCURRENCY) await Promise.race(running);
  }
}

/** One attempt of one claimed delivery: sign, send, record the outcome. */
async function attemptDelivery(h: Herald, delivery: DeliveryRow): Promise<void> {
  const endpoint = await findEndpointById(h.db, delivery.endpointId);
  if (!endpoint) return; // deleted meanwhile: its deliveries went with it
  if (!endpoint.enabled) {
    await inGuardedTransaction(h.db, (tx) =>
      updateDelivery(tx, delivery.id, {
        status: "failed",
        failedAt: h.clock.now(),
        nextAttemptAt: null,
        lastError: "endpoint disabled",
      }),
    );
    return;
  }
  const startedAt = h.clock.now();
  const body = renderEventBody(delivery, endpoint.contentMode);
  const headers = {
    "content-type": "application/json",
    "user-agent": `Herald/${h.version} (+webhooks)`,
    "service-event-id": delivery.eventId,
    "service-delivery-id": delivery.id,
    "service-signature": signatureHeader(
      activeSecrets(h, endpoint, startedAt),
      Math.floor(startedAt / 1000),
      body,
    ),
  };
  const outcome = await deliverWebhook(webhookTransport(h), h.config.devAllowPrivateNetwork, {
    url: endpoint.url,
    body,
    headers,
  });
  const disabled = await recordOutcome(h, delivery.id, startedAt, outcome);
  if (disabled) {
    h.logger.warn("webhook endpoint disabled after 3 days of failed deliveries", {
      endpoint_id: disabled.id,
      workspace_id: disabled.workspaceId,
      failing_since: iso(disabled.failingSince),
    });
  }
}

/**
 * Stores an attempt and what follows from it: delivered; retried later; failed for good once its
 * three days are over; and, when the endpoint has not had one success in three days, the endpoint
 * disabled. Returns the endpoint when this attempt disabled it.
 */
function recordOutcome(
  h: Herald,
  deliveryId: string,
  startedAt: number,
  outcome: WebhookOutcome,
): Promise<EndpointRow | null> {
  // Drawn before the transaction, so a retried transaction schedules the same retry.
  const random = webhookTransport(h).random();
  return inTransaction(h.db, async (tx) => {
    const delivery = await findDeliveryById(tx, deliveryId);
    const endpoint = delivery && (await findEndpointById(tx, delivery.endpointId));
    if (!delivery || !endpoint) return null;
    const now = h.clock.now();
    const number = delivery.attemptCount + 1;
    await insertDeliveryAttempt(tx, {
      deliveryId,
      number,
      startedAt,
      durationMs: outcome.durationMs,
      responseStatus: outcome.status,
      error: outcome.error,
    });
    const last = {
      attemptCount: number,
      lastAttemptAt: startedAt,
      lastResponseStatus: outcome.status,
      lastError: outcome.error,
      lastDurationMs: outcome.durationMs,
    };
    if (outcome.ok) {
      // The receiver has it, whatever happened to the delivery meanwhile.
      await updateDelivery(tx, deliveryId, {
        ...last,
        status: "succeeded",
        deliveredAt: now,
        nextAttemptAt: null,
        failedAt: null,
      });
      if (endpoint.failingSince !== null) await updateEndpoint(tx, endpoint.id, { failingSince: null });
      return null;
    }
    if (delivery.status !== "pending") {
      await updateDelivery(tx, deliveryId, last);
      return null;
    }
    const failingSince = endpoint.failingSince ?? startedAt;
    if (endpoint.enabled && now - failingSince >= RETRY_WINDOW_MS) {
      await updateDelivery(tx, deliveryId, { ...last, status: "failed", failedAt: now, nextAttemptAt: null });
      return disableFailingEndpoint(tx, { ...endpoint, failingSince }, now);
    }
    if (endpoint.failingSince === null) await updateEndpoint(tx, endpoint.id, { failingSince });
    if (now - delivery.createdAt >= RETRY_WINDOW_MS) {
      await updateDelivery(tx, deliveryId, { ...last, status: "failed", failedAt: now, nextAttemptAt: null });
    } else {
      await updateDelivery(tx, deliveryId, { ...last, nextAttemptAt: now + retryDelayMs(number, random) });
    }
    return null;
  });
}

/**
 * Disables an endpoint that has failed for three days: its pending deliveries fail, the change is
 * audited (as Herald's own write), and a `webhook_endpoint.disabled` event goes into the outbox for
 * the workspace's chat notification. Call inside the transaction of the failed attempt.
 */
async function disableFailingEndpoint(tx: Db, endpoint: EndpointRow, now: number): Promise<EndpointRow> {
  const changes = {
    enabled: false,
    disabledReason: "delivery_failures",
    failingSince: endpoint.failingSince,
    configVersion: endpoint.configVersion + 1,
    updatedAt: now,
  };
  await updateEndpoint(tx, endpoint.id, changes);
  await failPendingDeliveries(tx, endpoint.id, now, DISABLED_FOR_FAILURES);
  const accountId = await findWorkspaceAccountId(tx, endpoint.workspaceId);
  if (accountId) {
    await recordAudit(
      tx,
      { accountId, credentialId: null, requestId: null },
      {
        action: "webhook_endpoint.disabled",
        workspaceId: endpoint.workspaceId,
        targetType: "webhook_endpoint",
        targetId: endpoint.id,
      },
      now,
    );
  }
  await insertOutboxEvent(
    tx,
    {
      workspaceId: endpoint.workspaceId,
      type: ENDPOINT_DISABLED_EVENT_TYPE,
      payload: {
        id: endpoint.id,
        object: "webhook_endpoint",
        name: endpoint.name,
        url: endpoint.url,
        disabled_reason: "delivery_failures",
        failing_since: iso(endpoint.failingSince),
      },
    },
    now,
  );
  return { ...endpoint, ...changes };
}
