import { randomBytes } from "node:crypto";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import {
  findAssets,
  findPostById,
  findStartedAttempts,
  finishAttempt,
  listDueReady,
  listDueScheduled,
  listExpiredLeases,
  renewLease,
  type PostRow,
} from "../posts/repo.ts";
import type { PostState } from "../posts/states.ts";
import { editPostIfStill, transitionPost, type PostChanges } from "../posts/transition.ts";
import { velocityDeferral } from "../posts/velocity.ts";
import { publishClaimedPost } from "./publish-post.ts";
import { listPreparing } from "./repo.ts";

const BATCH = 200;

/**
 * The publishing engine of one process. Each `tick` looks in the database for due work (nothing is
 * kept only in memory): scheduled posts become ready or missed, preparing posts move on when their
 * assets are ready, expired leases are examined, and ready posts are claimed and published.
 */
export class PublishingEngine {
  /** This process's lease owner id. */
  readonly owner = `proc_${randomBytes(8).toString("hex")}`;
  private running = new Map<string, Promise<void>>();
  private lastTickAt: number | null = null;
  private stopped = false;

  constructor(private readonly h: Herald) {}

  /** One pass over due work; publications it starts continue in the background (see `drain`). */
  async tick(): Promise<void> {
    if (this.stopped) return;
    const now = this.h.clock.now();
    this.lastTickAt = Date.now();
    this.promoteScheduled(now);
    this.advancePreparing(now);
    this.recoverExpiredLeases(now);
    this.renewLeases(now);
    this.claimReady(now);
  }

  /** Stops claiming new work (publications under way finish; see `drain`). */
  stop(): void {
    this.stopped = true;
  }

  /** Waits until every publication this process started has finished. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  /** Ticks and drains until no due work is left (tests, `herald` operators). */
  async runUntilIdle(maxTicks = 50): Promise<void> {
    for (let i = 0; i < maxTicks; i++) {
      await this.tick();
      if (this.running.size === 0) return;
      await this.drain();
    }
  }

  /** Health numbers: when this engine last looked, and how many posts it is publishing. */
  status() {
    return { last_tick_at: this.lastTickAt, in_flight: this.running.size };
  }

  /** Scheduled posts at their time become ready; those found too late (server was down) become missed. */
  private promoteScheduled(now: number): void {
    const tolerance = this.h.config.engine.missedToleranceMs;
    for (const post of listDueScheduled(this.h.db, now, BATCH)) {
      if (now - post.scheduledAt! > tolerance) this.markMissed(post, now);
      else this.move(post, "ready", { nextActionAt: post.scheduledAt }, now);
    }
    // A ready post that never started and is long past its time was waiting on a stopped server, too.
    for (const post of listDueReady(this.h.db, now - tolerance, BATCH)) {
      if (
        post.nextTrigger === "initial" &&
        post.attemptCount === 0 &&
        post.deferredReason === null &&
        post.scheduledAt !== null &&
        now - post.scheduledAt > tolerance
      )
        this.markMissed(post, now);
    }
  }

  private markMissed(post: PostRow, now: number): void {
    const at = new Date(post.scheduledAt!).toISOString();
    const lastError = {
      code: "missed_schedule",
      message: `Herald was not running at ${at}; the post was not sent late. Reschedule or retry it.`,
      retryable: true,
      retry_safety: "safe",
      user_action: "reschedule",
    };
    this.move(post, "missed", { missedAt: now, nextActionAt: null, lastError }, now);
  }

  /** One engine move of a post through the state door, in its own write transaction. */
  private move(post: PostRow, to: PostState, changes: PostChanges, now: number): void {
    inTransaction(this.h.db, (tx) => transitionPost({ tx, now, post, to, changes }));
  }

  /** Preparing posts go on once every asset is ready, or need attention if their time comes first. */
  private advancePreparing(now: number): void {
    for (const post of listPreparing(this.h.db, BATCH)) {
      const ids = post.assetItems.map((a) => a.asset_id);
      const assets = findAssets(this.h.db, post.workspaceId, ids);
      const ready = assets.length === new Set(ids).size && assets.every((a) => a.status === "ready");
      if (ready) {
        const to = post.scheduledAt! <= now ? "ready" : "scheduled";
        this.move(post, to, { nextActionAt: post.scheduledAt }, now);
      } else if (post.scheduledAt! <= now) {
        const lastError = {
          code: "assets_not_ready",
          message: "An attached asset was not uploaded by the scheduled time.",
          retryable: true,
          retry_safety: "safe",
          user_action: "retry",
        };
        this.move(post, "needs-attention", { nextActionAt: null, lastError }, now);
      }
    }
  }

  /**
   * Posts whose publishing process died: an attempt left `started` may have reached the network.
   * On a network with idempotent creates the post is safely re-queued (receipts keep finished items);
   * otherwise it needs attention with `retry_safety: unsafe`. Never blindly re-run.
   */
  private recoverExpiredLeases(now: number): void {
    for (const post of listExpiredLeases(this.h.db, now, BATCH)) {
      const idempotent = this.h.providers.adapter(post.channel as never)?.idempotentCreate ?? false;
      inTransaction(this.h.db, (tx) => {
        const current = findPostById(tx, post.id);
        if (!current || current.state !== "processing" || (current.leaseExpiresAt ?? 0) >= now) return;
        for (const attempt of findStartedAttempts(tx, post.id)) {
          finishAttempt(tx, attempt.id, {
            status: idempotent ? "failed" : "outcome_unknown",
            finishedAt: now,
            retrySafety: idempotent ? "safe" : "unsafe",
            error: {
              code: "publishing_interrupted",
              message: "Herald stopped while this attempt was running.",
              retryable: true,
              user_action: idempotent ? "retry" : "inspect_resource",
            },
            provider: null,
          });
        }
        if (idempotent) {
          const changes = { nextActionAt: now, nextTrigger: "recovery" };
          transitionPost({ tx, now, post: current, to: "ready", changes });
          return;
        }
        const lastError = {
          code: "provider_outcome_unknown",
          message:
            "Herald stopped while publishing; the network may or may not have the post. " +
            "Check it before retrying.",
          retryable: true,
          retry_safety: "unsafe",
          user_action: "inspect_resource",
        };
        const changes: PostChanges = { nextActionAt: null, retrySafety: "unsafe", lastError };
        transitionPost({ tx, now, post: current, to: "needs-attention", changes });
      });
      this.h.logger.warn("recovered a post from an expired lease", {
        post_id: post.id,
        requeued: idempotent,
      });
    }
  }

  /** Keeps the leases of this process's running publications alive. */
  private renewLeases(now: number): void {
    for (const id of this.running.keys())
      renewLease(this.h.db, id, this.owner, now + this.h.config.engine.leaseMs);
  }

  /** Claims due ready posts up to the concurrency limit, deferring those over their destination's pace. */
  private claimReady(now: number): void {
    const room = this.h.config.engine.concurrency - this.running.size;
    if (room <= 0) return;
    for (const post of listDueReady(this.h.db, now, room * 2)) {
      if (this.running.size >= this.h.config.engine.concurrency) break;
      if (this.running.has(post.id)) continue;
      const claimed = inTransaction(this.h.db, (tx) => {
        const until = velocityDeferral(this.h, tx, post, now);
        if (until !== null) {
          const deferral = {
            deferredReason: "publishing_velocity",
            deferredUntil: until,
            nextActionAt: until,
            updatedAt: now,
          };
          editPostIfStill(tx, post.id, { state: "ready" }, deferral);
          return false;
        }
        // Claiming clears any deferral (the door keeps one only on a post entering `ready`).
        const lease = { owner: this.owner, until: now + this.h.config.engine.leaseMs };
        return transitionPost({ tx, now, post, to: "processing", lease }) !== null;
      });
      if (!claimed) continue;
      const run = publishClaimedPost(this.h, this.owner, post.id)
        .catch((error) =>
          this.h.logger.error("publishing crashed", {
            post_id: post.id,
            error: (error as Error).stack ?? String(error),
          }),
        )
        .finally(() => {
          this.running.delete(post.id);
          // Fill the freed slot at once rather than at the next tick, so a backlog drains at full speed.
          if (!this.stopped) this.claimReady(this.h.clock.now());
        });
      this.running.set(post.id, run);
    }
  }
}
