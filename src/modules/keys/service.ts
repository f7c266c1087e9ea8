import { randomBase62, sha256Hex } from "../../lib/crypto.ts";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import type { Scope } from "../../core/scopes.ts";
import {
  type ApiKeyRow,
  findAccountWorkspaceIds,
  findApiKeysByIdOrPrefix,
  insertApiKey,
  markApiKeyRevoked,
} from "./repo.ts";

/** Length of the visible key prefix, e.g. `hk_live_Ab3d`. */
export const KEY_PREFIX_LENGTH = 12;

/** What a new key is allowed to do. */
export interface NewKeyInput {
  accountId: string;
  name: string;
  environment: "live" | "test";
  scopes: Scope[];
  workspaceAccessMode: "all" | "selected";
  workspaceIds: string[];
  expiresAt: number | null;
  /** The person creating it in the dashboard, and that form's one-time key (see `createKeyFromForm`). */
  createdByUserId?: string | null;
  creationFormKey?: string | null;
}

/** Thrown when a key request names workspaces that are not the account's. */
export class UnknownWorkspacesError extends Error {}

/**
 * Creates an API key `hk_<env>_<40 base62>`; only its SHA-256 hash is stored. Returns the full
 * key, which is never available again. Call inside a transaction.
 */
export async function createApiKey(
  db: Db,
  input: NewKeyInput,
  now: number,
): Promise<{ credentialId: string; apiKey: string }> {
  const ids = [...new Set(input.workspaceIds)];
  if (input.workspaceAccessMode === "selected") {
    const known = new Set(await findAccountWorkspaceIds(db, input.accountId, ids));
    const missing = ids.filter((id) => !known.has(id));
    if (missing.length > 0 || ids.length === 0)
      throw new UnknownWorkspacesError(
        missing.length
          ? `unknown workspaces: ${missing.join(", ")}`
          : "selected access needs at least one workspace",
      );
  }
  const apiKey = `hk_${input.environment}_${randomBase62(40)}`;
  const credentialId = newId("key");
  await insertApiKey(
    db,
    {
      id: credentialId,
      accountId: input.accountId,
      name: input.name,
      prefix: apiKey.slice(0, KEY_PREFIX_LENGTH),
      secretHash: sha256Hex(apiKey),
      environment: input.environment,
      scopes: [...new Set(input.scopes)],
      workspaceAccessMode: input.workspaceAccessMode,
      expiresAt: input.expiresAt,
      createdAt: now,
      createdByUserId: input.createdByUserId ?? null,
      creationFormKey: input.creationFormKey ?? null,
    },
    input.workspaceAccessMode === "selected" ? ids : [],
  );
  return { credentialId, apiKey };
}

/** Thrown when a key reference (credential id or prefix) names no key, or more than one. */
export class KeyReferenceError extends Error {}

/**
 * Revokes the key named by its credential id or its prefix: from then on it is refused (401).
 * Revoking a revoked key changes nothing (`alreadyRevoked`). Call inside a transaction.
 */
export async function revokeApiKey(
  db: Db,
  ref: string,
  now: number,
): Promise<{ key: ApiKeyRow; alreadyRevoked: boolean }> {
  const matches = await findApiKeysByIdOrPrefix(db, ref);
  if (matches.length === 0) throw new KeyReferenceError(`no API key with credential id or prefix ${ref}`);
  if (matches.length > 1) {
    const ids = matches.map((m) => m.id).join(", ");
    throw new KeyReferenceError(`prefix ${ref} matches several keys (${ids}); give the credential id`);
  }
  const key = matches[0]!;
  if (key.revokedAt !== null) return { key, alreadyRevoked: true };
  await markApiKeyRevoked(db, key.id, now);
  return { key: { ...key, revokedAt: now }, alreadyRevoked: false };
}

/** The audit entry of a revoked credential: an API key, or an OAuth grant (a key row of its own kind). */
export function revokedCredentialEntry(key: { id: string; kind: string }) {
  return key.kind === "oauth_grant"
    ? { action: "oauth_grant.revoked", targetType: "oauth_grant", targetId: key.id }
    : { action: "api_key.revoked", targetType: "api_key", targetId: key.id };
}
