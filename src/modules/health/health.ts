// GET /health: 200 when this process can serve, 503 with the reasons when it cannot (docs/operations.md).
// Two things make it unhealthy: the database does not answer a bounded query, or the scheduler's
// heartbeat (its most frequent job starting a run) has been missing for STUCK_AFTER_BEATS intervals.
// A full, nearly full or read-only data directory, and a failed sync of SQLite's WAL (writes refused
// until a restart), are listed in `warnings` (storage.ts says why not 503).
import { engineOf } from "../../db/engine.ts";
import type { Herald } from "../../herald.ts";
import { iso } from "../../lib/clock.ts";
import type { Scheduler } from "../../jobs/scheduler.ts";
import { countPendingMail } from "../mail/repo.ts";
import { dueWork } from "../posts/repo.ts";
import type { PublishingEngine } from "../publishing/engine.ts";
import { webhookBacklog } from "../webhooks/repo.ts";
import { storageReport, storageWarning } from "./storage.ts";

/** Missed beats before the scheduler counts as stuck: 30 s for the one-second publishing engine. */
export const STUCK_AFTER_BEATS = 30;
/** How long the database may take to answer the health queries. */
export const DATABASE_TIMEOUT_MS = 2_000;

export interface HealthReason {
  code: "database_unreachable" | "scheduler_stuck";
  detail: string;
}

/** Resolves `work`, or rejects after `ms` (the work itself is not cancelled). */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** The numbers read from the database, or the error that stopped them. */
async function databaseNumbers(h: Herald, now: number) {
  const read = async () => {
    await engineOf(h.db).ping();
    const [due, backlog, mail] = await Promise.all([
      dueWork(h.db, now),
      webhookBacklog(h.db),
      countPendingMail(h.db),
    ]);
    return { due, backlog, mail };
  };
  try {
    return { ok: true as const, ...(await withTimeout(read(), DATABASE_TIMEOUT_MS, "the database")) };
  } catch (error) {
    // The body is public: a driver's message could name a connection URL with its password.
    const message = (error as Error).message.replace(/\/\/[^\s/@]*@/g, "//***@");
    h.logger.warn("health: the database did not answer", { error: message });
    return { ok: false as const, error: message };
  }
}

/** The scheduler's part of the report, and the reason it is stuck if it is. */
function schedulerReport(scheduler: Scheduler | null, wallNow: number) {
  const beat = scheduler?.heartbeat() ?? null;
  if (!beat) return { report: null, reason: null };
  const age = beat.last_beat_at === null ? null : Math.max(0, wallNow - beat.last_beat_at);
  const stuckAfter = STUCK_AFTER_BEATS * beat.interval_ms;
  const stuck = beat.started && age !== null && age > stuckAfter;
  const report = {
    state: !beat.started ? "manual" : stuck ? "stuck" : "ok",
    heartbeat_job: beat.job,
    interval_ms: beat.interval_ms,
    last_heartbeat_at: iso(beat.last_beat_at),
    heartbeat_age_ms: age,
    stuck_after_ms: stuckAfter,
  };
  const reason: HealthReason | null = stuck
    ? {
        code: "scheduler_stuck",
        detail: `the ${beat.job} job has not started for ${age} ms (every ${beat.interval_ms} ms expected)`,
      }
    : null;
  return { report, reason };
}

/** The health report: the HTTP status and the JSON body. */
export async function healthReport(
  h: Herald,
  parts: { scheduler: Scheduler | null; engine: PublishingEngine | null },
): Promise<{ status: 200 | 503; body: Record<string, unknown> }> {
  const now = h.clock.now();
  const wallNow = Date.now();
  const db = await databaseNumbers(h, now);
  const scheduler = schedulerReport(parts.scheduler, wallNow);
  const jobs = parts.scheduler?.report() ?? [];
  const engine = parts.engine?.status() ?? null;
  const reasons: HealthReason[] = [];
  if (!db.ok) reasons.push({ code: "database_unreachable", detail: db.error });
  if (scheduler.reason) reasons.push(scheduler.reason);
  const storage = storageReport(h.config);
  const warning = storageWarning(storage);
  // A storage fault like the others (a warning, see storage.ts), but one only a restart clears.
  const writeFailure = engineOf(h.db).writeFailure();
  const warnings = [
    ...(writeFailure
      ? [{ code: "storage_sync_failed", detail: `${writeFailure} (once the disk is fixed)` }]
      : []),
    ...(warning ? [warning] : []),
  ];
  const body = {
    status: reasons.length === 0 ? "ok" : "unavailable",
    reasons,
    warnings,
    version: h.version,
    time: iso(now),
    database: db.ok ? "ok" : "error",
    storage,
    scheduler: scheduler.report,
    jobs: jobs.map((j) => ({
      id: j.id,
      last_started_at: iso(j.last_started_at),
      last_finished_at: iso(j.last_finished_at),
      failed: j.last_error !== null,
    })),
    mail_outbox_backlog: db.ok ? db.mail : null,
    webhooks: db.ok
      ? {
          pending_deliveries: db.backlog.pendingDeliveries,
          oldest_pending_age_ms:
            db.backlog.oldestPendingAt === null ? null : Math.max(0, now - db.backlog.oldestPendingAt),
          undispatched_events: db.backlog.undispatchedEvents,
        }
      : null,
    engine: {
      last_tick_at: iso(engine?.last_tick_at ?? null),
      scheduler_lag_ms: engine?.last_tick_at ? Math.max(0, wallNow - engine.last_tick_at) : null,
      in_flight: engine?.in_flight ?? 0,
      due_unclaimed_posts: db.ok ? db.due.count : null,
      oldest_due_age_ms: db.ok && db.due.oldest !== null ? Math.max(0, now - db.due.oldest) : null,
    },
  };
  return { status: reasons.length === 0 ? 200 : 503, body };
}
