import { iso } from "../../lib/clock.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { ProblemError } from "../../core/problem.ts";
import { findAccount, findUserByEmail } from "../account/repo.ts";
import { recordAudit } from "../audit/repo.ts";
import { enqueueMail } from "../mail/outbox.ts";
import { findInvitation, insertInvitation, type InvitationWithDelivery } from "./repo.ts";

/** How long an invitation stays valid. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The invitation resource (`status` turns `expired` once `expires_at` passes). */
export function presentInvitation(row: InvitationWithDelivery, now: number) {
  return {
    id: String(row.id),
    object: "account_invitation" as const,
    email: row.email,
    status: row.expiresAt <= now ? ("expired" as const) : ("pending" as const),
    created_at: iso(row.createdAt),
    expires_at: iso(row.expiresAt),
    delivery: { status: row.deliveryStatus, requested_at: iso(row.deliveryRequestedAt) },
  };
}

/**
 * Invites an address to the account: the invitation and its e-mail (in the outbox, sent with
 * retries when SMTP is configured) are stored in one transaction with the audit record.
 */
export async function inviteToAccount(args: {
  h: Herald;
  actor: Actor;
  email: string;
}): Promise<InvitationWithDelivery> {
  const { h, actor, email } = args;
  const now = h.clock.now();
  const existing = await findUserByEmail(h.db, email);
  if (existing && existing.accountId === actor.accountId) {
    throw new ProblemError("public_conflict", "This address already belongs to a member of the account.", {
      errors: [{ pointer: "/email", code: "custom", detail: "is already a member" }],
    });
  }
  const id = await inTransaction(h.db, async (tx) => {
    const account = (await findAccount(tx, actor.accountId))!;
    const invitationId = await insertInvitation(tx, {
      accountId: actor.accountId,
      email,
      createdAt: now,
      expiresAt: now + INVITATION_TTL_MS,
      deliveryRequestedAt: now,
    });
    await enqueueMail(
      tx,
      {
        to: email,
        subject: `You are invited to ${account.name} on Herald`,
        text: [
          `You have been invited to join the Herald account "${account.name}".`,
          ``,
          `Invitation number: ${invitationId}`,
          `Herald: ${h.config.baseUrl}`,
          `The invitation expires on ${iso(now + INVITATION_TTL_MS)}.`,
          ``,
          `If you did not expect this, ignore this message.`,
        ].join("\n"),
        invitationId,
      },
      now,
    );
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "invitation.created", targetType: "account_invitation", targetId: String(invitationId) },
      now,
    );
    return invitationId;
  });
  if (!h.mail)
    h.logger.warn(
      "invitation stored but not e-mailed: HERALD_SMTP_URL is not set; it will be sent once SMTP is configured",
      { invitation_id: String(id) },
    );
  return (await findInvitation(h.db, id))!;
}
