import { iso } from "../../lib/clock.ts";
import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { notFound, ProblemError } from "../../core/problem.ts";
import { findAccount, findUserByEmail } from "../account/repo.ts";
import { type Role, ROLE_SCOPES } from "../account/roles.ts";
import { recordAudit } from "../audit/repo.ts";
import { enqueueMail } from "../mail/outbox.ts";
import { newSecretToken } from "../sessions/tokens.ts";
import {
  findInvitation,
  findOpenInvitation,
  insertInvitation,
  type InvitationWithDelivery,
  updateInvitation,
  withdrawPendingMail,
} from "./repo.ts";

/** How long an invitation stays valid. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Where an invitation's e-mailed link leads: the hosted page that signs the person up. */
export const INVITATION_PAGE_PATH = "/invitations";

/** The invitation resource (`status` turns `expired` once `expires_at` passes). */
export function presentInvitation(row: InvitationWithDelivery, now: number) {
  return {
    id: String(row.id),
    object: "account_invitation" as const,
    email: row.email,
    role: row.role,
    status: row.expiresAt <= now ? ("expired" as const) : ("pending" as const),
    created_at: iso(row.createdAt),
    expires_at: iso(row.expiresAt),
    delivery: { status: row.deliveryStatus, requested_at: iso(row.deliveryRequestedAt) },
  };
}

/**
 * A role above `member` can only be given by a credential that holds every scope of that role itself,
 * the rule keys follow too: an admin cannot make an owner, a narrow key cannot make an admin.
 */
function checkRoleGrantable(actor: Actor, role: Role): void {
  if (role === "member") return;
  const missing = ROLE_SCOPES[role].filter((s) => !actor.scopes.includes(s));
  if (missing.length === 0) return;
  throw new ProblemError(
    "public_scope_missing",
    `Inviting someone as ${role} needs a credential with every scope of that role; ` +
      `this one lacks ${missing.join(", ")}.`,
    { errors: [{ pointer: "/role", code: "custom", detail: `cannot be granted by this credential` }] },
  );
}

/** Queues the invitation's e-mail with a fresh one-time link; returns the link and its token's hash. */
async function queueInvitationMail(
  h: Herald,
  tx: Db,
  invitation: { id: number; accountId: string; email: string; role: Role; expiresAt: number },
  now: number,
): Promise<{ hash: string; link: string }> {
  const account = (await findAccount(tx, invitation.accountId))!;
  const { token, hash } = newSecretToken();
  const link = `${h.config.baseUrl}${INVITATION_PAGE_PATH}/${token}`;
  await enqueueMail(
    h,
    tx,
    {
      to: invitation.email,
      subject: `You are invited to ${account.name} on Herald`,
      text: [
        `You have been invited to join the Herald account "${account.name}" as ${invitation.role}.`,
        ``,
        `Accept the invitation and choose your password here:`,
        link,
        ``,
        `Invitation number: ${invitation.id}`,
        `The invitation expires on ${iso(invitation.expiresAt)}.`,
        ``,
        `If you did not expect this, ignore this message.`,
      ].join("\n"),
      invitationId: invitation.id,
    },
    now,
  );
  return { hash, link };
}

/**
 * An invitation as its inviter gets it back: with the one-time link to pass on when no mail server is
 * configured (the e-mail waits in the outbox until one is), else without. Herald keeps only the
 * link's hash, so this answer is the only place it ever appears.
 */
export type IssuedInvitation = InvitationWithDelivery & { link: string | null };

function warnWithoutMail(h: Herald, id: number): void {
  if (!h.mail)
    h.logger.warn(
      "invitation stored but not e-mailed: HERALD_SMTP_URL is not set; " +
        "it will be sent once SMTP is configured",
      { invitation_id: String(id) },
    );
}

/**
 * Invites an address to the account: the invitation and its e-mail (in the outbox, sent with
 * retries when SMTP is configured) are stored in one transaction with the audit record.
 */
export async function inviteToAccount(args: {
  h: Herald;
  actor: Actor;
  email: string;
  role?: Role;
}): Promise<IssuedInvitation> {
  const { h, actor, email } = args;
  const role = args.role ?? "member";
  checkRoleGrantable(actor, role);
  const now = h.clock.now();
  const existing = await findUserByEmail(h.db, email);
  if (existing && existing.accountId === actor.accountId) {
    throw new ProblemError("public_conflict", "This address already belongs to a member of the account.", {
      errors: [{ pointer: "/email", code: "custom", detail: "is already a member" }],
    });
  }
  const { id, link } = await inTransaction(h.db, async (tx) => {
    const expiresAt = now + INVITATION_TTL_MS;
    const invitationId = await insertInvitation(tx, {
      accountId: actor.accountId,
      email,
      role,
      createdAt: now,
      expiresAt,
      deliveryRequestedAt: now,
    });
    const invitation = { id: invitationId, accountId: actor.accountId, email, role, expiresAt };
    const queued = await queueInvitationMail(h, tx, invitation, now);
    await updateInvitation(tx, invitationId, { tokenHash: queued.hash });
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "invitation.created", targetType: "account_invitation", targetId: String(invitationId) },
      now,
    );
    return { id: invitationId, link: queued.link };
  });
  warnWithoutMail(h, id);
  return { ...(await findInvitation(h.db, id))!, link: h.mail ? null : link };
}

/** The numeric id of a path parameter, or 404 (ids are numeric strings). */
export function invitationIdOf(raw: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) throw notFound("invitation");
  return Number(raw);
}

/**
 * Sends an invitation again (POST /account/invitations/{id}/resend), pending or expired: a new
 * e-mail with a new link (the earlier link stops working, and its e-mail is withdrawn if it had not
 * gone out yet) and a new expiry, seven days from now. Revoked and accepted invitations are 404.
 */
export async function resendInvitation(args: {
  h: Herald;
  actor: Actor;
  id: number;
}): Promise<IssuedInvitation> {
  const { h, actor, id } = args;
  const now = h.clock.now();
  const link = await inTransaction(h.db, async (tx) => {
    const row = await findOpenInvitation(tx, actor.accountId, id);
    if (!row) throw notFound("invitation");
    await withdrawPendingMail(tx, id, "replaced by a newer e-mail");
    const expiresAt = now + INVITATION_TTL_MS;
    const queued = await queueInvitationMail(h, tx, { ...row, expiresAt }, now);
    await updateInvitation(tx, id, { tokenHash: queued.hash, expiresAt, deliveryRequestedAt: now });
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "invitation.resent", targetType: "account_invitation", targetId: String(id) },
      now,
    );
    return queued.link;
  });
  warnWithoutMail(h, id);
  return { ...(await findInvitation(h.db, id))!, link: h.mail ? null : link };
}

/**
 * Revokes an invitation (POST /account/invitations/{id}/revoke): its link stops working, an e-mail
 * not yet sent is withdrawn, and it leaves the listing. Revoking again is 404, like an unknown id.
 */
export async function revokeInvitation(args: { h: Herald; actor: Actor; id: number }) {
  const { h, actor, id } = args;
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    const row = await findOpenInvitation(tx, actor.accountId, id);
    if (!row) throw notFound("invitation");
    await updateInvitation(tx, id, { revokedAt: now });
    await withdrawPendingMail(tx, id, "invitation revoked");
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "invitation.revoked", targetType: "account_invitation", targetId: String(id) },
      now,
    );
    return {
      id: String(id),
      object: "account_invitation" as const,
      email: row.email,
      revoked: true as const,
    };
  });
}
