import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { inGuardedTransaction, inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { claimDueMail, findMailWithLinks, insertMail, updateMail, type MailRow } from "./repo.ts";

/** Attempts before a message is marked `failed`. */
export const MAIL_MAX_ATTEMPTS = 10;

/**
 * A claimed message is not due again for this long: far more than one SMTP exchange takes (its
 * timeouts are 10 s to connect, 10 s to greet, 20 s of silence), so no other process sends it
 * meanwhile, and one that dies mid-send leaves it due again after it (at least once).
 */
export const MAIL_CLAIM_LEASE_MS = 10 * 60 * 1000;

/** Delay before retry number `attempt` (1-based): 30 s doubling, at most one hour. */
export function mailRetryDelayMs(attempt: number): number {
  return Math.min(30_000 * 2 ** (attempt - 1), 3_600_000);
}

/** What every link becomes in the copy of a message the outbox keeps. */
export const LINK_REMOVED = "[link removed]";

/**
 * The text as the outbox keeps it: every link (`scheme://…` up to the next space) replaced by
 * LINK_REMOVED. Mail carries one-time links (invitations, confirmations, password resets) whose
 * tokens are stored hashed elsewhere; the kept copy must not be a way around that.
 */
export function withoutLinks(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, LINK_REMOVED);
}

/**
 * Queues a message; call inside the transaction of the write that causes it. Only the copy without
 * links is kept readable; the whole text is sealed with the installation's secret key until it is
 * sent or given up, so no usable token is in the database, its backups or its exports.
 */
export async function enqueueMail(
  h: Pick<Herald, "secrets">,
  db: Db,
  message: { to: string; subject: string; text: string; invitationId?: number },
  now: number,
): Promise<string> {
  const id = newId("mail");
  await insertMail(db, {
    id,
    toAddress: message.to,
    subject: message.subject,
    textBody: withoutLinks(message.text),
    sealedBody: h.secrets.encrypt(message.text),
    status: "pending",
    nextAttemptAt: now,
    invitationId: message.invitationId ?? null,
    createdAt: now,
  });
  return id;
}

/**
 * Claims the message due first for this process: its next attempt moves to the end of the lease,
 * in the same transaction that found it, so another process (which skips rows being claimed on
 * PostgreSQL) does not take it too. The status stays `pending`: a claim is not an attempt.
 */
async function claimNextMail(h: Herald): Promise<MailRow | undefined> {
  return inGuardedTransaction(h.db, async (tx) => {
    const now = h.clock.now();
    return claimDueMail(tx, now, now + MAIL_CLAIM_LEASE_MS);
  });
}

/** Changes a message's columns. */
async function changeMail(h: Herald, id: string, changes: Partial<MailRow>): Promise<void> {
  await inGuardedTransaction(h.db, (tx) => updateMail(tx, id, changes));
}

/** The Herald values whose outbox was checked for messages queued before sealing (once per process). */
const legacySealed = new WeakSet<Herald>();

/**
 * Sends due messages from the outbox (no-op without SMTP), one claimed message at a time so each
 * lease covers a single SMTP exchange. A failure schedules a retry with backoff; after
 * MAIL_MAX_ATTEMPTS the message is `failed`. The first run of a process (with SMTP or without) seals
 * what an older version left readable (`sealLegacyMail`). Returns how many were sent.
 */
export async function deliverDueMail(h: Herald, batch = 20): Promise<number> {
  if (!legacySealed.has(h)) {
    await sealLegacyMail(h);
    legacySealed.add(h);
  }
  if (!h.mail) return 0;
  let sent = 0;
  for (let i = 0; i < batch; i++) {
    const message = await claimNextMail(h);
    if (!message) break;
    if (await sendOne(h, h.mail, message)) sent += 1;
  }
  return sent;
}

/** One attempt of one claimed message, and its outcome stored; true when it was sent. */
async function sendOne(h: Herald, mail: NonNullable<Herald["mail"]>, message: MailRow): Promise<boolean> {
  const attempts = message.attempts + 1;
  try {
    await mail.send({
      from: h.config.mailFrom,
      to: message.toAddress,
      subject: message.subject,
      text: wholeText(h, message),
    });
  } catch (error) {
    const failed = attempts >= MAIL_MAX_ATTEMPTS;
    const reason = (error as Error).message.slice(0, 500);
    await changeMail(h, message.id, {
      attempts,
      lastError: reason,
      status: failed ? "failed" : "pending",
      nextAttemptAt: h.clock.now() + mailRetryDelayMs(attempts),
      // Given up: the sealed text goes too.
      ...(failed ? { sealedBody: null } : {}),
    });
    h.logger.warn(failed ? "mail delivery failed for good" : "mail delivery failed; will retry", {
      mail_id: message.id,
      attempts,
      reason,
    });
    return false;
  }
  await changeMail(h, message.id, {
    status: "sent",
    attempts,
    sentAt: h.clock.now(),
    lastError: null,
    sealedBody: null,
  });
  return true;
}

/** The text to send: the sealed whole text (a row queued before sealing has only its own text). */
function wholeText(h: Herald, message: MailRow): string {
  if (message.sealedBody === null) return message.textBody;
  try {
    return h.secrets.decrypt(message.sealedBody);
  } catch {
    throw new Error("the sealed text cannot be opened with this installation's secret key");
  }
}

/**
 * Rewrites messages queued before the outbox sealed its texts (their text still holds links): a waiting
 * one has its whole text sealed, and every one keeps only the copy without links. Run at start; one
 * pass in id order, so a row whose `://` is no link (left as it is) is read once.
 */
export async function sealLegacyMail(h: Herald): Promise<number> {
  let rewritten = 0;
  let afterId = "";
  for (;;) {
    // Read and rewritten in one transaction, so a message sent meanwhile is not sealed again.
    const rows = await inTransaction(h.db, async (tx) => {
      const rows = await findMailWithLinks(tx, afterId, 100);
      for (const row of rows) {
        const waiting = row.status === "pending" && row.sealedBody === null;
        const sealedBody = waiting ? h.secrets.encrypt(row.textBody) : row.sealedBody;
        await updateMail(tx, row.id, { textBody: withoutLinks(row.textBody), sealedBody });
      }
      return rows;
    });
    if (rows.length === 0) return rewritten;
    rewritten += rows.length;
    afterId = rows.at(-1)!.id;
  }
}
