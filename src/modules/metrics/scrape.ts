// GET /metrics: the in-process metrics plus gauges read at scrape time. Every database read is a
// count or min over an index (posts_due, webhook_deliveries_due, mail_outbox_due,
// chat_notifications_due, the outbox's partial indexes), all bounded by one timeout.
import type { Db } from "../../db/open.ts";
import type { Herald } from "../../herald.ts";
import type { Scheduler } from "../../jobs/scheduler.ts";
import { DATABASE_TIMEOUT_MS, withTimeout } from "../health/health.ts";
import { chatBacklog } from "../chat/repo.ts";
import { countPendingMail } from "../mail/repo.ts";
import { countPostsByState, dueWork } from "../posts/repo.ts";
import { webhookBacklog } from "../webhooks/repo.ts";
import { renderGauge } from "./exposition.ts";
import { storageReport, type StorageReport } from "../health/storage.ts";
import { metricsOf } from "./metrics.ts";

/** The post states whose counts are queue depths (each an index range of posts_due). */
const QUEUE_STATES = ["scheduled", "ready", "processing", "awaiting-provider", "needs-attention"] as const;

async function databaseGauges(db: Db, now: number): Promise<string[]> {
  const [states, due, backlog, chat, mail] = await Promise.all([
    countPostsByState(db, QUEUE_STATES),
    dueWork(db, now),
    webhookBacklog(db),
    chatBacklog(db),
    countPendingMail(db),
  ]);
  const ageSeconds = (at: number | null) => (at === null ? 0 : Math.max(0, now - at) / 1000);
  return [
    ...renderGauge(
      "herald_posts",
      "Posts in the queue's states (scheduled, ready, processing, awaiting-provider, needs-attention).",
      QUEUE_STATES.map((state) => ({ labels: { state }, value: states.get(state) ?? 0 })),
    ),
    ...renderGauge(
      "herald_posts_due",
      "Ready posts whose time has come and that no process has claimed yet.",
      [{ value: due.count }],
    ),
    ...renderGauge(
      "herald_posts_oldest_due_age_seconds",
      "How long the oldest due, unclaimed post has waited (0: none).",
      [{ value: ageSeconds(due.oldest) }],
    ),
    ...renderGauge(
      "herald_webhook_deliveries_pending",
      "Webhook deliveries not yet delivered or failed for good.",
      [{ value: backlog.pendingDeliveries }],
    ),
    ...renderGauge(
      "herald_webhook_oldest_pending_age_seconds",
      "Age of the oldest pending webhook delivery (0: none).",
      [{ value: ageSeconds(backlog.oldestPendingAt) }],
    ),
    ...renderGauge(
      "herald_outbox_size",
      "Outbox rows waiting: events not fanned out to webhooks (events) or to chat (events_chat), " +
        "e-mails (mail), chat messages (chat).",
      [
        { labels: { outbox: "events" }, value: backlog.undispatchedEvents },
        { labels: { outbox: "events_chat" }, value: chat.undispatchedEvents },
        { labels: { outbox: "mail" }, value: mail },
        { labels: { outbox: "chat" }, value: chat.pendingNotifications },
      ],
    ),
  ];
}

/** The data directory's free space and whether it takes writes (absent when unreadable). */
function storageGauges(report: StorageReport): string[] {
  if (report.free_bytes === null || report.total_bytes === null) return [];
  return [
    ...renderGauge("herald_storage_free_bytes", "Free bytes on the data directory's file system.", [
      { value: report.free_bytes },
    ]),
    ...renderGauge("herald_storage_size_bytes", "Size of the data directory's file system.", [
      { value: report.total_bytes },
    ]),
    ...renderGauge("herald_storage_writable", "1 when the data directory takes writes.", [
      { value: report.writable ? 1 : 0 },
    ]),
  ];
}

/** The whole exposition text. */
export async function scrape(h: Herald, scheduler: Scheduler | null): Promise<string> {
  const m = metricsOf(h);
  let database: string[] = [];
  let up = 1;
  try {
    database = await withTimeout(databaseGauges(h.db, h.clock.now()), DATABASE_TIMEOUT_MS, "the database");
  } catch (error) {
    up = 0;
    h.logger.warn("metrics: database gauges unavailable", { error: (error as Error).message });
  }
  const beat = scheduler?.heartbeat();
  const lines = [
    ...renderGauge("herald_build_info", "This process's Herald version (always 1).", [
      { labels: { version: h.version }, value: 1 },
    ]),
    ...renderGauge("herald_process_start_time_seconds", "When this process's metrics started (Unix time).", [
      { value: Math.floor(m.startedAt / 1000) },
    ]),
    ...renderGauge("herald_database_up", "1 when the database answered this scrape's queries in time.", [
      { value: up },
    ]),
    ...storageGauges(storageReport(h.config)),
    ...(beat?.started && beat.last_beat_at !== null
      ? renderGauge(
          "herald_scheduler_heartbeat_age_seconds",
          "Time since the scheduler's most frequent job last started (see /health).",
          [{ value: Math.max(0, Date.now() - beat.last_beat_at) / 1000 }],
        )
      : []),
    ...database,
    ...m.requests.render(),
    ...m.publishAttempts.render(),
    ...m.lateness.render(),
    ...m.webhookAttempts.render(),
    ...m.webhookLatency.render(),
  ];
  return lines.join("\n") + "\n";
}
