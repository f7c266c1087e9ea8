import { Elysia, t } from "elysia";
import type { Herald } from "../../herald.ts";
import { listingSchema, operation, Timestamp } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { listInvitationsPage } from "../../modules/invitations/repo.ts";
import {
  invitationIdOf,
  inviteToAccount,
  presentInvitation,
  resendInvitation,
  revokeInvitation,
} from "../../modules/invitations/service.ts";

const Role = t.Union([t.Literal("owner"), t.Literal("admin"), t.Literal("member")]);

export const Invitation = t.Object(
  {
    id: t.String({ pattern: "^[0-9]+$" }),
    object: t.Literal("account_invitation"),
    email: t.String(),
    role: Role,
    status: t.Union([t.Literal("pending"), t.Literal("expired")]),
    created_at: Timestamp,
    expires_at: Timestamp,
    delivery: t.Object({ status: t.String(), requested_at: Timestamp }),
  },
  { title: "AccountInvitation" },
);

const RevokedInvitation = t.Object(
  {
    id: t.String({ pattern: "^[0-9]+$" }),
    object: t.Literal("account_invitation"),
    email: t.String(),
    revoked: t.Literal(true),
  },
  { title: "RevokedAccountInvitation" },
);

const InvitationParams = t.Object({ invitation_id: t.String() });
// The bodies of resend and revoke carry nothing; `{}` or no body at all.
const EmptyBody = t.Optional(t.Object({}, { additionalProperties: false }));
const tag = "Team";

/** Invitations to the account: create, list, resend, revoke. */
export function invitationRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia()
    .use(rails)
    .post(
      "/account/invitations",
      ({ actor, request, body }) =>
        runIdempotent(h, { accountId: actor.accountId, request, body, required: true }, async () => {
          const invitation = await inviteToAccount({ h, actor, email: body.email, role: body.role });
          return resourceResponse(presentInvitation(invitation, h.clock.now()), 201);
        }),
      {
        ...operation({
          scope: "team:write",
          summary: "Invite someone to the account (sends an e-mail)",
          tag: "Account",
          idempotency: "required",
          description:
            "`role` defaults to `member`; `admin` or `owner` need a credential holding every scope " +
            "of that role.",
        }),
        parse: JSON_PARSER,
        body: t.Object(
          { email: t.String({ format: "email", maxLength: 254 }), role: t.Optional(Role) },
          { additionalProperties: false },
        ),
        response: { 201: Invitation },
      },
    )
    .get(
      "/account/invitations",
      async ({ actor, request, query }) => {
        const scope = `account-invitations:${actor.credentialId}`;
        const page = parsePageQuery(h, query, scope);
        const afterId = page.afterId === null ? null : Number(page.afterId);
        const rows = await listInvitationsPage(h.db, actor.accountId, afterId, page.limit);
        const now = h.clock.now();
        const keyed = rows.map((row) => ({ ...row, id: String(row.id), row }));
        return pageResponse(h, request, keyed, page, scope, (r) => presentInvitation(r.row, now));
      },
      {
        ...operation({
          scope: "team:read",
          summary: "List invitations not yet accepted or revoked (pending or expired)",
          tag,
        }),
        query: t.Object({ limit: t.Optional(t.String()), after: t.Optional(t.String()) }),
        response: { 200: listingSchema(Invitation) },
      },
    )
    .post(
      "/account/invitations/:invitation_id/resend",
      ({ actor, request, params, body }) =>
        runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () => {
          const id = invitationIdOf(params.invitation_id);
          const invitation = await resendInvitation({ h, actor, id });
          return resourceResponse(presentInvitation(invitation, h.clock.now()));
        }),
      {
        ...operation({
          scope: "team:write",
          summary: "Send an invitation again: a new e-mail, a new link and a new expiry",
          tag,
          errors: [404],
          idempotency: "optional",
        }),
        parse: JSON_PARSER,
        params: InvitationParams,
        body: EmptyBody,
        response: { 200: Invitation },
      },
    )
    .post(
      "/account/invitations/:invitation_id/revoke",
      ({ actor, request, params, body }) =>
        runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () => {
          const id = invitationIdOf(params.invitation_id);
          return resourceResponse(await revokeInvitation({ h, actor, id }));
        }),
      {
        ...operation({
          scope: "team:write",
          summary: "Revoke an invitation (its link stops working)",
          tag,
          errors: [404],
          idempotency: "optional",
        }),
        parse: JSON_PARSER,
        params: InvitationParams,
        body: EmptyBody,
        response: { 200: RevokedInvitation },
      },
    );
}
