import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import type { heraldPlugin } from "../plugin.ts";
import { chatNotificationRoutes } from "./chat-notifications.ts";
import { feedbackRoutes } from "./feedback.ts";
import { invitationPageRoutes } from "./invitation-page.ts";
import { memberRoutes } from "./members.ts";

/**
 * Issue 17's routes outside billing, mounted with one line in app.ts: members, feedback and chat
 * notifications under /v1, and the invitation link's hosted page beside the other pages.
 */
export function teamRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia()
    .use(invitationPageRoutes(h))
    .group("/v1", (v1) =>
      v1.use(memberRoutes(h, rails)).use(feedbackRoutes(h, rails)).use(chatNotificationRoutes(h, rails)),
    );
}
