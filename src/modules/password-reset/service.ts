import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { iso } from "../../lib/clock.ts";
import { findUserByEmail } from "../account/repo.ts";
import { recordAudit } from "../audit/repo.ts";
import { enqueueMail } from "../mail/outbox.ts";
import { revokeUserSessions } from "../sessions/repo.ts";
import { hashToken, newSecretToken } from "../sessions/tokens.ts";
import { newPasswordErrors } from "../signup/password.ts";
import { markAddressConfirmed } from "../signup/repo.ts";
import {
  deleteExpiredPasswordResets,
  endOpenPasswordResets,
  findPasswordResetByTokenHash,
  findResetPerson,
  insertPasswordReset,
  markPasswordResetUsed,
  setUserPasswordHash,
  type PasswordResetRow,
} from "./repo.ts";

/** How long a reset link works. */
export const PASSWORD_RESET_TTL_MS = 60 * 60 * 1000;
/** Where a reset link leads: `<base>/password-reset/<token>`. */
export const PASSWORD_RESET_PATH = "/password-reset";

/** Whether this server can e-mail a reset link (else the operator makes one: `herald admin reset-password`). */
export function resetByMailAvailable(h: Herald): boolean {
  return h.mail !== null;
}

/** A new link: its URL (shown once: only the token's hash is stored) and when it stops working. */
export interface ResetLink {
  url: string;
  expiresAt: number;
}

/** Stores a new link for a person, inside the caller's transaction. */
async function insertResetLink(
  h: Herald,
  db: Db,
  userId: string,
  origin: PasswordResetRow["origin"],
  now: number,
): Promise<ResetLink> {
  const { token, hash } = newSecretToken();
  const expiresAt = now + PASSWORD_RESET_TTL_MS;
  await insertPasswordReset(db, {
    id: newId("pwr"),
    userId,
    tokenHash: hash,
    origin,
    createdAt: now,
    expiresAt,
    usedAt: null,
  });
  return { url: `${h.config.baseUrl}${PASSWORD_RESET_PATH}/${token}`, expiresAt };
}

/**
 * Someone asked on /password-reset for a link to `email`. When a person has that address and mail
 * can be sent, the link is stored and its e-mail queued; otherwise nothing is. Either way the same
 * work happens around it (one write transaction that also clears expired links), and the caller
 * answers the same page, so neither the answer nor its time tells which addresses have accounts.
 */
export async function requestPasswordReset(h: Herald, email: string): Promise<void> {
  const now = h.clock.now();
  const mailable = resetByMailAvailable(h);
  await inTransaction(h.db, async (tx) => {
    await deleteExpiredPasswordResets(tx, now, 100);
    const user = email ? await findUserByEmail(tx, email) : undefined;
    if (!user || !mailable) return;
    const link = await insertResetLink(h, tx, user.id, "mail", now);
    await enqueueMail(
      h,
      tx,
      {
        to: user.email,
        subject: "Choose a new Herald password",
        text: [
          `Someone asked for a new password for ${user.email} at ${h.config.baseUrl}.`,
          ``,
          `To choose one, open this link (it works once, until ${iso(link.expiresAt)}):`,
          link.url,
          ``,
          `Setting a new password signs you out everywhere. If you did not ask for this, ignore`,
          `this message: your password stays as it is.`,
        ].join("\n"),
      },
      now,
    );
  });
}

/**
 * A one-time link for a person, made by the operator (`herald admin reset-password`): the same kind
 * of link as the e-mailed one. Null when no person has the address.
 */
export async function createAdminResetLink(h: Herald, email: string): Promise<ResetLink | null> {
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    const user = await findUserByEmail(tx, email.trim());
    if (!user) return null;
    const link = await insertResetLink(h, tx, user.id, "admin", now);
    await recordAudit(
      tx,
      { accountId: user.accountId, credentialId: null, requestId: null },
      { action: "user.password_reset_link_created", targetType: "user", targetId: user.id },
      now,
    );
    return link;
  });
}

/** What a reset link leads to. */
export type ResetLinkState =
  | { kind: "unknown" | "used" | "expired" }
  | { kind: "open"; reset: PasswordResetRow; email: string; accountName: string };

/** Looks up the link of a token: open (with whose it is), used, expired or unknown. */
export async function inspectResetLink(h: Herald, token: string): Promise<ResetLinkState> {
  const reset = await findPasswordResetByTokenHash(h.db, hashToken(token));
  if (!reset) return { kind: "unknown" };
  if (reset.usedAt !== null) return { kind: "used" };
  if (reset.expiresAt <= h.clock.now()) return { kind: "expired" };
  const who = await findResetPerson(h.db, reset.userId);
  if (!who) return { kind: "unknown" };
  return { kind: "open", reset, email: who.email, accountName: who.accountName };
}

/** The new password's fields. */
export interface NewPasswordForm {
  password: string;
  password_confirmation: string;
}

/** What setting a new password through a link did. */
export type ResetOutcome =
  | { kind: "unknown" | "used" | "expired" }
  | { kind: "invalid"; errors: { password?: string; password_confirmation?: string } }
  | { kind: "done"; userId: string; email: string; sessionsEnded: number };

/**
 * Sets a new password through a link: checked like every chosen password, hashed with Argon2id, and
 * in one transaction the link used, every other open link of the person ended, every session of the
 * person ended (API keys are not sessions and keep working), and an audit record. A link that came
 * by e-mail proved the address, so an unconfirmed address is confirmed on the way.
 */
export async function completePasswordReset(
  h: Herald,
  input: { token: string; form: NewPasswordForm; requestId: string | null },
): Promise<ResetOutcome> {
  const link = await inspectResetLink(h, input.token);
  if (link.kind !== "open") return link;
  const { password, password_confirmation } = input.form;
  const errors = newPasswordErrors(password, password_confirmation, [link.email, link.accountName]);
  if (Object.keys(errors).length > 0) return { kind: "invalid", errors };
  // Hashing takes tens of milliseconds: never inside the write transaction.
  const passwordHash = await Bun.password.hash(password, { algorithm: "argon2id" });
  const now = h.clock.now();
  return inTransaction(h.db, async (tx): Promise<ResetOutcome> => {
    // Read again in the transaction: another request may have used the link while the password hashed.
    const reset = await findPasswordResetByTokenHash(tx, link.reset.tokenHash);
    if (!reset) return { kind: "unknown" };
    if (reset.usedAt !== null) return { kind: "used" };
    if (reset.expiresAt <= now) return { kind: "expired" };
    const user = await findResetPerson(tx, reset.userId);
    if (!user) return { kind: "unknown" };
    if (!(await markPasswordResetUsed(tx, reset.id, now))) return { kind: "used" };
    await setUserPasswordHash(tx, user.id, passwordHash);
    await endOpenPasswordResets(tx, user.id, now);
    const sessionsEnded = await revokeUserSessions(tx, user.id, now);
    if (reset.origin === "mail") await markAddressConfirmed(tx, user.id, now);
    await recordAudit(
      tx,
      { accountId: user.accountId, credentialId: null, requestId: input.requestId },
      { action: "user.password_reset", targetType: "user", targetId: user.id },
      now,
    );
    return { kind: "done", userId: user.id, email: user.email, sessionsEnded };
  });
}
