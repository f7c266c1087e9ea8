import { requireConfirmedAccount } from "../signup/unconfirmed.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { type Role, roleAllows } from "../account/roles.ts";
import { recordAudit } from "../audit/repo.ts";
import {
  type ApiKeyRow,
  findAccountApiKey,
  findApiKeyByCreationFormKey,
  listApiKeys,
  markApiKeyRevoked,
} from "./repo.ts";
import { createApiKey, type NewKeyInput, revokedCredentialEntry } from "./service.ts";

/** The person managing keys in the dashboard. */
export interface KeyManager {
  actor: Actor;
  userId: string;
  role: Role;
}

/** Where a key stands today. */
export type KeyStatus = "active" | "expired" | "revoked";

export function keyStatus(key: ApiKeyRow, now: number): KeyStatus {
  if (key.revokedAt !== null) return "revoked";
  if (key.expiresAt !== null && key.expiresAt <= now) return "expired";
  return "active";
}

/**
 * Which keys a person sees and may revoke: owners and admins every key of the account; a member only
 * the keys they created (a member's role is narrower than most keys, so another's key is not theirs to
 * see or end).
 */
export function keyVisibleTo(key: ApiKeyRow, who: { userId: string; role: Role }): boolean {
  return who.role !== "member" || key.createdByUserId === who.userId;
}

/**
 * The account's keys this person sees, each with where it stands, newest first. The contract has no
 * key listing (a key reads only itself, at /me), so the dashboard's key pages read them here.
 */
export async function keysSeenBy(
  h: Herald,
  who: { accountId: string; userId: string; role: Role },
): Promise<(ApiKeyRow & { workspaceIds: string[]; status: KeyStatus })[]> {
  const now = h.clock.now();
  return (await listApiKeys(h.db, who.accountId))
    .filter((k) => keyVisibleTo(k, who))
    .map((k) => ({ ...k, status: keyStatus(k, now) }));
}

/** Thrown when a key would hold a scope the creating person's role does not have. */
export class ScopesBeyondRoleError extends Error {}

/** Thrown when a form key names a key someone else created (a form is one person's, never shared). */
export class FormKeyReusedError extends Error {}

/** What a dashboard form's key creation came to. */
export type FormKeyOutcome =
  | { created: true; credentialId: string; apiKey: string }
  /** The same form was sent before: that key exists and its secret was shown then, never again. */
  | { created: false; key: ApiKeyRow };

/**
 * Creates a key from the dashboard with its audit record, in one transaction. `formKey` (the form's
 * one-time `idempotency_key`) is stored on the key: the same form sent again finds that key instead
 * of creating a second one (the secret is not stored, so it cannot be shown again).
 */
export async function createKeyFromForm(
  h: Herald,
  who: KeyManager,
  input: Omit<NewKeyInput, "accountId" | "createdByUserId" | "creationFormKey">,
  formKey: string | null,
): Promise<FormKeyOutcome> {
  await requireConfirmedAccount(h.db, who.actor);
  const beyond = input.scopes.filter((s) => !roleAllows(who.role, s));
  if (beyond.length > 0)
    throw new ScopesBeyondRoleError(`not allowed to a ${who.role}: ${beyond.join(", ")}`);
  const accountId = who.actor.accountId;
  const earlier = async (db = h.db) => {
    const seen = formKey ? await findApiKeyByCreationFormKey(db, accountId, formKey) : undefined;
    if (seen && seen.createdByUserId !== who.userId)
      throw new FormKeyReusedError("the form was someone else's");
    return seen;
  };
  try {
    return await inTransaction(h.db, async (tx): Promise<FormKeyOutcome> => {
      const seen = await earlier(tx);
      if (seen) return { created: false, key: seen };
      const now = h.clock.now();
      const key = await createApiKey(
        tx,
        { ...input, accountId, createdByUserId: who.userId, creationFormKey: formKey },
        now,
      );
      await recordAudit(
        tx,
        auditActorOf(who.actor),
        { action: "api_key.created", targetType: "api_key", targetId: key.credentialId },
        now,
      );
      return { created: true, ...key };
    });
  } catch (error) {
    if (error instanceof FormKeyReusedError) throw error;
    // Two sends of one form at the same moment: the unique form key let only one insert through.
    const seen = await earlier();
    if (seen) return { created: false, key: seen };
    throw error;
  }
}

/**
 * Revokes a key of the person's account that they may see, with an audit record; null when there is
 * no such key (another account's, or a member asking for someone else's).
 */
export async function revokeKeyFromDashboard(
  h: Herald,
  who: KeyManager,
  keyId: string,
): Promise<{ key: ApiKeyRow; alreadyRevoked: boolean } | null> {
  return inTransaction(h.db, async (tx) => {
    const key = await findAccountApiKey(tx, who.actor.accountId, keyId);
    if (!key || !keyVisibleTo(key, who)) return null;
    if (key.revokedAt !== null) return { key, alreadyRevoked: true };
    const now = h.clock.now();
    await markApiKeyRevoked(tx, key.id, now);
    await recordAudit(tx, auditActorOf(who.actor), revokedCredentialEntry(key), now);
    return { key: { ...key, revokedAt: now }, alreadyRevoked: false };
  });
}
