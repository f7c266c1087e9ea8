import { newId } from "../../db/ids.ts";
import { iso } from "../../lib/clock.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Db } from "../../db/open.ts";
import type { Herald } from "../../herald.ts";
import { findUserByEmail } from "../account/repo.ts";
import { recordAudit } from "../audit/repo.ts";
import { enqueueMail } from "../mail/outbox.ts";
import { hashToken, newSecretToken } from "../sessions/tokens.ts";
import {
  findEmailConfirmationByTokenHash,
  hasUnconfirmedAddress,
  insertEmailConfirmation,
  markAddressConfirmed,
} from "./repo.ts";

/** How long a confirmation link works (a new one can be sent from the signed-in page). */
export const EMAIL_CONFIRMATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * Whether new accounts wait for their address to be confirmed (HERALD_SIGNUP_CONFIRM_EMAIL): `on` and
 * `off` as the operator says; `auto` (the default) when Herald can send mail (HERALD_SMTP_URL), so an
 * installation without mail does not promise a link it will never send.
 */
export function emailConfirmationRequired(h: Herald): boolean {
  const setting = h.config.signupConfirmEmail;
  return setting === "auto" ? h.mail !== null : setting === "on";
}

/**
 * Whether a user's account is held back until their address is confirmed (the CLI's key waits).
 * Users without confirmation rows, such as `admin bootstrap`'s, count as confirmed.
 */
export async function userAwaitsConfirmation(db: Db, userId: string): Promise<boolean> {
  return hasUnconfirmedAddress(db, userId);
}

/**
 * Stores a confirmation and queues its e-mail with the one-time link `<base>/confirm-email/<token>`
 * (the token is stored hashed). Call inside the transaction of the write that needs it.
 */
export async function requestEmailConfirmation(
  h: Herald,
  db: Db,
  who: { userId: string; accountId: string; email: string },
  now: number,
): Promise<void> {
  const { token, hash } = newSecretToken();
  const expiresAt = now + EMAIL_CONFIRMATION_TTL_MS;
  await insertEmailConfirmation(db, {
    id: newId("emc"),
    userId: who.userId,
    accountId: who.accountId,
    email: who.email,
    tokenHash: hash,
    createdAt: now,
    expiresAt,
    confirmedAt: null,
  });
  await enqueueMail(
    h,
    db,
    {
      to: who.email,
      subject: "Confirm your address for Herald",
      text: [
        `A Herald account was created for ${who.email} at ${h.config.baseUrl}.`,
        ``,
        `Confirm the address to start using it:`,
        `${h.config.baseUrl}/confirm-email/${token}`,
        ``,
        `The link works until ${iso(expiresAt)}. If you did not sign up, ignore this message:`,
        `the account stays unusable.`,
      ].join("\n"),
    },
    now,
  );
}

/** Logs that a confirmation e-mail waits for SMTP (call after the commit that queued it). */
export function warnWithoutMail(h: Herald, accountId: string): void {
  if (h.mail) return;
  h.logger.warn(
    "confirmation e-mail stored but not sent: HERALD_SMTP_URL is not set; it will be sent once SMTP is configured",
    { account_id: accountId },
  );
}

/** What a confirmation link is: waiting, already used, expired, or unknown. */
export type ConfirmationState =
  | { state: "waiting" | "confirmed" | "expired"; email: string }
  | { state: "unknown" };

/** The state of the confirmation a link's token belongs to (for the page that shows its button). */
export async function inspectConfirmation(h: Herald, token: string): Promise<ConfirmationState> {
  const row = await findEmailConfirmationByTokenHash(h.db, hashToken(token));
  if (!row) return { state: "unknown" };
  if (row.confirmedAt !== null || !(await hasUnconfirmedAddress(h.db, row.userId)))
    return { state: "confirmed", email: row.email };
  if (row.expiresAt <= h.clock.now()) return { state: "expired", email: row.email };
  return { state: "waiting", email: row.email };
}

/**
 * Confirms the address a link was sent to (every pending confirmation of that user, so an older link
 * and a resent one both end the wait). Answers the state the link was in before.
 */
export async function confirmEmail(h: Herald, token: string): Promise<ConfirmationState> {
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    const row = await findEmailConfirmationByTokenHash(tx, hashToken(token));
    if (!row) return { state: "unknown" as const };
    if (row.confirmedAt !== null || !(await hasUnconfirmedAddress(tx, row.userId)))
      return { state: "confirmed" as const, email: row.email };
    if (row.expiresAt <= now) return { state: "expired" as const, email: row.email };
    await markAddressConfirmed(tx, row.userId, now);
    await recordAudit(
      tx,
      { accountId: row.accountId, credentialId: null, requestId: null },
      { action: "user.email_confirmed", targetType: "user", targetId: row.userId },
      now,
    );
    return { state: "waiting" as const, email: row.email };
  });
}

/** Sends a new confirmation link to a signed-in person whose address is still unconfirmed; false if none is needed. */
export async function resendEmailConfirmation(
  h: Herald,
  who: { userId: string; accountId: string; email: string },
): Promise<boolean> {
  const now = h.clock.now();
  const sent = await inTransaction(h.db, async (tx) => {
    if (!(await hasUnconfirmedAddress(tx, who.userId))) return false;
    await requestEmailConfirmation(h, tx, who, now);
    return true;
  });
  if (sent) warnWithoutMail(h, who.accountId);
  return sent;
}

/**
 * Confirms a person's address by hand (`herald admin confirm-email`), as its link would: every
 * pending confirmation of the person. Null when no person has the address.
 */
export async function confirmAddressByHand(
  h: Herald,
  email: string,
): Promise<{ email: string; alreadyConfirmed: boolean } | null> {
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    const user = await findUserByEmail(tx, email.trim());
    if (!user) return null;
    if (!(await hasUnconfirmedAddress(tx, user.id))) return { email: user.email, alreadyConfirmed: true };
    await markAddressConfirmed(tx, user.id, now);
    await recordAudit(
      tx,
      { accountId: user.accountId, credentialId: null, requestId: null },
      { action: "user.email_confirmed", targetType: "user", targetId: user.id },
      now,
    );
    return { email: user.email, alreadyConfirmed: false };
  });
}
