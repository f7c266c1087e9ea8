import { iso } from "../../lib/clock.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { etagOf, checkIfMatch } from "../../core/etag.ts";
import { invalid } from "../../core/problem.ts";
import { ENDPOINT_DISABLED_EVENT_TYPE } from "../webhooks/present.ts";
import { recordAudit } from "../audit/repo.ts";
import { DESTINATION_REAUTHORIZATION_EVENT } from "./events.ts";
import { type ChatSettingsRow, findChatSettings, saveChatSettings } from "./repo.ts";

/** What can be posted to the chat channel, in the order the settings list them. */
export const CHAT_EVENT_TYPES = [
  "post.failed",
  "post.needs-attention",
  DESTINATION_REAUTHORIZATION_EVENT,
  ENDPOINT_DISABLED_EVENT_TYPE,
  "post.approval-requested",
  "post.approved",
  "post.changes-requested",
] as const;

/** What settings never saved post: everything but the approval events, which are opt-in as for webhooks. */
const DEFAULT_CHAT_EVENT_TYPES = CHAT_EVENT_TYPES.slice(0, 4);

/** Slack conversation ids: C… public channels, G… private ones, D… direct messages. */
const CHANNEL_ID = /^[CDG][A-Z0-9]{6,20}$/;

/** The body of PATCH …/chat-notifications after the schema's checks. */
export interface ChatSettingsPatch {
  chat_channel_id?: string | null;
  enabled?: boolean;
  event_types?: string[];
}

/** Why notifications are not being posted, or null when they are. */
export function inactiveReason(h: Herald, row: ChatSettingsRow): string | null {
  if (!h.config.slackBotToken) return "slack_not_configured";
  if (!row.enabled) return "disabled";
  if (!row.chatChannelId) return "no_channel";
  return null;
}

/** The settings of a workspace that has never saved any: off, no channel, every event type. */
function defaults(workspaceId: string, now: number): ChatSettingsRow {
  return {
    workspaceId,
    chatChannelId: null,
    enabled: false,
    eventTypes: [...DEFAULT_CHAT_EVENT_TYPES],
    enabledAt: null,
    lastError: null,
    lastErrorAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** The `chat_notification_settings` resource. */
export function presentChatSettings(h: Herald, row: ChatSettingsRow, stored: boolean) {
  const reason = inactiveReason(h, row);
  return {
    object: "chat_notification_settings" as const,
    workspace_id: row.workspaceId,
    provider: "slack" as const,
    chat_channel_id: row.chatChannelId,
    enabled: row.enabled,
    event_types: CHAT_EVENT_TYPES.filter((t) => row.eventTypes.includes(t)),
    active: reason === null,
    inactive_reason: reason,
    last_error:
      row.lastError === null ? null : { message: row.lastError, occurred_at: iso(row.lastErrorAt ?? 0) },
    updated_at: stored ? iso(row.updatedAt) : null,
  };
}

/** A workspace's settings (the defaults when none were saved). */
export async function getChatSettings(h: Herald, workspaceId: string) {
  const row = await findChatSettings(h.db, workspaceId);
  return presentChatSettings(h, row ?? defaults(workspaceId, h.clock.now()), row !== undefined);
}

/**
 * Changes a workspace's settings (PATCH). `event_types` lists each type once (400 on the repeat);
 * enabling needs a channel and at least one event type (400 on /chat_channel_id, /event_types). Saved
 * with or without a Slack token: without one the answer says notifications are inactive. Switching
 * on stamps `enabled_at`, so events from before are never posted late.
 */
export async function patchChatSettings(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  input: ChatSettingsPatch;
  ifMatch: string | null;
}) {
  const { h, actor, workspaceId, input } = args;
  if (input.chat_channel_id !== undefined && input.chat_channel_id !== null) {
    if (!CHANNEL_ID.test(input.chat_channel_id))
      throw invalid("/chat_channel_id", "must be a Slack channel id such as C0123ABCDEF (not the #name)");
  }
  if (input.event_types) {
    const seen = new Set<string>();
    input.event_types.forEach((type, i) => {
      if (seen.has(type)) throw invalid(`/event_types/${i}`, "is listed twice");
      seen.add(type);
    });
  }
  return inTransaction(h.db, async (tx) => {
    const now = h.clock.now();
    const stored = await findChatSettings(tx, workspaceId);
    const before = stored ?? defaults(workspaceId, now);
    checkIfMatch(args.ifMatch, etagOf(presentChatSettings(h, before, stored !== undefined)), false);
    const next: ChatSettingsRow = { ...before, updatedAt: now };
    if (input.chat_channel_id !== undefined) next.chatChannelId = input.chat_channel_id;
    if (input.event_types !== undefined) next.eventTypes = input.event_types;
    if (input.enabled !== undefined) next.enabled = input.enabled;
    if (next.enabled && next.chatChannelId === null)
      throw invalid("/chat_channel_id", "is required while notifications are enabled");
    if (next.enabled && next.eventTypes.length === 0)
      throw invalid("/event_types", "must list at least one event type while notifications are enabled");
    if (next.enabled && !before.enabled) next.enabledAt = now;
    if (next.chatChannelId !== before.chatChannelId) {
      next.lastError = null;
      next.lastErrorAt = null;
    }
    await saveChatSettings(tx, next);
    await recordAudit(
      tx,
      auditActorOf(actor),
      {
        action: "chat_notifications.updated",
        workspaceId,
        targetType: "chat_notification_settings",
        targetId: workspaceId,
      },
      now,
    );
    return presentChatSettings(h, next, true);
  });
}
