import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { recordAudit } from "../audit/repo.ts";
import { markApiKeyRevoked } from "../keys/repo.ts";

/**
 * Revokes the key that makes the request (POST /me/revoke, the CLI's logout): from the next request
 * on it is 401. The caller needs no scope: any key may give itself up.
 */
export async function revokeCallingKey(args: { h: Herald; actor: Actor }) {
  const { h, actor } = args;
  const now = h.clock.now();
  await inTransaction(h.db, async (tx) => {
    await markApiKeyRevoked(tx, actor.credentialId, now);
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "api_key.revoked", targetType: "api_key", targetId: actor.credentialId },
      now,
    );
  });
  return { id: actor.credentialId, object: "api_key" as const, revoked: true as const };
}
