import { Elysia, t } from "elysia";
import type { Herald } from "../../herald.ts";
import { listingSchema, operation, Timestamp } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { listMembersPage } from "../../modules/team/repo.ts";
import { presentMember, removeMember } from "../../modules/team/service.ts";

const Role = t.Union([t.Literal("owner"), t.Literal("admin"), t.Literal("member")]);

export const Member = t.Object(
  {
    id: t.String(),
    object: t.Literal("account_member"),
    email: t.String(),
    name: t.Union([t.String(), t.Null()]),
    role: Role,
    created_at: Timestamp,
  },
  { title: "AccountMember" },
);

const RemovedMember = t.Object(
  {
    id: t.String(),
    object: t.Literal("account_member"),
    email: t.String(),
    removed: t.Literal(true),
    revoked_key_ids: t.Array(t.String()),
  },
  { title: "RemovedAccountMember" },
);

const tag = "Team";

/** The account's people: the listing and removal. */
export function memberRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia()
    .use(rails)
    .get(
      "/account/members",
      async ({ actor, request, query }) => {
        const scope = `account-members:${actor.credentialId}`;
        const page = parsePageQuery(h, query, scope);
        const rows = await listMembersPage(h.db, actor.accountId, page.afterId, page.limit);
        return pageResponse(h, request, rows, page, scope, presentMember);
      },
      {
        ...operation({ scope: "team:read", summary: "List the account's members", tag }),
        query: t.Object({ limit: t.Optional(t.String()), after: t.Optional(t.String()) }),
        response: { 200: listingSchema(Member) },
      },
    )
    .post(
      "/account/members/:member_id/remove",
      ({ actor, request, params, body }) =>
        runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () => {
          const removed = await removeMember({
            h,
            actor,
            memberId: params.member_id,
            confirmation: body.confirmation,
          });
          return resourceResponse(removed);
        }),
      {
        ...operation({
          scope: "team:write",
          summary: "Remove a member (their sessions end and the keys they hold are revoked)",
          tag,
          errors: [404, 409],
          idempotency: "optional",
          description:
            "`confirmation` must be the member's e-mail address (400 at /confirmation otherwise). " +
            "The account's last owner cannot be removed (409 public_conflict).",
        }),
        parse: JSON_PARSER,
        params: t.Object({ member_id: t.String() }),
        body: t.Object(
          { confirmed: t.Literal(true), confirmation: t.String({ maxLength: 254 }) },
          { additionalProperties: false },
        ),
        response: { 200: RemovedMember },
      },
    );
}
