import { Elysia, t } from "elysia";
import { iso } from "../../lib/clock.ts";
import type { Herald } from "../../herald.ts";
import type { AuthContext } from "../../http/auth.ts";
import { operation, Timestamp } from "../../http/docs.ts";
import { resourceResponse } from "../../http/etag.ts";
import { notFound } from "../../http/problem.ts";
import type { heraldPlugin } from "../../http/plugin.ts";
import { ALL_SCOPES } from "../../http/scopes.ts";
import { findAccount } from "./repo.ts";

const Account = t.Object({
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
}, { title: "Account" });

function presentAccount(h: Herald, auth: AuthContext) {
  const account = findAccount(h.db, auth.accountId);
  if (!account) throw notFound("account");
  return {
    id: account.id,
    object: "account" as const,
    name: account.name,
    authentication: {
      credential_id: auth.credentialId,
      prefix: auth.prefix,
      name: auth.name,
      environment: auth.environment,
      workspace_access_mode: auth.workspaceAccessMode,
      scopes: auth.scopes,
      expires_at: iso(auth.expiresAt),
    },
    created_at: iso(account.createdAt),
    updated_at: iso(account.updatedAt),
  };
}

/** The account and the calling credential's context, at `/account` and `/me`. */
export function accountRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  const options = (summary: string) => ({ ...operation({ scope: "authenticated", summary, tag: "Account" }), response: { 200: Account } });
  return new Elysia()
    .use(rails)
    .get("/account", ({ auth }) => resourceResponse(presentAccount(h, auth)), options("Get the account and the calling credential"))
    .get("/me", ({ auth }) => resourceResponse(presentAccount(h, auth)), options("Get the calling credential's context (same as /account)"));
}
