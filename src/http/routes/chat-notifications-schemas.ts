import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { CHAT_EVENT_TYPES } from "../../modules/chat/settings.ts";
import { Closed } from "./common-schemas.ts";

const EventType = t.Union(CHAT_EVENT_TYPES.map((type) => t.Literal(type)));

/** A workspace's Slack notification settings, and whether they are in effect. */
export const ChatSettings = t.Object(
  {
    object: t.Literal("chat_notification_settings"),
    workspace_id: t.String(),
    provider: t.Literal("slack"),
    chat_channel_id: t.Union([t.String(), t.Null()]),
    enabled: t.Boolean(),
    event_types: t.Array(EventType),
    active: t.Boolean(),
    inactive_reason: t.Union([
      t.Literal("slack_not_configured"),
      t.Literal("disabled"),
      t.Literal("no_channel"),
      t.Null(),
    ]),
    last_error: t.Union([t.Object({ message: t.String(), occurred_at: Timestamp }), t.Null()]),
    updated_at: t.Union([Timestamp, t.Null()]),
  },
  { title: "ChatNotificationSettings" },
);

/** Body of PATCH the settings. */
export const PatchChatSettingsBody = Closed(
  {
    chat_channel_id: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()])),
    enabled: t.Optional(t.Boolean()),
    event_types: t.Optional(t.Array(EventType, { maxItems: CHAT_EVENT_TYPES.length * 2 })),
  },
  {
    title: "UpdateChatNotificationSettingsRequest",
    examples: [{ chat_channel_id: "C0123456789", enabled: true, event_types: ["post.failed"] }],
  },
);
