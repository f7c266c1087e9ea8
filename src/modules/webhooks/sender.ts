import { inGuardedTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { iso } from "../../lib/clock.ts";
import { attemptDelivery, claimBatch, type ClaimedBatch } from "./attempt.ts";
import { dispatchWebhookEvents } from "./dispatcher.ts";
import { OutcomeRecorder, type AttemptOutcome } from "./outcomes.ts";
import { observeWebhookAttempt } from "../metrics/metrics.ts";
import { releaseClaims, type DeliveryRow } from "./repo.ts";
import { senderRunning, type SenderRun } from "./wake.ts";

export { CLAIM_LEASE_MS } from "./attempt.ts";
export {
  DISABLED_FOR_FAILURES,
  RETRY_BASE_MS,
  RETRY_CAP_MS,
  RETRY_JITTER,
  RETRY_WINDOW_MS,
  retryDelayMs,
} from "./outcomes.ts";

/** Attempts sending at once per process. */
const CONCURRENCY = 16;
/**
 * Claimed deliveries waiting for a free slot, at most: the next ones are at hand when an attempt
 * ends, instead of each slot waiting for a claim transaction of its own.
 */
const READY = CONCURRENCY;
/** Outcomes waiting to be stored, at most, before claiming pauses (the database is behind). */
const UNSTORED = 4 * CONCURRENCY;
/** The longest an attempt takes: DNS (5 s), the exchange (10 s), and a margin. */
const ATTEMPT_MAX_MS = 20_000;
/** A run stops claiming new work after this long (the next tick carries on). */
const RUN_BUDGET_MS = 50_000;

interface Claimed {
  batch: ClaimedBatch;
  delivery: DeliveryRow;
}

/**
 * Fans new outbox events out into deliveries and sends what is due, CONCURRENCY attempts at a time,
 * until nothing is left (or the run's time budget is spent, or the server is stopping: attempts
 * under way then finish, and deliveries claimed but not started are handed back, due at once for
 * the next start). A wake (wake.ts) during the run makes it fan out and claim again. Returns how many
 * attempts it made.
 */
export function sendDueDeliveries(h: Herald, stopping?: AbortSignal): Promise<number> {
  return new DeliverySender(h, stopping).run();
}

/**
 * One run of the sender, as a pipeline: fan-out batches, claims, attempts and stores overlap. A claim
 * takes up to two slots' worth of deliveries at once, an attempt starts as soon as a slot is free,
 * and outcomes are stored in batches (outcomes.ts) while the next attempts are under way.
 * Every claimed delivery is attempted or handed back, and every attempt's outcome is stored (or has
 * failed to be) before the run ends.
 */
class DeliverySender implements SenderRun {
  private readonly started = Date.now();
  private readonly recorder: OutcomeRecorder;
  private ready: Claimed[] = [];
  private sending = 0;
  private storing = 0;
  private releasing = 0;
  private claiming = false;
  private dispatching = false;
  /** A wake came while fanning out: fan out once more after this pass. */
  private dispatchAgain = false;
  /** The last claim found fewer due deliveries than it asked for: none again until something changes. */
  private drained = false;
  private attempts = 0;
  private failure: unknown = null;
  private settle: (() => void) | null = null;

  constructor(
    private readonly h: Herald,
    private readonly stopping: AbortSignal | undefined,
  ) {
    this.recorder = new OutcomeRecorder(h);
  }

  run(): Promise<number> {
    const unregister = senderRunning(this.h.db, this);
    return new Promise((resolve, reject) => {
      this.settle = () => {
        unregister();
        if (this.failure) reject(this.failure);
        else resolve(this.attempts);
      };
      this.dispatch();
      this.pump();
    });
  }

  /** New work was committed in this process: fan it out and claim again (false: this run takes no more). */
  poke(): boolean {
    if (this.settle === null || !this.mayTakeWork()) return false;
    this.dispatch();
    return true;
  }

  /** Starts whatever may start now; runs at the start and whenever a step ends. */
  private pump(): void {
    if (this.settle === null) return;
    if (this.stopping?.aborted && this.ready.length > 0) this.release(this.ready.splice(0));
    const stale: Claimed[] = [];
    while (this.sending < CONCURRENCY && this.ready.length > 0) {
      const next = this.ready.shift()!;
      // An attempt must end within its lease, or another server may send the delivery meanwhile.
      if (next.delivery.nextAttemptAt! - this.h.clock.now() < ATTEMPT_MAX_MS) stale.push(next);
      else this.send(next);
    }
    if (stale.length > 0) this.release(stale);
    const room = CONCURRENCY + READY - this.sending - this.ready.length;
    const mayClaim =
      !this.claiming &&
      !this.drained &&
      this.failure === null &&
      this.ready.length <= READY / 2 &&
      this.storing < UNSTORED &&
      this.mayTakeWork();
    if (mayClaim && room > 0) this.claim(room);
    const busy =
      this.claiming ||
      this.dispatching ||
      this.sending + this.ready.length + this.storing + this.releasing > 0;
    if (!busy) {
      const settle = this.settle;
      this.settle = null;
      settle();
    }
  }

  private mayTakeWork(): boolean {
    return Date.now() - this.started < RUN_BUDGET_MS && !this.stopping?.aborted;
  }

  /** Fans out events not yet fanned out; each committed batch opens claiming again. */
  private dispatch(): void {
    if (this.settle === null || !this.mayTakeWork()) return;
    if (this.dispatching) {
      this.dispatchAgain = true;
      return;
    }
    this.dispatching = true;
    this.dispatchAgain = false;
    dispatchWebhookEvents(this.h, () => {
      this.drained = false;
      this.pump();
    })
      .catch((error) => {
        this.failure ??= error;
      })
      .finally(() => {
        this.dispatching = false;
        // Deliveries may also have come from elsewhere (a test event, a redelivery): claim again.
        this.drained = false;
        if (this.dispatchAgain) this.dispatch();
        this.pump();
      });
  }

  private claim(limit: number): void {
    this.claiming = true;
    claimBatch(this.h, limit)
      .then(
        (batch) => {
          for (const delivery of batch.deliveries) this.ready.push({ batch, delivery });
          if (batch.deliveries.length < limit) this.drained = true;
        },
        (error) => {
          this.failure ??= error;
        },
      )
      .finally(() => {
        this.claiming = false;
        this.pump();
      });
  }

  private send({ batch, delivery }: Claimed): void {
    this.sending += 1;
    this.attempts += 1;
    attemptDelivery(this.h, batch, delivery)
      .then((attempt) => {
        if (!attempt) return;
        const finishedAt = attempt.startedAt + attempt.outcome.durationMs;
        observeWebhookAttempt(this.h, { ...attempt.outcome, finishedAt }, delivery.createdAt);
        this.store(attempt);
      })
      .catch((error) => this.logUnexpected(delivery.id, error))
      .finally(() => {
        this.sending -= 1;
        // Something may have become due meanwhile (an expired lease, another process's event).
        this.drained = false;
        this.pump();
      });
  }

  private store(attempt: Omit<AttemptOutcome, "random">): void {
    this.storing += 1;
    this.recorder
      .record(attempt)
      .then((disabled) => {
        if (!disabled) return;
        this.h.logger.warn("webhook endpoint disabled after 3 days of failed deliveries", {
          endpoint_id: disabled.id,
          workspace_id: disabled.workspaceId,
          failing_since: iso(disabled.failingSince),
        });
      })
      .catch((error) => this.logUnexpected(attempt.deliveryId, error))
      .finally(() => {
        this.storing -= 1;
        this.pump();
      });
  }

  /** Hands claimed deliveries back, not attempted: due now, for whichever server runs next. */
  private release(claimed: Claimed[]): void {
    this.releasing += 1;
    const held = claimed.map(({ delivery }) => ({ id: delivery.id, leaseUntil: delivery.nextAttemptAt! }));
    inGuardedTransaction(this.h.db, (tx) => releaseClaims(tx, held, this.h.clock.now()))
      .catch((error) =>
        this.h.logger.error("webhook claims not handed back", { error: (error as Error).message }),
      )
      .finally(() => {
        this.releasing -= 1;
        this.pump();
      });
  }

  private logUnexpected(deliveryId: string, error: unknown): void {
    this.h.logger.error("webhook attempt failed unexpectedly", {
      delivery_id: deliveryId,
      error: (error as Error).message,
    });
  }
}
