import { Elysia, t } from "elysia";
import type { Herald } from "../../herald.ts";
import { operation, Timestamp } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { CHAT_EVENT_TYPES, getChatSettings, patchChatSettings } from "../../modules/chat/settings.ts";

const EventType = t.Union(CHAT_EVENT_TYPES.map((type) => t.Literal(type)));

const ChatSettings = t.Object(
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

const params = t.Object({ workspace_id: t.String() });
const tag = "Chat Notifications";

/** A workspace's Slack notifications: GET and PATCH `{ws}/chat-notifications`. */
export function chatNotificationRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id/chat-notifications" })
    .use(rails)
    .get("", async ({ workspace }) => resourceResponse(await getChatSettings(h, workspace!.id)), {
      ...operation({
        scope: "notifications:read",
        summary: "Get the workspace's chat notification settings",
        tag,
        errors: [404],
      }),
      params,
      response: { 200: ChatSettings },
    })
    .patch(
      "",
      async ({ actor, workspace, body, request }) =>
        resourceResponse(
          await patchChatSettings({
            h,
            actor,
            workspaceId: workspace!.id,
            input: body,
            ifMatch: request.headers.get("if-match"),
          }),
        ),
      {
        ...operation({
          scope: "notifications:write",
          summary: "Change the workspace's chat notification settings",
          tag,
          errors: [404],
          ifMatch: "optional",
          description:
            "Posted to Slack with HERALD_SLACK_BOT_TOKEN; without it the settings are saved and " +
            "`active` is false with `inactive_reason: slack_not_configured`.",
        }),
        parse: JSON_PARSER,
        params,
        body: t.Object(
          {
            chat_channel_id: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()])),
            enabled: t.Optional(t.Boolean()),
            event_types: t.Optional(t.Array(EventType, { maxItems: CHAT_EVENT_TYPES.length * 2 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: ChatSettings },
      },
    );
}
