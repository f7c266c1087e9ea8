// What an attempt leaves behind: the attempt in the delivery log, the delivery delivered, retried
// later or failed, and the endpoint's failure streak (which may disable it). Outcomes are stored in
// batches, one transaction for all those that finished while the previous batch was being written.
import type { Db } from "../../db/open.ts";
import { isPostgres } from "../../db/engine.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { iso } from "../../lib/clock.ts";
import { recordAudit } from "../audit/repo.ts";
import type { WebhookOutcome } from "./deliver.ts";
import { recordSuccessesPg } from "./repo-pg-batch.ts";
import { ENDPOINT_DISABLED_EVENT_TYPE } from "./present.ts";
import {
  clearEndpointFailing,
  failPendingDeliveries,
  findDeliveryById,
  findEndpointById,
  findWorkspaceAccountId,
  insertDeliveryAttempt,
  insertOutboxEvent,
  recordSuccessfulAttempts,
  updateDelivery,
  updateEndpoint,
  type EndpointRow,
} from "./repo.ts";
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

/** One finished attempt of a claimed delivery. */
export interface AttemptOutcome {
  deliveryId: string;
  endpointId: string;
  startedAt: number;
  outcome: WebhookOutcome;
  /** Drawn before the transaction, so a retried transaction schedules the same retry. */
  random: number;
}

interface Waiting {
  attempt: AttemptOutcome;
  resolve(disabled: EndpointRow | null): void;
  reject(error: unknown): void;
}

/**
 * Stores outcomes in batches: the first waits for no one; those that finish while a batch is being
 * written go together into the next one. One transaction per batch (on PostgreSQL, a batch of
 * successes is a single statement) instead of one per attempt, which was most of the sender's
 * database time.
 */
export class OutcomeRecorder {
  private waiting: Waiting[] = [];
  private writing: Promise<void> | null = null;

  constructor(private readonly h: Herald) {}

  /**
   * Stores one outcome; resolves once it is committed, with the endpoint when this attempt disabled
   * it. Rejects when the batch's transaction failed (the delivery then stays claimed until its
   * lease ends, and is attempted again).
   */
  record(attempt: Omit<AttemptOutcome, "random">): Promise<EndpointRow | null> {
    const random = webhookTransport(this.h).random();
    return new Promise((resolve, reject) => {
      this.waiting.push({ attempt: { ...attempt, random }, resolve, reject });
      this.writing ??= this.writeAll();
    });
  }

  private async writeAll(): Promise<void> {
    try {
      while (this.waiting.length > 0) await this.write(this.waiting.splice(0));
    } finally {
      this.writing = null;
    }
  }

  private async write(batch: Waiting[]): Promise<void> {
    let results: (EndpointRow | null)[];
    try {
      const attempts = batch.map((w) => w.attempt);
      results =
        isPostgres(this.h.db) && attempts.every((a) => a.outcome.ok)
          ? await storeSuccessesPg(this.h, attempts)
          : await inTransaction(this.h.db, (tx) => storeOutcomes(this.h, tx, attempts));
    } catch (error) {
      for (const w of batch) w.reject(error);
      return;
    }
    batch.forEach((w, i) => w.resolve(results[i]!));
  }
}

/**
 * A batch of successes on PostgreSQL: one statement on its own (atomic by itself), which also ends
 * the endpoints' failure streaks; the usual case, with three round trips fewer than a transaction.
 */
async function storeSuccessesPg(h: Herald, attempts: AttemptOutcome[]): Promise<null[]> {
  const now = h.clock.now();
  await recordSuccessesPg(
    h.db,
    attempts.map((a) => ({
      deliveryId: a.deliveryId,
      startedAt: a.startedAt,
      durationMs: a.outcome.durationMs,
      responseStatus: a.outcome.status!,
      now,
    })),
    { endStreaks: true },
  );
  return attempts.map(() => null);
}

/**
 * Stores outcomes in order: runs of successes together (recordSuccessfulAttempts), each failure on
 * its own. Returns, for each, the endpoint when that attempt disabled it.
 */
async function storeOutcomes(h: Herald, tx: Db, attempts: AttemptOutcome[]): Promise<(EndpointRow | null)[]> {
  const disabled: (EndpointRow | null)[] = attempts.map(() => null);
  // Endpoints whose failure streak this batch has ended already: one statement per endpoint.
  const notFailing = new Set<string>();
  let i = 0;
  while (i < attempts.length) {
    let end = i;
    while (end < attempts.length && attempts[end]!.outcome.ok) end += 1;
    if (end === i) {
      notFailing.delete(attempts[i]!.endpointId);
      disabled[i] = await storeFailure(h, tx, attempts[i]!);
      i += 1;
      continue;
    }
    // The receivers have these, whatever happened to the deliveries meanwhile.
    const now = h.clock.now();
    const endpointIds = await recordSuccessfulAttempts(
      tx,
      attempts.slice(i, end).map((a) => ({
        deliveryId: a.deliveryId,
        startedAt: a.startedAt,
        durationMs: a.outcome.durationMs,
        responseStatus: a.outcome.status!,
        now,
      })),
    );
    for (const id of endpointIds) {
      if (id === null || notFailing.has(id)) continue;
      await clearEndpointFailing(tx, id);
      notFailing.add(id);
    }
    i = end;
  }
  return disabled;
}

/**
 * A failed attempt and what follows from it: retried later; failed for good once its three days are
 * over; and, when the endpoint has not had one success in three days, the endpoint disabled.
 * Returns the endpoint when this attempt disabled it.
 */
async function storeFailure(h: Herald, tx: Db, attempt: AttemptOutcome): Promise<EndpointRow | null> {
  const { deliveryId, startedAt, outcome } = attempt;
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
    await updateDelivery(tx, deliveryId, {
      ...last,
      nextAttemptAt: now + retryDelayMs(number, attempt.random),
    });
  }
  return null;
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
