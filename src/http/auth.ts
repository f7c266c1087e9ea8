import { sha256Hex } from "../lib/crypto.ts";
import type { Herald } from "../herald.ts";
import { touchApiKey } from "../modules/keys/repo.ts";
import { cachedCredential } from "../modules/keys/credential-cache.ts";
import type { WorkspaceRow } from "../modules/workspaces/repo.ts";
import { inTransaction } from "../db/transaction.ts";
import { ProblemError } from "../core/problem.ts";
import { storageFault } from "../core/storage-problem.ts";
import type { RouteScope, Scope } from "../core/scopes.ts";
import type { Actor } from "../core/actor.ts";
import { protectedResourceMetadataUrl } from "../modules/oauth/metadata.ts";

/**
 * The Bearer challenge of a 401. At the MCP resource it names the protected-resource metadata
 * (RFC 9728), which is how an MCP client finds Herald's authorization server.
 */
function challenge(h: Herald, mcpResource: boolean, error: string | null): string {
  const parts = ['realm="herald"'];
  if (error) parts.push(`error="${error}"`);
  if (mcpResource) parts.push(`resource_metadata="${protectedResourceMetadataUrl(h)}"`);
  return `Bearer ${parts.join(", ")}`;
}

function unauthenticated(h: Herald, mcpResource: boolean, detail: string): ProblemError {
  return new ProblemError("public_authentication_required", detail, {
    headers: { "www-authenticate": challenge(h, mcpResource, "invalid_token") },
  });
}

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Checks the bearer key of a request and the scope the route needs. Missing, unknown, revoked or
 * expired keys are 401 (with a Bearer challenge); a key without the scope is 403. The answer is the
 * actor the domain verbs receive, the workspace the request names (`workspaceId`) when it is one of
 * the key's account (whether the key may use it is the caller's check) and whether the account's
 * address is unconfirmed, all read in the same statement.
 *
 * An OAuth access token (a grant's, `hk_oat_…`) is found by the same statement; its audience is the
 * MCP resource, so it is accepted only when `mcpResource` is true: the /mcp endpoint itself, or an API
 * request the endpoint dispatched in-process (`isMcpDispatch`). Anywhere else it is 401.
 */
export async function authenticate(
  h: Herald,
  input: {
    authorization: string | null;
    required: RouteScope;
    requestId: string;
    workspaceId?: string;
    /** The request is for the MCP resource: OAuth access tokens are accepted, and 401s name its metadata. */
    mcpResource?: boolean;
  },
): Promise<{ actor: Actor; workspace: WorkspaceRow | null; unconfirmed: boolean }> {
  const { authorization, required } = input;
  const mcpResource = input.mcpResource === true;
  if (!authorization) {
    throw new ProblemError(
      "public_authentication_required",
      "Send an API key as `Authorization: Bearer <key>`.",
      {
        headers: { "www-authenticate": challenge(h, mcpResource, null) },
      },
    );
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  if (!match) throw unauthenticated(h, mcpResource, "The Authorization header must be `Bearer <key>`.");
  const credential = await cachedCredential(h.db, sha256Hex(match[1]!), input.workspaceId ?? "");
  const now = h.clock.now();
  if (!credential) throw unauthenticated(h, mcpResource, "The API key is not valid.");
  const row = credential.key;
  const grant = row.kind === "oauth_grant";
  const what = grant ? "The OAuth access token" : "The API key";
  if (grant && !mcpResource)
    throw unauthenticated(
      h,
      mcpResource,
      "An OAuth access token is accepted only by the MCP endpoint (/mcp).",
    );
  if (row.revokedAt !== null) throw unauthenticated(h, mcpResource, `${what} has been revoked.`);
  if (row.expiresAt !== null && row.expiresAt <= now)
    throw unauthenticated(h, mcpResource, `${what} has expired.`);
  if (row.accessExpiresAt !== null && row.accessExpiresAt <= now)
    throw unauthenticated(h, mcpResource, `${what} has expired; refresh it.`);
  const kind = grant ? "oauth_grant" : "api_key";
  requireScope({ kind, scopes: row.scopes as Scope[] }, required);
  // Recording every use would put a write on every request; minute resolution is enough. The plain
  // handle is read-only (SQLite), so the write takes a transaction of its own.
  const staleBefore = now - LAST_USED_RESOLUTION_MS;
  // A full or read-only disk must not take reads down with it: the stamp waits for the next request.
  if (row.lastUsedAt === null || row.lastUsedAt <= staleBefore) {
    // The row may be this process's cached credential: later requests in its window skip the stamp.
    row.lastUsedAt = now;
    await inTransaction(h.db, (tx) => touchApiKey(tx, row.id, now, staleBefore)).catch((error) => {
      if (!storageFault(error)) throw error;
    });
  }
  const actor: Actor = {
    kind,
    credentialId: row.id,
    accountId: row.accountId,
    prefix: row.prefix,
    name: row.name,
    environment: row.environment,
    scopes: row.scopes as Scope[],
    workspaceAccessMode: row.workspaceAccessMode,
    workspaceIds: credential.workspaceIds,
    expiresAt: row.expiresAt,
    requestId: input.requestId,
  };
  return { actor, workspace: credential.workspace, unconfirmed: credential.unconfirmed };
}

/** 403 unless the actor holds the scope the route needs. */
export function requireScope(actor: Pick<Actor, "kind" | "scopes">, required: RouteScope): void {
  if (required === "authenticated" || actor.scopes.includes(required)) return;
  const holder =
    actor.kind === "session"
      ? "your role in the account does"
      : actor.kind === "oauth_grant"
        ? "the OAuth grant does"
        : "the API key does";
  throw new ProblemError(
    "public_scope_missing",
    `This operation needs the \`${required}\` scope, which ${holder} not have.`,
  );
}
