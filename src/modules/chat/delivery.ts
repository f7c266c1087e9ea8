import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { inGuardedTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import {
  type ChatNotificationRow,
  type ChatSettingsRow,
  claimChatUndispatchedEvents,
  claimDueChatNotifications,
  findChatSettings,
  insertChatNotifications,
  markChatDispatched,
  setChatLastError,
  updateChatNotification,
} from "./repo.ts";
import { inactiveReason } from "./settings.ts";
import { postSlackMessage, type SlackOutcome } from "./slack.ts";
import { chatMessageFor } from "./text.ts";
import { workspaceNames } from "../workspaces/repo.ts";

/** Events looked at per fan-out transaction. */
const FANOUT_BATCH = 500;
/** Notifications claimed per round, and how long a claim holds (well above one call's 10 s limit). */
const SEND_BATCH = 20;
export const CHAT_CLAIM_LEASE_MS = 60_000;
/** A notification is retried until an attempt fails this long after it was made (about three days). */
export const CHAT_RETRY_WINDOW_MS = 72 * 60 * 60 * 1000;

/** Delay before retry number `attempt` (1-based): 30 s doubling, at most one hour. */
export function chatRetryDelayMs(attempt: number): number {
  return Math.min(30_000 * 2 ** (attempt - 1), 3_600_000);
}

/**
 * Turns outbox events into chat notifications: one per event whose workspace has notifications
 * active (a Slack token, enabled, a channel) for its type and switched on before it happened. Each
 * event carries its own chat mark (independent of the webhooks' mark), set in the transaction that
 * creates its notification, so each is looked at once across processes and restarts. Returns how
 * many notifications it made.
 */
export async function fanOutChatEvents(h: Herald): Promise<number> {
  let made = 0;
  for (;;) {
    const batch = await inGuardedTransaction(h.db, (tx) => fanOutBatch(h, tx));
    made += batch.made;
    if (batch.events < FANOUT_BATCH) return made;
  }
}

async function fanOutBatch(h: Herald, tx: Db): Promise<{ events: number; made: number }> {
  const events = await claimChatUndispatchedEvents(tx, FANOUT_BATCH);
  if (events.length === 0) return { events: 0, made: 0 };
  const now = h.clock.now();
  const settingsOf = new Map<string, ChatSettingsRow | null>();
  for (const id of new Set(events.map((e) => e.workspaceId)))
    settingsOf.set(id, (await findChatSettings(tx, id)) ?? null);
  const wanted = [...settingsOf].filter(([, s]) => s && inactiveReason(h, s) === null).map(([id]) => id);
  const names = await workspaceNames(tx, wanted);
  const rows: ChatNotificationRow[] = [];
  for (const event of events) {
    const settings = settingsOf.get(event.workspaceId);
    if (!settings || inactiveReason(h, settings) !== null) continue;
    if (!settings.eventTypes.includes(event.type)) continue;
    if (settings.enabledAt === null || event.createdAt < settings.enabledAt) continue;
    const text = chatMessageFor(event, names.get(event.workspaceId) ?? "", h.config.baseUrl);
    if (text === null) continue;
    rows.push({
      id: newId("chn"),
      workspaceId: event.workspaceId,
      eventId: event.id,
      eventType: event.type,
      channelId: settings.chatChannelId!,
      text,
      status: "pending",
      attempts: 0,
      nextAttemptAt: now,
      lastError: null,
      createdAt: now,
      sentAt: null,
    });
  }
  await insertChatNotifications(tx, rows);
  await markChatDispatched(
    tx,
    events.map((e) => e.id),
    now,
  );
  return { events: events.length, made: rows.length };
}

// Slack's Retry-After applies to the bot as a whole: nothing goes out from this process before it.
const pausedUntil = new WeakMap<Herald, number>();

/**
 * Posts due notifications (no-op without HERALD_SLACK_BOT_TOKEN). A 429 pauses this process for
 * Slack's Retry-After and hands the rest of the round back, due when the pause ends; other retryable
 * failures back off (30 s doubling to one hour) until an attempt fails 72 h after the notification was
 * made; a permanent refusal fails it at once and is shown on the workspace's settings (`last_error`).
 * Returns how many were posted.
 */
export async function sendDueChatNotifications(h: Herald, stopping?: AbortSignal): Promise<number> {
  const token = h.config.slackBotToken;
  if (!token) return 0;
  let sent = 0;
  for (;;) {
    const now = h.clock.now();
    if ((pausedUntil.get(h) ?? 0) > now) return sent;
    const claimed = await inGuardedTransaction(h.db, (tx) =>
      claimDueChatNotifications(tx, now, SEND_BATCH, CHAT_CLAIM_LEASE_MS),
    );
    for (const [i, row] of claimed.entries()) {
      const paused = pausedUntil.get(h) ?? 0;
      if (paused > h.clock.now() || stopping?.aborted) {
        // Not attempted: due again when the pause ends (or at once for the next process).
        const rest = claimed.slice(i).map((r) => r.id);
        await inGuardedTransaction(h.db, async (tx) => {
          for (const id of rest)
            await updateChatNotification(tx, id, { nextAttemptAt: Math.max(paused, now) });
        });
        return sent;
      }
      const outcome = await postSlackMessage({
        apiBase: h.config.slackApiBase,
        token,
        channel: row.channelId,
        text: row.text,
      });
      if (await recordOutcome(h, row, outcome)) sent += 1;
    }
    if (claimed.length < SEND_BATCH) return sent;
  }
}

/** Stores one attempt's outcome; true when it was posted. */
async function recordOutcome(h: Herald, row: ChatNotificationRow, outcome: SlackOutcome): Promise<boolean> {
  const now = h.clock.now();
  const attempts = row.attempts + 1;
  await inGuardedTransaction(h.db, async (tx) => {
    if (outcome.kind === "sent") {
      await updateChatNotification(tx, row.id, { status: "sent", attempts, sentAt: now, lastError: null });
      await setChatLastError(tx, row.workspaceId, null, null);
      return;
    }
    const exhausted = outcome.kind === "retry" && now - row.createdAt >= CHAT_RETRY_WINDOW_MS;
    if (outcome.kind === "permanent" || exhausted) {
      await updateChatNotification(tx, row.id, { status: "failed", attempts, lastError: outcome.error });
      await setChatLastError(tx, row.workspaceId, outcome.error, now);
      return;
    }
    const after = outcome.retryAfterSeconds;
    if (after !== null && outcome.error.startsWith("HTTP 429")) pausedUntil.set(h, now + after * 1000);
    const delay = after !== null ? after * 1000 : chatRetryDelayMs(attempts);
    await updateChatNotification(tx, row.id, {
      attempts,
      lastError: outcome.error,
      nextAttemptAt: now + delay,
    });
  });
  if (outcome.kind !== "sent")
    h.logger.warn("chat notification not posted", {
      notification_id: row.id,
      workspace_id: row.workspaceId,
      attempts,
      error: outcome.error,
      permanent: outcome.kind === "permanent",
    });
  return outcome.kind === "sent";
}
