import { newId } from "../../db/ids.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { findAccount, findUserByEmail, insertUser } from "../account/repo.ts";
import { openFirstSession } from "../sessions/service.ts";
import { hashToken } from "../sessions/tokens.ts";
import { checkSignupForm, type SignupForm } from "../signup/service.ts";
import { findInvitationByTokenHash, markInvitationAccepted, type InvitationRow } from "./repo.ts";

/**
 * What an invitation link leads to. Herald's people belong to exactly one account (users.account_id,
 * one row per address), so an address that already has a user cannot accept: `member` when that
 * user is in the inviting account already, `other_account` when it is elsewhere (the person signs in
 * there, or is removed from that account first, or is invited at another address).
 */
export type InvitationLink =
  | { kind: "unknown" | "revoked" | "accepted" | "expired" }
  | { kind: "member" | "other_account"; invitation: InvitationRow }
  | { kind: "open"; invitation: InvitationRow; accountName: string };

/** Looks up the invitation of a link's token and what accepting it would do. */
export async function inspectInvitationLink(h: Herald, token: string): Promise<InvitationLink> {
  const invitation = await findInvitationByTokenHash(h.db, hashToken(token));
  if (!invitation) return { kind: "unknown" };
  if (invitation.revokedAt !== null) return { kind: "revoked" };
  if (invitation.acceptedAt !== null) return { kind: "accepted" };
  if (invitation.expiresAt <= h.clock.now()) return { kind: "expired" };
  const user = await findUserByEmail(h.db, invitation.email);
  if (user) return { kind: user.accountId === invitation.accountId ? "member" : "other_account", invitation };
  const account = await findAccount(h.db, invitation.accountId);
  return { kind: "open", invitation, accountName: account?.name ?? "" };
}

/** What accepting did. */
export type AcceptOutcome =
  | Exclude<InvitationLink, { kind: "open" }>
  | { kind: "invalid"; errors: Partial<Record<keyof SignupForm, string>> }
  | { kind: "done"; session: { id: string; token: string; expiresAt: number }; userId: string };

/**
 * Accepts an invitation from its page: a new person in the inviting account with the invitation's
 * role, their name and password (Argon2id), and a signed-in session, in one transaction with the
 * audit record. The link proved the address, so no confirmation e-mail follows.
 */
export async function acceptInvitation(
  h: Herald,
  input: { token: string; form: SignupForm; requestId: string | null },
): Promise<AcceptOutcome> {
  const link = await inspectInvitationLink(h, input.token);
  if (link.kind !== "open") return link;
  const errors = checkSignupForm(input.form, [link.invitation.email, link.accountName]);
  if (Object.keys(errors).length > 0) return { kind: "invalid", errors };
  // Hashing takes tens of milliseconds: never inside the write transaction.
  const passwordHash = await Bun.password.hash(input.form.password, { algorithm: "argon2id" });
  const now = h.clock.now();
  return inTransaction(h.db, async (tx): Promise<AcceptOutcome> => {
    // Read again in the transaction: it may have been revoked, resent or used while the password hashed.
    const invitation = await findInvitationByTokenHash(tx, hashToken(input.token));
    if (!invitation) return { kind: "unknown" };
    if (invitation.revokedAt !== null) return { kind: "revoked" };
    if (invitation.acceptedAt !== null) return { kind: "accepted" };
    if (invitation.expiresAt <= now) return { kind: "expired" };
    const user = await findUserByEmail(tx, invitation.email);
    if (user)
      return { kind: user.accountId === invitation.accountId ? "member" : "other_account", invitation };
    if (!(await markInvitationAccepted(tx, invitation.id, now))) return { kind: "accepted" };
    const userId = newId("usr");
    await insertUser(tx, {
      id: userId,
      accountId: invitation.accountId,
      email: invitation.email,
      name: input.form.name.trim(),
      passwordHash,
      role: invitation.role,
      createdAt: now,
    });
    const session = await openFirstSession(
      tx,
      { userId, accountId: invitation.accountId, requestId: input.requestId },
      { action: "invitation.accepted", targetType: "account_invitation", targetId: String(invitation.id) },
      now,
    );
    return { kind: "done", session, userId };
  });
}
