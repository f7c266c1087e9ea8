import { randomBase62, sha256Hex } from "../../lib/crypto.ts";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import type { Scope } from "../../core/scopes.ts";
import { findAccountWorkspaceIds, insertApiKey } from "./repo.ts";

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
}

/** Thrown when a key request names workspaces that are not the account's. */
export class UnknownWorkspacesError extends Error {}

/**
 * Creates an API key `hk_<env>_<40 base62>`; only its SHA-256 hash is stored. Returns the full
 * key, which is never available again. Call inside a transaction.
 */
export function createApiKey(db: Db, input: NewKeyInput, now: number): { credentialId: string; apiKey: string } {
  const ids = [...new Set(input.workspaceIds)];
  if (input.workspaceAccessMode === "selected") {
    const known = new Set(findAccountWorkspaceIds(db, input.accountId, ids));
    const missing = ids.filter((id) => !known.has(id));
    if (missing.length > 0 || ids.length === 0) throw new UnknownWorkspacesError(missing.length ? `unknown workspaces: ${missing.join(", ")}` : "selected access needs at least one workspace");
  }
  const apiKey = `hk_${input.environment}_${randomBase62(40)}`;
  const credentialId = newId("key");
  insertApiKey(db, {
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
  }, input.workspaceAccessMode === "selected" ? ids : []);
  return { credentialId, apiKey };
}
