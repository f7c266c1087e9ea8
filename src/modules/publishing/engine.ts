import { randomBytes } from "node:crypto";
import { inGuardedTransaction, inTransaction } from "../../db/transaction.ts";
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
  private claiming: Promise<void> | null = null;
  private claimAgain = false;

  constructor(private readonly h: Herald) {}

  /** One pass over due work; publications it starts continue in the background (see `drain`). */
  async tick(): Promise<void> {
    if (this.stopped) return;
    const now = this.h.clock.now();
    this.lastTickAt = Date.now();
    await this.promoteScheduled(now);
    await this.advancePreparing(now);
    await this.recoverExpiredLeases(now);
    await this.renewLeases(now);
    await this.claimReady(now);
  }

  /** Stops claiming new work (publications under way finish; see `drain`). */
  stop(): void {
    this.stopped = true;
  }

  /** Waits until every publication this process started has finished. */
  async drain(): Promise<void> {
    while (this.running.size > 0 || this.claiming)
      await Promise.allSettled([...this.running.values(), this.claiming]);
  }

  /** Ticks and drains until no due work is left (tests, `herald` operators). */
  async runUntilIdle(maxTicks = 50): Promise<void> {
    for (let i = 0; i < maxTicks; i++) {
      await this.tick();
      if (this.running.size === 0 && !this.claiming) return;
      await this.drain();
    }
  }

  /** Health numbers: when this engine last looked, and how many posts it is publishing. */
  status() {
    return { last_tick_at: this.lastTickAt, in_flight: this.running.size };
  }

  /** Scheduled posts at their time become ready; those found too late (server was down) become missed. */
  private async promoteScheduled(now: number): Promise<void> {
    const tolerance = this.h.config.engine.missedToleranceMs;
    for (const post of await listDueScheduled(this.h.db, now, BATCH)) {
      if (now - post.scheduledAt! > tolerance) await this.markMissed(post, now);
      else await this.move(post, "ready", { nextActionAt: post.scheduledAt }, now);
    }
    // A ready post that never started and is long past its time was waiting on a stopped server, too.
    for (const post of await listDueReady(this.h.db, now - tolerance, BATCH)) {
      if (
        post.nextTrigger === "initial" &&
        post.attemptCount === 0 &&
        post.deferredReason === null &&
        post.scheduledAt !== null &&
        now - post.scheduledAt > tolerance
      )
        await this.markMissed(post, now);
    }
  }

  private async markMissed(post: PostRow, now: number): Promise<void> {
    const at = new Date(post.scheduledAt!).toISOString();
    const lastError = {
      code: "missed_schedule",
      message: `Herald was not running at ${at}; the post was not sent late. Reschedule or retry it.`,
      retryable: true,
      retry_safety: "safe",
      user_action: "reschedule",
    };
    await this.move(post, "missed", { missedAt: now, nextActionAt: null, lastError }, now);
  }

  /** One engine move of a post through the state door, in its own write transaction. */
  private async move(post: PostRow, to: PostState, changes: PostChanges, now: number): Promise<void> {
    await inGuardedTransaction(this.h.db, (tx) => transitionPost({ tx, now, post, to, changes }));
  }

  /** Preparing posts go on once every asset is ready, or need attention if their time comes first. */
  private async advancePreparing(now: number): Promise<void> {
    for (const post of await listPreparing(this.h.db, BATCH)) {
      const ids = post.assetItems.map((a) => a.asset_id);
      const assets = await findAssets(this.h.db, post.workspaceId, ids);
      const ready = assets.length === new Set(ids).size && assets.every((a) => a.status === "ready");
      if (ready) {
        const to = post.scheduledAt! <= now ? "ready" : "scheduled";
        await this.move(post, to, { nextActionAt: post.scheduledAt }, now);
      } else if (post.scheduledAt! <= now) {
        const lastError = {
          code: "assets_not_ready",
          message: "An attached asset was not uploaded by the scheduled time.",
          retryable: true,
          retry_safety: "safe",
          user_action: "retry",
        };
        await this.move(post, "needs-attention", { nextActionAt: null, lastError }, now);
      }
    }
  }

  /**
   * Posts whose publishing process died: an attempt left `started` may have reached the network.
   * On a network with idempotent creates the post is safely re-queued (receipts keep finished items);
   * otherwise it needs attention with `retry_safety: unsafe`. Never blindly re-run.
   */
  private async recoverExpiredLeases(now: number): Promise<void> {
    for (const post of await listExpiredLeases(this.h.db, now, BATCH)) {
      const idempotent = this.h.providers.adapter(post.channel as never)?.idempotentCreate ?? false;
      const recovered = await inGuardedTransaction(this.h.db, async (tx) => {
        const current = await findPostById(tx, post.id);
        if (!current || current.state !== "processing" || (current.leaseExpiresAt ?? 0) >= now) return false;
        for (const attempt of await findStartedAttempts(tx, post.id)) {
          await finishAttempt(tx, attempt.id, {
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
          await transitionPost({ tx, now, post: current, to: "ready", changes });
          return true;
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
        await transitionPost({ tx, now, post: current, to: "needs-attention", changes });
        return true;
      });
      // Another process may have recovered it first (its transaction saw the lease still expired).
      if (recovered)
        this.h.logger.warn("recovered a post from an expired lease", {
          post_id: post.id,
          requeued: idempotent,
        });
    }
  }

  /** Keeps the leases of this process's running publications alive. */
  private async renewLeases(now: number): Promise<void> {
    const until = now + this.h.config.engine.leaseMs;
    for (const id of [...this.running.keys()])
      await inGuardedTransaction(this.h.db, (tx) => renewLease(tx, id, this.owner, until));
  }

  /** Claims due ready posts up to the concurrency limit, deferring those over their destination's pace. */
  private claimReady(now: number): Promise<void> {
    // One claim pass at a time in this process: a slot freed mid-pass asks for another pass, and
    // a caller arriving meanwhile waits for the pass under way (runUntilIdle must see its claims).
    if (this.claiming) {
      this.claimAgain = true;
      return this.claiming;
    }
    this.claiming = (async () => {
      try {
        do {
          this.claimAgain = false;
          await this.claimPass(now);
          now = this.h.clock.now();
        } while (this.claimAgain && !this.stopped);
      } finally {
        this.claiming = null;
      }
    })();
    return this.claiming;
  }

  private async claimPass(now: number): Promise<void> {
    const room = this.h.config.engine.concurrency - this.running.size;
    if (room <= 0) return;
    for (const post of await listDueReady(this.h.db, now, room * 2)) {
      if (this.running.size >= this.h.config.engine.concurrency) break;
      if (this.running.has(post.id)) continue;
      const claimed = await inTransaction(this.h.db, async (tx) => {
        const until = await velocityDeferral(this.h, tx, post, now);
        if (until !== null) {
          const deferral = {
            deferredReason: "publishing_velocity",
            deferredUntil: until,
            nextActionAt: until,
            updatedAt: now,
          };
          await editPostIfStill(tx, post.id, { state: "ready" }, deferral);
          return false;
        }
        // Claiming clears any deferral (the door keeps one only on a post entering `ready`).
        const lease = { owner: this.owner, until: now + this.h.config.engine.leaseMs };
        return (await transitionPost({ tx, now, post, to: "processing", lease })) !== null;
      });
      if (!claimed) continue;
      const run = publishClaimedPost(this.h, this.owner, post.id)
        .catch((error) =>
          this.h.logger.error("publishing crashed", {
            post_id: post.id,
            error: describeError(error),
          }),
        )
        .finally(() => {
          this.running.delete(post.id);
          // Fill the freed slot at once rather than at the next tick, so a backlog drains at full speed.
          if (!this.stopped) void this.claimReady(this.h.clock.now()).catch((e) => this.crashed(e));
        });
      this.running.set(post.id, run);
    }
  }

  private crashed(error: unknown): void {
    this.h.logger.error("claiming crashed", { error: describeError(error) });
  }
}

/** An error's stack with the errors it wraps (drizzle wraps the driver's error, which has the SQLSTATE). */
function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e !== undefined && parts.length < 4; e = (e as { cause?: unknown }).cause) {
    const code = (e as { errno?: unknown; code?: unknown }).errno ?? (e as { code?: unknown }).code;
    parts.push((e instanceof Error ? (e.stack ?? e.message) : String(e)) + (code ? ` [${code}]` : ""));
    if (!(e instanceof Error)) break;
  }
  return parts.join("\ncaused by: ");
}
