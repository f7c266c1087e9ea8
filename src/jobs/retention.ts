import type { Herald } from "../herald.ts";
import type { Db } from "../db/open.ts";
import { inTransaction } from "../db/transaction.ts";
import { type BatchDelete, deleteOldestRows } from "../db/batch-delete.ts";
import { refreshRequestsBefore, snapshotsBefore } from "../modules/analytics/repo.ts";
import { auditRecordsBefore } from "../modules/audit/repo.ts";
import { finishedChatNotificationsBefore } from "../modules/chat/repo.ts";
import { expiredIdempotencyKeys } from "../modules/idempotency/repo.ts";
import { expiredAuthorizationCodes, rotatedRefreshTokens } from "../modules/oauth/repo.ts";
import { GRANT_TTL_MS } from "../modules/oauth/tokens.ts";
import { dispatchedEventsBefore, finishedDeliveriesBefore } from "../modules/webhooks/repo.ts";
import type { Job } from "./scheduler.ts";

const DAY_MS = 86_400_000;

/** On-demand analytics refreshes are counted over the last hour; a day of them is plenty. */
const REFRESH_REQUESTS_KEPT_MS = DAY_MS;

/** The wait between two batches, so other writers (SQLite has one at a time) get the database. */
export const RETENTION_PAUSE_MS = 20;

/** One table's retention: what its job is called, when it runs and what one batch deletes. */
export interface RetentionRule {
  /** The job's id (also the name `runNow` takes). */
  id: string;
  /** croner pattern; each rule at its own minute, so the jobs do not all write at once. */
  pattern: string;
  /** Rows older than this instant may go; null: this table keeps everything (a span of 0). */
  cutoff(h: Herald, now: number): number | null;
  /** The rows older than `before` and how to take the oldest of them (src/db/batch-delete.ts). */
  batch(db: Db, before: number): BatchDelete;
}

/** A span of 0 keeps the rows for ever. */
const olderThan = (span: number, now: number): number | null => (span > 0 ? now - span : null);

/** Every table that grows with every action, and how long it keeps its rows (docs/operations.md#retention). */
export const RETENTION_RULES: RetentionRule[] = [
  // Fanned-out events (deliveries keep their own copy of the body, so redelivery still works).
  {
    id: "events-outbox-cleanup",
    pattern: "0 41 * * * *",
    cutoff: (h, now) => now - h.config.retention.eventsMs,
    batch: dispatchedEventsBefore,
  },
  // Finished deliveries and their attempts; a pending one (at most 72 h old) is never deleted.
  {
    id: "webhook-log-cleanup",
    pattern: "0 23 * * * *",
    cutoff: (h, now) => now - h.config.retention.deliveriesMs,
    batch: finishedDeliveriesBefore,
  },
  {
    id: "chat-notifications-cleanup",
    pattern: "0 29 * * * *",
    cutoff: (h, now) => now - h.config.retention.deliveriesMs,
    batch: finishedChatNotificationsBefore,
  },
  {
    id: "audit-cleanup",
    pattern: "0 47 * * * *",
    cutoff: (h, now) => olderThan(h.config.retention.auditMs, now),
    batch: auditRecordsBefore,
  },
  {
    id: "analytics-snapshots-cleanup",
    pattern: "0 53 * * * *",
    cutoff: (h, now) => olderThan(h.config.retention.analyticsSnapshotsMs, now),
    batch: snapshotsBefore,
  },
  {
    id: "analytics-refreshes-cleanup",
    pattern: "0 59 * * * *",
    cutoff: (_h, now) => now - REFRESH_REQUESTS_KEPT_MS,
    batch: refreshRequestsBefore,
  },
  // Keys past their 24 h life (a replay after it is a new request, as the contract's window says).
  {
    id: "idempotency-cleanup",
    pattern: "0 17 * * * *",
    cutoff: (_h, now) => now,
    batch: expiredIdempotencyKeys,
  },
  // OAuth codes a day past their five minutes; refresh tokens once no grant they could belong to lives.
  {
    id: "oauth-codes-cleanup",
    pattern: "0 13 * * * *",
    cutoff: (_h, now) => now - DAY_MS,
    batch: expiredAuthorizationCodes,
  },
  {
    id: "oauth-refresh-tokens-cleanup",
    pattern: "0 19 * * * *",
    cutoff: (_h, now) => now - GRANT_TTL_MS,
    batch: rotatedRefreshTokens,
  },
];

/**
 * Deletes what a rule lets go, in batches of `retention.batchSize` rows, each in its own short
 * transaction with a pause between them, until a batch comes back short or the server stops.
 * Several processes may run it at once: each batch takes rows no other cleaner holds (PostgreSQL)
 * or what the one before left (SQLite), so they share the work or find nothing. Returns how many
 * rows went.
 */
export async function applyRetention(
  h: Herald,
  rule: RetentionRule,
  stopping?: AbortSignal,
): Promise<number> {
  const before = rule.cutoff(h, h.clock.now());
  if (before === null) return 0;
  const limit = h.config.retention.batchSize;
  let total = 0;
  for (;;) {
    const deleted = await inTransaction(h.db, (tx) => deleteOldestRows(tx, rule.batch(tx, before), limit));
    total += deleted;
    if (deleted < limit || stopping?.aborted) break;
    await Bun.sleep(RETENTION_PAUSE_MS);
  }
  if (total > 0) h.logger.info("retention", { job: rule.id, deleted: total });
  return total;
}

/** The cleanup jobs, one per table, hourly. */
export function retentionJobs(): Job[] {
  return RETENTION_RULES.map((rule) => ({
    id: rule.id,
    pattern: rule.pattern,
    run: (h, stopping) => applyRetention(h, rule, stopping),
  }));
}
