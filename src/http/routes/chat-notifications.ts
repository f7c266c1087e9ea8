import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { getChatSettings, patchChatSettings } from "../../modules/chat/settings.ts";
import { ChatSettings, PatchChatSettingsBody } from "./chat-notifications-schemas.ts";
import { WorkspaceParams } from "./common-schemas.ts";
import { handler, workspaceOf, type RouteContext } from "./context.ts";

async function getSettings(h: Herald, c: RouteContext) {
  return resourceResponse(await getChatSettings(h, workspaceOf(c).id));
}

async function patchSettings(h: Herald, c: RouteContext<Static<typeof PatchChatSettingsBody>>) {
  const { actor, body, request } = c;
  const settings = await patchChatSettings({
    h,
    actor,
    workspaceId: workspaceOf(c).id,
    input: body,
    ifMatch: request.headers.get("if-match"),
  });
  return resourceResponse(settings);
}

const tag = "Chat Notifications";
const doc = {
  get: operation({
    scope: "notifications:read",
    operationId: "getChatNotificationSettings",
    summary: "Get the workspace's chat notification settings",
    description:
      "The workspace's Slack settings (channel, enabled, event types) and whether they are in " +
      "effect: `active`, or `inactive_reason` saying why not.",
    tag,
    errors: [404],
  }),
  patch: operation({
    scope: "notifications:write",
    operationId: "updateChatNotificationSettings",
    summary: "Change the workspace's chat notification settings",
    tag,
    errors: [404],
    ifMatch: "optional",
    description:
      "Posted to Slack with HERALD_SLACK_BOT_TOKEN; without it the settings are saved and " +
      "`active` is false with `inactive_reason: slack_not_configured`.",
  }),
};

/** A workspace's Slack notifications: GET and PATCH `{ws}/chat-notifications`. */
export function chatNotificationRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id/chat-notifications" })
    .use(rails)
    .get("", handler(h, getSettings), {
      ...doc.get,
      params: WorkspaceParams,
      response: { 200: ChatSettings },
    })
    .patch("", handler(h, patchSettings), {
      ...doc.patch,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      body: PatchChatSettingsBody,
      response: { 200: ChatSettings },
    });
}
