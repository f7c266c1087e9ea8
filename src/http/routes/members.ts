import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { listingSchema, operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { listMembersPage } from "../../modules/team/repo.ts";
import { presentMember, removeMember } from "../../modules/team/service.ts";
import { PageQuery } from "./common-schemas.ts";
import type { RouteContext } from "./context.ts";
import { Member, MemberParams, RemovedMember, RemoveMemberBody } from "./team-schemas.ts";
import { handler } from "./context.ts";

async function listMembers(
  h: Herald,
  { actor, request, query }: RouteContext<unknown, Static<typeof PageQuery>>,
) {
  const scope = `account-members:${actor.credentialId}`;
  const page = parsePageQuery(h, query, scope);
  const rows = await listMembersPage(h.db, actor.accountId, page.afterId, page.limit);
  return pageResponse(h, request, rows, page, scope, presentMember);
}

function remove(
  h: Herald,
  c: RouteContext<Static<typeof RemoveMemberBody>, unknown, Static<typeof MemberParams>>,
) {
  const { actor, request, params, body } = c;
  return runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () => {
    const removed = await removeMember({
      h,
      actor,
      memberId: params.member_id,
      confirmation: body.confirmation,
    });
    return resourceResponse(removed);
  });
}

const tag = "Team";
const doc = {
  list: operation({
    scope: "team:read",
    operationId: "listAccountMembers",
    summary: "List the account's members",
    description:
      "The people of the account with their e-mail address, name and role (owner, admin or " + "member).",
    tag,
  }),
  remove: operation({
    scope: "team:write",
    operationId: "removeAccountMember",
    summary: "Remove a member (their sessions end and the keys they hold are revoked)",
    tag,
    errors: [404, 409],
    idempotency: "optional",
    description:
      "`confirmation` must be the member's e-mail address (400 at /confirmation otherwise). " +
      "The account's last owner cannot be removed (409 public_conflict).",
  }),
};

/** The account's people: the listing and removal. */
export function memberRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia()
    .use(rails)
    .get("/account/members", handler(h, listMembers), {
      ...doc.list,
      query: PageQuery,
      response: { 200: listingSchema(Member) },
    })
    .post("/account/members/:member_id/remove", handler(h, remove), {
      ...doc.remove,
      parse: JSON_PARSER,
      params: MemberParams,
      body: RemoveMemberBody,
      response: { 200: RemovedMember },
    });
}
