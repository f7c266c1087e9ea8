import { iso } from "../../lib/clock.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { invalid, notFound, ProblemError } from "../../core/problem.ts";
import type { UserRow } from "../account/repo.ts";
import { recordAudit } from "../audit/repo.ts";
import { markApiKeyRevoked } from "../keys/repo.ts";
import { revokedCredentialEntry } from "../keys/service.ts";
import { countOwners, deleteMember, findMember, listKeysHeldBy } from "./repo.ts";

/** The member resource (`account_member`); `name` is what an invited person gave when joining. */
export function presentMember(row: UserRow) {
  return {
    id: row.id,
    object: "account_member" as const,
    email: row.email,
    name: row.name,
    role: row.role,
    created_at: iso(row.createdAt),
  };
}

/** What removing a member answers. */
export interface RemovedMember {
  id: string;
  object: "account_member";
  email: string;
  removed: true;
  revoked_key_ids: string[];
}

/**
 * Removes a person from the account (POST /account/members/{id}/remove). `confirmation` must be the
 * member's address (letter case aside, as addresses are stored lower-cased), else 400 on
 * /confirmation; the last owner cannot be removed (409), so an account always has someone who can
 * do everything. In one transaction: the keys the person held (created in the dashboard or minted by
 * their `herald login`) are revoked, their sessions end, the person is deleted (the address may be
 * invited again) and the removal and each revocation are audited.
 */
export async function removeMember(args: {
  h: Herald;
  actor: Actor;
  memberId: string;
  confirmation: string;
}): Promise<RemovedMember> {
  const { h, actor, memberId, confirmation } = args;
  return inTransaction(h.db, async (tx) => {
    const member = await findMember(tx, actor.accountId, memberId);
    if (!member) throw notFound("member");
    if (confirmation.trim().toLowerCase() !== member.email)
      throw invalid("/confirmation", "must be the member's e-mail address, exactly as listed");
    if (member.role === "owner" && (await countOwners(tx, actor.accountId)) <= 1)
      throw new ProblemError(
        "public_conflict",
        "This is the account's only owner, who cannot be removed: an account always keeps an owner.",
        { userAction: "check_request" },
      );
    const now = h.clock.now();
    const keys = await listKeysHeldBy(tx, actor.accountId, member.id);
    for (const key of keys) {
      await markApiKeyRevoked(tx, key.id, now);
      await recordAudit(tx, auditActorOf(actor), revokedCredentialEntry(key), now);
    }
    await deleteMember(tx, member.id, now);
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "account_member.removed", targetType: "account_member", targetId: member.id },
      now,
    );
    return {
      id: member.id,
      object: "account_member" as const,
      email: member.email,
      removed: true as const,
      revoked_key_ids: keys.map((key) => key.id),
    };
  });
}
