import { Elysia, t } from "elysia";
import { iso } from "../../lib/clock.ts";
import type { Herald } from "../../herald.ts";
import type { Actor } from "../../core/actor.ts";
import { operation, Timestamp } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { notFound } from "../../core/problem.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { ALL_SCOPES } from "../../core/scopes.ts";
import { findAccount } from "../../modules/account/repo.ts";
import { revokeCallingKey } from "../../modules/cli-auth/revoke.ts";

const Account = t.Object(
  {
    id: t.String(),
    object: t.Literal("account"),
    name: t.String(),
    authentication: t.Object({
      credential_id: t.String(),
      prefix: t.String(),
      name: t.String(),
      environment: t.Union([t.Literal("live"), t.Literal("test")]),
      workspace_access_mode: t.Union([t.Literal("all"), t.Literal("selected")]),
      scopes: t.Array(t.Union(ALL_SCOPES.map((s) => t.Literal(s)))),
      expires_at: t.Union([Timestamp, t.Null()]),
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "Account" },
);

async function presentAccount(h: Herald, actor: Actor) {
  const account = await findAccount(h.db, actor.accountId);
  if (!account) throw notFound("account");
  return {
    id: account.id,
    object: "account" as const,
    name: account.name,
    authentication: {
      credential_id: actor.credentialId,
      prefix: actor.prefix,
      name: actor.name,
      environment: actor.environment,
      workspace_access_mode: actor.workspaceAccessMode,
      scopes: actor.scopes,
      expires_at: iso(actor.expiresAt),
    },
    created_at: iso(account.createdAt),
    updated_at: iso(account.updatedAt),
  };
}

const RevokedKey = t.Object(
  { id: t.String(), object: t.Literal("api_key"), revoked: t.Literal(true) },
  { title: "RevokedApiKey" },
);

/** The account and the calling credential's context, at `/account` and `/me`; `/me/revoke` gives the key up. */
export function accountRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  const options = (summary: string) => ({
    ...operation({ scope: "authenticated", summary, tag: "Account" }),
    response: { 200: Account },
  });
  return new Elysia()
    .use(rails)
    .get(
      "/account",
      async ({ actor }) => resourceResponse(await presentAccount(h, actor)),
      options("Get the account and the calling credential"),
    )
    .get(
      "/me",
      async ({ actor }) => resourceResponse(await presentAccount(h, actor)),
      options("Get the calling credential's context (same as /account)"),
    )
    .post("/me/revoke", async ({ actor }) => resourceResponse(await revokeCallingKey({ h, actor })), {
      ...operation({
        scope: "authenticated",
        summary: "Revoke the calling API key (the CLI's logout)",
        tag: "Account",
        description:
          "The key that sends this request is revoked at once: any later request with it is 401. The " +
          "body may be omitted or `{}`.",
      }),
      parse: JSON_PARSER,
      body: t.Optional(t.Object({}, { additionalProperties: false })),
      response: { 200: RevokedKey },
    });
}
