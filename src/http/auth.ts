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

function unauthenticated(detail: string): ProblemError {
  return new ProblemError("public_authentication_required", detail, {
    headers: { "www-authenticate": 'Bearer realm="herald", error="invalid_token"' },
  });
}

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Checks the bearer key of a request and the scope the route needs. Missing, unknown, revoked or
 * expired keys are 401 (with a Bearer challenge); a key without the scope is 403. The answer is the
 * actor the domain verbs receive, the workspace the request names (`workspaceId`) when it is one of
 * the key's account (whether the key may use it is the caller's check) and whether the account's
 * address is unconfirmed, all read in the same statement.
 */
export async function authenticate(
  h: Herald,
  input: { authorization: string | null; required: RouteScope; requestId: string; workspaceId?: string },
): Promise<{ actor: Actor; workspace: WorkspaceRow | null; unconfirmed: boolean }> {
  const { authorization, required } = input;
  if (!authorization) {
    throw new ProblemError(
      "public_authentication_required",
      "Send an API key as `Authorization: Bearer <key>`.",
      {
        headers: { "www-authenticate": 'Bearer realm="herald"' },
      },
    );
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  if (!match) throw unauthenticated("The Authorization header must be `Bearer <key>`.");
  const credential = await cachedCredential(h.db, sha256Hex(match[1]!), input.workspaceId ?? "");
  const now = h.clock.now();
  if (!credential) throw unauthenticated("The API key is not valid.");
  const row = credential.key;
  if (row.revokedAt !== null) throw unauthenticated("The API key has been revoked.");
  if (row.expiresAt !== null && row.expiresAt <= now) throw unauthenticated("The API key has expired.");
  requireScope({ kind: "api_key", scopes: row.scopes as Scope[] }, required);
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
    kind: "api_key",
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
  const holder = actor.kind === "session" ? "your role in the account does" : "the API key does";
  throw new ProblemError(
    "public_scope_missing",
    `This operation needs the \`${required}\` scope, which ${holder} not have.`,
  );
}
