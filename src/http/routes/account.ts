import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import type { Actor } from "../../core/actor.ts";
import { operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { notFound } from "../../core/problem.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { findAccount } from "../../modules/account/repo.ts";
import { presentAccount } from "../../modules/account/present.ts";
import { revokeCallingKey } from "../../modules/cli-auth/revoke.ts";
import { Account, RevokedKey } from "./account-schemas.ts";
import { ConfirmedBody } from "./common-schemas.ts";
import { handler } from "./context.ts";

async function getAccount(h: Herald, { actor }: { actor: Actor }) {
  const account = await findAccount(h.db, actor.accountId);
  if (!account) throw notFound("account");
  return resourceResponse(presentAccount(account, actor));
}

async function revokeKey(h: Herald, { actor }: { actor: Actor }) {
  return resourceResponse(await revokeCallingKey({ h, actor }));
}

const doc = {
  account: operation({
    scope: "authenticated",
    operationId: "getAccount",
    summary: "Get the account and the calling credential",
    description:
      "The account with `authentication`, the calling credential's context: its id, visible " +
      "prefix, name, environment (live or test), workspace access mode, scopes and expiry. Any " +
      "valid key may call it, whatever its scopes.",
    tag: "Account",
  }),
  me: operation({
    scope: "authenticated",
    operationId: "getMe",
    summary: "Get the calling credential's context (same as /account)",
    description:
      "The same answer as `GET /account`, under the name a program uses to ask who it is signed " +
      "in as (the CLI's `whoami`).",
    tag: "Account",
  }),
  revoke: operation({
    scope: "authenticated",
    operationId: "revokeCallingApiKey",
    summary: "Revoke the calling API key (the CLI's logout)",
    tag: "Account",
    description:
      "The key that sends this request is revoked at once: any later request with it is 401. The " +
      'body is the Confirmed action, `{"confirmed": true}`.',
  }),
};

/** The account and the calling credential's context, at `/account` and `/me`; `/me/revoke` gives the key up. */
export function accountRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia()
    .use(rails)
    .get("/account", handler(h, getAccount), { ...doc.account, response: { 200: Account } })
    .get("/me", handler(h, getAccount), { ...doc.me, response: { 200: Account } })
    .post("/me/revoke", handler(h, revokeKey), {
      ...doc.revoke,
      parse: JSON_PARSER,
      body: ConfirmedBody,
      response: { 200: RevokedKey },
    });
}
