import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { listingSchema, operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { listInvitationsPage } from "../../modules/invitations/repo.ts";
import {
  invitationIdOf,
  inviteToAccount,
  type IssuedInvitation,
  presentInvitation,
  resendInvitation,
  revokeInvitation,
} from "../../modules/invitations/service.ts";
import { ConfirmedBody, OptionallyConfirmedBody, PageQuery } from "./common-schemas.ts";
import type { RouteContext } from "./context.ts";
import { Invitation, InvitationParams, InviteBody, RevokedInvitation } from "./team-schemas.ts";
import { handler } from "./context.ts";

type InvitationContext<Body> = RouteContext<Body, unknown, Static<typeof InvitationParams>>;

/** POST: the key is required (an e-mail goes out). */
function invite(h: Herald, { actor, request, body }: RouteContext<Static<typeof InviteBody>>) {
  const idempotent = { accountId: actor.accountId, request, body, required: true, shownOnce: SHOWN_ONCE };
  return runIdempotent(h, idempotent, async () => {
    const invitation = await inviteToAccount({ h, actor, email: body.email, role: body.role });
    return resourceResponse(presentIssuedInvitation(invitation, h.clock.now()), 201);
  });
}

/** The one-time link an inviter passes on while no mail is sent: never stored for a replay. */
const SHOWN_ONCE = ["invitation_url"];

/** A created or resent invitation, with its link when the inviter must pass it on. */
function presentIssuedInvitation(invitation: IssuedInvitation, now: number) {
  const presented = presentInvitation(invitation, now);
  return invitation.link ? { ...presented, invitation_url: invitation.link } : presented;
}

async function listInvitations(
  h: Herald,
  { actor, request, query }: RouteContext<unknown, Static<typeof PageQuery>>,
) {
  const scope = `account-invitations:${actor.credentialId}`;
  const page = parsePageQuery(h, query, scope);
  const afterId = page.afterId === null ? null : Number(page.afterId);
  const rows = await listInvitationsPage(h.db, actor.accountId, afterId, page.limit);
  const now = h.clock.now();
  const keyed = rows.map((row) => ({ ...row, id: String(row.id), row }));
  return pageResponse(h, request, keyed, page, scope, (r) => presentInvitation(r.row, now));
}

function resend(
  h: Herald,
  { actor, request, params, body }: InvitationContext<Static<typeof OptionallyConfirmedBody> | null>,
) {
  const idempotent = { accountId: actor.accountId, request, body, required: false, shownOnce: SHOWN_ONCE };
  return runIdempotent(h, idempotent, async () => {
    const id = invitationIdOf(params.invitation_id);
    const invitation = await resendInvitation({ h, actor, id });
    return resourceResponse(presentIssuedInvitation(invitation, h.clock.now()));
  });
}

function revoke(
  h: Herald,
  { actor, request, params, body }: InvitationContext<Static<typeof ConfirmedBody>>,
) {
  return runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () => {
    const id = invitationIdOf(params.invitation_id);
    return resourceResponse(await revokeInvitation({ h, actor, id }));
  });
}

const tag = "Team";
const doc = {
  invite: operation({
    scope: "team:write",
    operationId: "createAccountInvitation",
    summary: "Invite someone to the account (sends an e-mail)",
    tag: "Account",
    idempotency: "required",
    description:
      "`role` defaults to `member`; `admin` or `owner` need a credential holding every scope of that role. " +
      "While the server has no mail configured, the answer carries `invitation_url`, the link to pass on.",
  }),
  list: operation({
    scope: "team:read",
    operationId: "listAccountInvitations",
    summary: "List invitations not yet accepted or revoked (pending or expired)",
    description:
      "The account's open invitations, pending or expired, with their role and the state of " +
      "their e-mail; paged with `limit` and `after`.",
    tag,
  }),
  resend: operation({
    scope: "team:write",
    operationId: "resendAccountInvitation",
    summary: "Send an invitation again: a new e-mail, a new link and a new expiry",
    tag,
    description: 'The body may be omitted, `{}`, or the Confirmed action `{"confirmed": true}`.',
    errors: [404],
    idempotency: "optional",
  }),
  revoke: operation({
    scope: "team:write",
    operationId: "revokeAccountInvitation",
    summary: "Revoke an invitation (its link stops working)",
    tag,
    description: 'The body is the Confirmed action, `{"confirmed": true}`.',
    errors: [404],
    idempotency: "optional",
  }),
};

/** Invitations to the account: create, list, resend, revoke. */
export function invitationRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia()
    .use(rails)
    .post("/account/invitations", handler(h, invite), {
      ...doc.invite,
      parse: JSON_PARSER,
      body: InviteBody,
      response: { 201: Invitation },
    })
    .get("/account/invitations", handler(h, listInvitations), {
      ...doc.list,
      query: PageQuery,
      response: { 200: listingSchema(Invitation) },
    })
    .post("/account/invitations/:invitation_id/resend", handler(h, resend), {
      ...doc.resend,
      parse: JSON_PARSER,
      params: InvitationParams,
      body: OptionallyConfirmedBody,
      response: { 200: Invitation },
    })
    .post("/account/invitations/:invitation_id/revoke", handler(h, revoke), {
      ...doc.revoke,
      parse: JSON_PARSER,
      params: InvitationParams,
      body: ConfirmedBody,
      response: { 200: RevokedInvitation },
    });
}
