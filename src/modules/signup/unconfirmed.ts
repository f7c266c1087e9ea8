import type { Actor } from "../../core/actor.ts";
import { ProblemError } from "../../core/problem.ts";
import type { Db } from "../../db/open.ts";
import { hasUnconfirmedAccount } from "./repo.ts";

/**
 * What an account whose address is not confirmed yet may not do, decided in this one table for every
 * operation of the API (`METHOD /path` as the OpenAPI document writes it, relative to /v1): the
 * writes that create API keys, invitations, destinations, posts or other work, or send mail or
 * requests out of the operator's server. Everything else stays open (reading, settings, drafts'
 * edits, deletions, feedback), so a person can sign in and look around. The rails apply it to every
 * request, an API key's and the dashboard's alike (the dashboard speaks the API); the dashboard's
 * key form, which has no API route, asks `requireConfirmedAccount` itself, and a CLI login's key is
 * held back until the address is confirmed (cli-auth). test/signup/unconfirmed.test.ts walks it.
 */
export const REFUSED_WHILE_UNCONFIRMED: readonly string[] = [
  "POST /account/invitations",
  "POST /account/invitations/{invitation_id}/resend",
  "POST /workspaces",
  "POST /workspaces/{workspace_id}/destination-connections",
  "POST /workspaces/{workspace_id}/posts",
  "POST /workspaces/{workspace_id}/posts/publish",
  "POST /workspaces/{workspace_id}/posts/move",
  "POST /workspaces/{workspace_id}/posts/{post_id}/retry",
  "POST /workspaces/{workspace_id}/posts/{post_id}/reschedule",
  "POST /workspaces/{workspace_id}/posts/{post_id}/approve",
  "POST /workspaces/{workspace_id}/post-imports",
  // A review link is a public page with the account's content on it
  "POST /workspaces/{workspace_id}/review-links",
  "POST /workspaces/{workspace_id}/asset-uploads",
  "POST /workspaces/{workspace_id}/asset-uploads/{upload_id}/complete",
  "POST /workspaces/{workspace_id}/webhook-endpoints",
  "POST /workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}/test",
  "POST /workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/redeliver",
  "POST /billing/checkout-sessions",
];

const REFUSED = new Set(REFUSED_WHILE_UNCONFIRMED);
const byRoute = new Map<string, boolean>();

/** Whether a request to an Elysia route pattern (`/v1/workspaces/:workspace_id/posts`) is in the table. */
export function refusedWhileUnconfirmed(method: string, route: string): boolean {
  const key = `${method} ${route}`;
  let found = byRoute.get(key);
  if (found === undefined) {
    const path = route.replace(/^\/v1(?=\/)/, "").replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    found = REFUSED.has(`${method} ${path}`);
    byRoute.set(key, found);
  }
  return found;
}

/** 403 `public_email_unconfirmed` while the actor's account waits for its address to be confirmed. */
export async function requireConfirmedAccount(db: Db, actor: Pick<Actor, "accountId">): Promise<void> {
  if (await hasUnconfirmedAccount(db, actor.accountId)) throw unconfirmedProblem();
}

/** The 403 of an account whose address is unconfirmed (the rails raise it from the key's own read too). */
export function unconfirmedProblem(): ProblemError {
  return new ProblemError(
    "public_email_unconfirmed",
    "Confirm your e-mail address first: until then this account can look around but not create keys, " +
      "invitations, destinations or posts. Use the link we e-mailed you, or send a new one from the dashboard.",
  );
}
