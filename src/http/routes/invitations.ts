import { Elysia, t } from "elysia";
import type { Herald } from "../../herald.ts";
import { operation, Timestamp } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { inviteToAccount, presentInvitation } from "../../modules/invitations/service.ts";

const Invitation = t.Object(
  {
    id: t.String({ pattern: "^[0-9]+$" }),
    object: t.Literal("account_invitation"),
    email: t.String(),
    status: t.Union([t.Literal("pending"), t.Literal("expired")]),
    created_at: Timestamp,
    expires_at: Timestamp,
    delivery: t.Object({ status: t.String(), requested_at: Timestamp }),
  },
  { title: "AccountInvitation" },
);

/** Invitations to the account. */
export function invitationRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia().use(rails).post(
    "/account/invitations",
    ({ actor, request, body }) =>
      runIdempotent(h, { accountId: actor.accountId, request, body, required: true }, async () => {
        const invitation = await inviteToAccount({ h, actor, email: body.email });
        return resourceResponse(presentInvitation(invitation, h.clock.now()), 201);
      }),
    {
      ...operation({
        scope: "team:write",
        summary: "Invite someone to the account (sends an e-mail)",
        tag: "Account",
        idempotency: "required",
      }),
      parse: JSON_PARSER,
      body: t.Object(
        { email: t.String({ format: "email", maxLength: 254 }) },
        { additionalProperties: false },
      ),
      response: { 201: Invitation },
    },
  );
}
