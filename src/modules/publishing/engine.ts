import { randomBytes } from "node:crypto";
import { xMonthlyLimit } from "../posts/x-usage.ts";
import { newId } from "../../db/ids.ts";
import { isPostgres } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { inGuardedTransaction, inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import type { DestinationRow } from "../destinations/repo.ts";
import {
  findAssets,
  findPostById,
  findStartedAttempts,
  finishAttempt,
  listDueReady,
  listExpiredLeases,
  listReceipts,
  type AttemptRow,
  type PostRow,
} from "../posts/repo.ts";
import type { PostState } from "../posts/states.ts";
import {
  editPostIfStill,
  transitionPost,
  transitionPosts,
  type PostChanges,
  type PostMoveRequest,
} from "../posts/transition.ts";
import { dailyCap, velocityDeferral } from "../posts/velocity.ts";
import { sealPending, unconfirmedItem } from "./pending.ts";
import { publishClaimedPost, type ClaimedPost } from "./publish-post.ts";
import { sendFirstComment } from "./first-comment.ts";
import { listDueComments } from "../posts/repo-comments.ts";
import {
  findDestinationRow,
  insertAttemptRows,
  listPreparing,
  nextDueAt,
  renewLeases,
  takeDue,
  takeReadyHeads,
  updateLeasedPost,
} from "./repo.ts";

/** Rows each bookkeeping pass reads at most. */
const BATCH = 200;
/** Publications whose outcomes are being written may number this many times the concurrency at most. */
const MAX_WRITING = 4;
/** Claim passes at once on PostgreSQL. */
const MAX_PASSES = 4;
/** Scheduled posts moved to ready per transaction (one transaction does not hold the writer long). */
const PROMOTE_BATCH = 100;

/**
 * The publishing engine of one process. Each `tick` looks in the database for due work (nothing is
 * kept only in memory): scheduled posts become ready or missed, preparing posts move on when their
 * assets are ready, expired leases are examined, and ready posts are claimed and published.
 */
export class PublishingEngine {
  /** This process's lease owner id. */
  readonly owner = `proc_${randomBytes(8).toString("hex")}`;
  /** Every publication of this process until its outcome is written (leases renewed, `drain` waits). */
  private running = new Map<string, Promise<void>>();
  /**
   * Publications still before or in their provider calls: what the concurrency limit counts. One
   * whose calls are done leaves it while its outcome is written, so a slot does not wait on a commit.
   */
  private calling = new Map<string, Promise<void>>();
  private lastTickAt: number | null = null;
  private stopped = false;
  /** Claim passes under way, and the slots they took between them (filled when their claims commit). */
  private passes = new Set<Promise<void>>();
  private reserved = 0;
  /** A slot freed while no further pass could start: one more pass when one ends. */
  private claimAgain = false;
  /** The wake-up at the next due time before the next tick, and when (wall clock) that tick comes. */
  private wake: ReturnType<typeof setTimeout> | null = null;
  private wakes = new Set<Promise<void>>();
  private nextTickAt = 0;

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
    await this.sendDueComments(now);
  }

  /**
   * First comments due and held by no live process (an automatic retry, a person's retry, one whose
   * process died): each is sent in the background like a publication (`drain` waits for it). The run
   * that publishes a post sends its comment itself, so this finds only those.
   */
  private async sendDueComments(now: number): Promise<void> {
    for (const comment of await listDueComments(this.h.db, now, BATCH)) {
      const key = `comment:${comment.id}`;
      if (this.running.has(key)) continue;
      const run: Promise<void> = sendFirstComment(this.h, this.owner, comment)
        .catch((error) =>
          this.h.logger.error("first comment crashed", {
            post_id: comment.postId,
            error: describeError(error),
          }),
        )
        .finally(() => this.running.delete(key));
      this.running.set(key, run);
    }
  }

  /** Stops claiming new work (publications under way finish; see `drain`). */
  stop(): void {
    this.stopped = true;
    if (this.wake) clearTimeout(this.wake);
    this.wake = null;
  }

  /**
   * A post due between two ticks would wait for the next one, up to a tick period late: after a
   * tick, the engine wakes at the next due time instead and promotes and claims what is due then,
   * and so on until the next tick (`periodMs` after this one). The scheduled job calls it; tests
   * that tick by hand on a manual clock get no timers.
   */
  async wakeUntilNextTick(periodMs: number): Promise<void> {
    this.nextTickAt = (this.lastTickAt ?? Date.now()) + periodMs;
    await this.wakeAtNextDue();
  }

  private async wakeAtNextDue(): Promise<void> {
    if (this.stopped) return;
    const now = this.h.clock.now();
    const due = [
      await nextDueAt(this.h.db, "scheduled", now),
      await nextDueAt(this.h.db, "ready", now),
      await nextDueAt(this.h.db, "awaiting-provider", now),
    ];
    const next = Math.min(...due.map((at) => at ?? Number.POSITIVE_INFINITY));
    const delay = Math.max(0, next - now);
    // The next tick looks anyway (a wake never comes after it, so wakes stop between ticks).
    if (!Number.isFinite(next) || Date.now() + delay >= this.nextTickAt) return;
    if (this.wake) clearTimeout(this.wake);
    this.wake = setTimeout(() => {
      this.wake = null;
      const waking: Promise<void> = this.wakeUp()
        .catch((e) => this.crashed(e))
        .finally(() => this.wakes.delete(waking));
      this.wakes.add(waking);
    }, delay);
    this.wake.unref?.();
  }

  private async wakeUp(): Promise<void> {
    if (this.stopped) return;
    const now = this.h.clock.now();
    await this.promoteScheduled(now);
    await this.claimReady(now);
    await this.wakeAtNextDue();
  }

  /** Waits until every publication this process started has finished. */
  async drain(): Promise<void> {
    while (this.running.size > 0 || this.passes.size > 0 || this.wakes.size > 0)
      await Promise.allSettled([...this.running.values(), ...this.passes, ...this.wakes]);
  }

  /** Ticks and drains until no due work is left (tests, `herald` operators). */
  async runUntilIdle(maxTicks = 50): Promise<void> {
    for (let i = 0; i < maxTicks; i++) {
      await this.tick();
      if (this.running.size === 0 && this.passes.size === 0) return;
      await this.drain();
    }
  }

  /** Health numbers: when this engine last looked, and how many posts it is publishing. */
  status() {
    return { last_tick_at: this.lastTickAt, in_flight: this.running.size };
  }

  /**
   * Scheduled posts at their time become ready, a batch per transaction until none is left (a burst
   * of thousands due at once is promoted in one tick, and publishing starts after the first batch);
   * those found too late (server was down) become missed.
   */
  private async promoteScheduled(now: number): Promise<void> {
    const tolerance = this.h.config.engine.missedToleranceMs;
    while (!this.stopped) {
      const promoted = await inGuardedTransaction(this.h.db, async (tx) => {
        const due = await takeDue(tx, "scheduled", now, PROMOTE_BATCH);
        const moves = due.map((post) =>
          now - post.scheduledAt! > tolerance
            ? missedMove(post, now)
            : { post, to: "ready" as const, changes: { nextActionAt: post.scheduledAt } },
        );
        if (moves.length > 0) await transitionPosts({ tx, xLimit: xMonthlyLimit(this.h.config), now, moves });
        return due.length;
      });
      if (promoted < PROMOTE_BATCH) break;
      void this.claimReady(this.h.clock.now()).catch((e) => this.crashed(e));
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
        await this.move(post, "missed", missedMove(post, now).changes, now);
    }
  }

  /** One engine move of a post through the state door, in its own write transaction. */
  private async move(post: PostRow, to: PostState, changes: PostChanges, now: number): Promise<void> {
    await inGuardedTransaction(this.h.db, (tx) =>
      transitionPost({ tx, xLimit: xMonthlyLimit(this.h.config), now, post, to, changes }),
    );
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
   * on one Herald can ask (`reconcileItem`) it is re-queued with its first unsent item marked, so the
   * next run looks that item up before sending anything; otherwise it needs attention with
   * `retry_safety: unsafe`. Never blindly re-run.
   */
  private async recoverExpiredLeases(now: number): Promise<void> {
    for (const post of await listExpiredLeases(this.h.db, now, BATCH)) {
      const adapter = this.h.providers.adapter(post.channel as never);
      const idempotent = adapter?.idempotentCreate ?? false;
      const recovered = await inGuardedTransaction(this.h.db, async (tx) => {
        const current = await findPostById(tx, post.id);
        if (!current || current.state !== "processing" || (current.leaseExpiresAt ?? 0) >= now) return false;
        // The dead run was checking an item the network holds: a check that can run again resumes.
        const sent = (await listReceipts(tx, [post.id])).length;
        if (adapter?.pendingChecksRepeatable && current.providerPending?.item_index === sent) {
          const changes = { nextActionAt: now };
          await transitionPost({
            tx,
            xLimit: xMonthlyLimit(this.h.config),
            now,
            post: current,
            to: "awaiting-provider",
            changes,
            quiet: true,
          });
          return true;
        }
        const started = await findStartedAttempts(tx, post.id);
        for (const attempt of started) {
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
        if (idempotent || adapter?.reconcileItem) {
          // Not idempotent: the item's call went out after the dead run's attempt started, and is
          // looked up from then on before anything is sent.
          const since = Math.min(now, ...started.map((a) => a.startedAt));
          const lookUp = idempotent
            ? {}
            : { providerPending: sealPending(this.h, unconfirmedItem(sent, since)) };
          const changes = { nextActionAt: now, nextTrigger: "recovery", ...lookUp };
          await transitionPost({
            tx,
            xLimit: xMonthlyLimit(this.h.config),
            now,
            post: current,
            to: "ready",
            changes,
          });
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
        await transitionPost({
          tx,
          xLimit: xMonthlyLimit(this.h.config),
          now,
          post: current,
          to: "needs-attention",
          changes,
        });
        return true;
      });
      // Another process may have recovered it first (its transaction saw the lease still expired).
      if (recovered)
        this.h.logger.warn("recovered a post from an expired lease", {
          post_id: post.id,
          requeued: idempotent || adapter?.reconcileItem !== undefined,
        });
    }
  }

  /** Keeps the leases of this process's running publications alive (one statement for all). */
  private async renewLeases(now: number): Promise<void> {
    const ids = [...this.running.keys()].filter((id) => !id.startsWith("comment:"));
    if (ids.length === 0) return;
    const until = now + this.h.config.engine.leaseMs;
    await inGuardedTransaction(this.h.db, (tx) => renewLeases(tx, ids, this.owner, until));
  }

  /**
   * Claims due ready posts up to the concurrency limit (one per destination, see `takeReadyHeads`),
   * deferring those over their destination's pace. A slot freed while a pass runs starts another
   * pass at once on PostgreSQL (passes skip each other's locked rows; a pass waits on round trips),
   * up to MAX_PASSES; on SQLite, whose writes run
   * one at a time, the next pass starts when the one under way ends and takes every slot freed
   * meanwhile. A caller waits for the passes under way (runUntilIdle must see their claims).
   */
  private claimReady(now: number): Promise<void> {
    const room = this.freeSlots();
    if (room <= 0 || this.passes.size >= (isPostgres(this.h.db) ? MAX_PASSES : 1)) {
      // Also when the passes under way hold every free slot: they may have read before what this
      // call is about (an outcome that frees a destination's next post), so one more pass looks.
      if (room > 0 || this.passes.size > 0) this.claimAgain = true;
      return Promise.allSettled([...this.passes]).then(() => {});
    }
    this.reserved += room;
    const pass: Promise<void> = this.claimPass(now, room).finally(() => {
      this.reserved -= room;
      this.passes.delete(pass);
      if (this.claimAgain && !this.stopped) {
        this.claimAgain = false;
        void this.claimReady(this.h.clock.now()).catch((e) => this.crashed(e));
      }
    });
    this.passes.add(pass);
    return pass;
  }

  /** Slots no publication and no pass under way holds. */
  private freeSlots(): number {
    const { concurrency } = this.h.config.engine;
    const calls = concurrency - this.calling.size;
    return Math.min(calls, MAX_WRITING * concurrency - this.running.size) - this.reserved;
  }

  /**
   * Claims up to the free slots in one transaction: each claimed post enters `processing` with this
   * process's lease and its attempt row is written, all committed before any provider call. Posts
   * whose destination has a pace (daily cap, minimum spacing) are claimed one at a time after, each
   * in a transaction that reads the pace it checks (SERIALIZABLE on PostgreSQL).
   */
  private async claimPass(now: number, room: number): Promise<void> {
    const paced: PostRow[] = [];
    const claimed = await inGuardedTransaction(this.h.db, async (tx) => {
      // Status checks of items the network is processing come first: they continue started attempts.
      const checks = await takeDue(tx, "awaiting-provider", now, room);
      const free: PostRow[] = [];
      const readyRoom = room - checks.length;
      // One publication per destination at a time, in due order: only heads of idle destinations.
      for (const post of readyRoom > 0 ? await takeReadyHeads(tx, now, readyRoom) : [])
        (this.paced(post) ? paced : free).push(post);
      if (free.length === 0 && checks.length === 0) return [];
      // Read in this transaction (and locked on PostgreSQL): the attempt count is the current one.
      const moves = [
        ...checks.map((post) => ({ post, to: "processing" as const, lease: this.lease(now), current: true })),
        ...free.map((post) => ({
          post,
          to: "processing" as const,
          current: true,
          lease: this.lease(now),
          changes: { attemptCount: post.attemptCount + 1 },
        })),
      ];
      const after = (await transitionPosts({ tx, xLimit: xMonthlyLimit(this.h.config), now, moves })).filter(
        (p) => p !== null,
      );
      const continued = await this.continueAttempts(
        tx,
        after.filter((p) => checks.some((c) => c.id === p.id)),
        now,
      );
      const started = await this.startAttempts(
        tx,
        after.filter((p) => !checks.some((c) => c.id === p.id)),
        now,
      );
      return [...continued, ...started];
    });
    const destinationOf = this.destinationReader();
    for (const run of claimed) this.start(run, destinationOf);
    for (const post of paced) {
      const run = await inTransaction(this.h.db, async (tx) => {
        const until = await velocityDeferral(this.h, tx, post, now);
        if (until !== null) {
          const deferral = {
            deferredReason: "publishing_velocity",
            deferredUntil: until,
            nextActionAt: until,
            updatedAt: now,
          };
          await editPostIfStill(tx, post.id, { state: "ready" }, deferral);
          return [];
        }
        // Claiming clears any deferral (the door keeps one only on a post entering `ready`).
        const after = await transitionPost({
          tx,
          xLimit: xMonthlyLimit(this.h.config),
          now,
          post,
          to: "processing",
          lease: this.lease(now),
        });
        if (!after) return [];
        // `post` was read before this transaction: the count is taken from the row as claimed.
        const count = { attemptCount: after.attemptCount + 1 };
        await updateLeasedPost(tx, post.id, this.owner, count);
        return this.startAttempts(tx, [{ ...after, ...count }], now);
      });
      for (const claimedPost of run) this.start(claimedPost, destinationOf);
    }
  }

  /** Reads each destination once for the posts of one claim pass. */
  private destinationReader(): (id: string) => Promise<DestinationRow | undefined> {
    const read = new Map<string, Promise<DestinationRow | undefined>>();
    return (id) => {
      let found = read.get(id);
      if (!found) read.set(id, (found = findDestinationRow(this.h.db, id)));
      return found;
    };
  }

  private lease(now: number) {
    return { owner: this.owner, until: now + this.h.config.engine.leaseMs };
  }

  /** Whether a post's claim must check its destination's pace (see `velocityDeferral`). */
  private paced(post: PostRow): boolean {
    return (
      post.destinationId !== null &&
      (dailyCap(this.h, post.channel) !== null || this.h.config.engine.minSpacingMs > 0)
    );
  }

  /**
   * In the claim's transaction: each claimed post's attempt (`started`, numbered by the count the
   * claim raised). An attempt is written before its provider call, so a run that dies leaves one
   * for recovery to read.
   */
  private async startAttempts(tx: Db, claimed: PostRow[], now: number): Promise<ClaimedPost[]> {
    if (claimed.length === 0) return [];
    // On PostgreSQL the receipts of every claimed post in one read (from the claim on, only this run
    // adds any); on SQLite each run reads its own with a prepared query, cheaper than building one.
    const receipts = isPostgres(tx)
      ? Map.groupBy(
          await listReceipts(
            tx,
            claimed.map((p) => p.id),
          ),
          (r) => r.postId,
        )
      : null;
    const runs: ClaimedPost[] = [];
    const rows: AttemptRow[] = [];
    for (const post of claimed) {
      const idempotent = this.h.providers.adapter(post.channel as never)?.idempotentCreate ?? true;
      const attempt = {
        id: newId("att"),
        postId: post.id,
        number: post.attemptCount,
        trigger: post.nextTrigger,
        status: "started",
        startedAt: now,
        finishedAt: null,
        retrySafety: idempotent ? "safe" : "unsafe",
        error: null,
        provider: null,
      };
      rows.push(attempt);
      runs.push({
        post,
        attemptId: attempt.id,
        receipts: receipts ? (receipts.get(post.id) ?? []) : undefined,
      });
    }
    await insertAttemptRows(tx, rows);
    return runs;
  }

  /**
   * In the claim's transaction: the attempt a status check continues (the one left `started` when
   * the post went to awaiting-provider), or a new one should it be missing.
   */
  private async continueAttempts(tx: Db, claimed: PostRow[], now: number): Promise<ClaimedPost[]> {
    const runs: ClaimedPost[] = [];
    for (const post of claimed) {
      const started = (await findStartedAttempts(tx, post.id)).sort((a, b) => b.number - a.number)[0];
      if (started) {
        runs.push({ post, attemptId: started.id });
        continue;
      }
      const count = { attemptCount: post.attemptCount + 1 };
      await updateLeasedPost(tx, post.id, this.owner, count);
      runs.push(...(await this.startAttempts(tx, [{ ...post, ...count }], now)));
    }
    return runs;
  }

  /** Runs one claimed post's publication in the background, in a slot until its calls are done. */
  private start(
    claimed: ClaimedPost,
    destinationOf: (id: string) => Promise<DestinationRow | undefined>,
  ): void {
    const id = claimed.post.id;
    // Fill a freed slot at once rather than at the next tick, so a backlog drains at full speed.
    const refill = () => {
      if (!this.stopped) void this.claimReady(this.h.clock.now()).catch((e) => this.crashed(e));
    };
    // Once this run's outcome is committed, the post can be claimed again (a status check due at
    // once) before the commit is acknowledged to this run: each run removes only its own entries.
    const forget = (entries: Map<string, Promise<void>>) => entries.get(id) === run && entries.delete(id);
    const callsDone = () => {
      if (forget(this.calling)) refill();
    };
    const run: Promise<void> = publishClaimedPost(this.h, this.owner, claimed, destinationOf, callsDone)
      .catch((error) =>
        this.h.logger.error("publishing crashed", { post_id: id, error: describeError(error) }),
      )
      .finally(() => {
        forget(this.running);
        forget(this.calling);
        refill();
      });
    this.calling.set(id, run);
    this.running.set(id, run);
  }

  private crashed(error: unknown): void {
    this.h.logger.error("claiming crashed", { error: describeError(error) });
  }
}

/** The move of a post found past its time with the missed tolerance: `missed`, never sent late. */
function missedMove(post: PostRow, now: number): PostMoveRequest & { changes: PostChanges } {
  const at = new Date(post.scheduledAt!).toISOString();
  const lastError = {
    code: "missed_schedule",
    message: `Herald was not running at ${at}; the post was not sent late. Reschedule or retry it.`,
    retryable: true,
    retry_safety: "safe",
    user_action: "reschedule",
  };
  return { post, to: "missed", changes: { missedAt: now, nextActionAt: null, lastError } };
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
