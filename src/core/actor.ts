import { ProblemError } from "./problem.ts";
import type { Scope } from "./scopes.ts";

/**
 * Who acts in a domain verb: an API key, an OAuth grant (a person's consent to an MCP client, stored
 * and checked like a key) or a person signed in to the dashboard. Verbs get it whole
 * (`createPosts({ h, actor, workspace, input })`) and never look at the HTTP request.
 */
export interface Actor {
  kind: "api_key" | "oauth_grant" | "session";
  /** The API key's id (`key_…`), the grant's (`grt_…`) or the session's: audit records' `credential_id`. */
  credentialId: string;
  accountId: string;
  /** The key's visible prefix (empty for a session). */
  prefix: string;
  name: string;
  environment: "live" | "test";
  scopes: Scope[];
  workspaceAccessMode: "all" | "selected";
  /** Selected workspaces; empty when the mode is `all`. */
  workspaceIds: string[];
  expiresAt: number | null;
  /** Herald's own id of the request this act belongs to (audit records and connection sessions keep it). */
  requestId: string;
  /** The caller's `Service-Request-Id` (audit records keep it apart: the caller can write anything). */
  clientRequestId?: string | null;
}

/** Whether the actor may use a workspace of its account (ownership is checked by the caller's query). */
export function canUseWorkspace(actor: Actor, workspaceId: string): boolean {
  return actor.workspaceAccessMode === "all" || actor.workspaceIds.includes(workspaceId);
}

/** 403 unless the actor is live: publishing and scheduling need a live key. */
export function requireLive(
  actor: Actor,
  detail = "Publishing and scheduling need a live API key; this one is a test key.",
): void {
  if (actor.environment !== "live") throw new ProblemError("public_live_credential_required", detail);
}

/** The fields an audit record takes from the actor. */
export function auditActorOf(actor: Actor): {
  accountId: string;
  credentialId: string;
  requestId: string;
  clientRequestId: string | null;
} {
  return {
    accountId: actor.accountId,
    credentialId: actor.credentialId,
    requestId: actor.requestId,
    clientRequestId: actor.clientRequestId ?? null,
  };
}
