import { iso } from "../../lib/clock.ts";
import type { Actor } from "../../core/actor.ts";
import type { AccountRow } from "./repo.ts";

/** The account resource: the account and the calling credential's context (`/account`, `/me`). */
export function presentAccount(account: AccountRow, actor: Actor) {
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
