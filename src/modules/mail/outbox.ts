import { and, eq, lte, sql } from "drizzle-orm";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { mailOutbox } from "../../db/schema.ts";
import type { Herald } from "../../herald.ts";

/** Attempts before a message is marked `failed`. */
export const MAIL_MAX_ATTEMPTS = 10;

/** Delay before retry number `attempt` (1-based): 30 s doubling, at most one hour. */
export function mailRetryDelayMs(attempt: number): number {
  return Math.min(30_000 * 2 ** (attempt - 1), 3_600_000);
}

/** Queues a message; call inside the transaction of the write that causes it. */
export function enqueueMail(
  db: Db,
  message: { to: string; subject: string; text: string; invitationId?: number },
  now: number,
): string {
  const id = newId("mail");
  db.insert(mailOutbox)
    .values({
      id,
      toAddress: message.to,
      subject: message.subject,
      textBody: message.text,
      status: "pending",
      nextAttemptAt: now,
      invitationId: message.invitationId ?? null,
      createdAt: now,
    })
    .run();
  return id;
}

/** Messages still waiting to be sent. */
export function countPendingMail(db: Db): number {
  return db
    .select({ n: sql<number>`count(*)` })
    .from(mailOutbox)
    .where(eq(mailOutbox.status, "pending"))
    .get()!.n;
}

/**
 * Sends due messages from the outbox (no-op without SMTP). A failure schedules a retry with
 * backoff; after MAIL_MAX_ATTEMPTS the message is `failed`. Returns how many were sent.
 */
export async function deliverDueMail(h: Herald, batch = 20): Promise<number> {
  if (!h.mail) return 0;
  const due = h.db
    .select()
    .from(mailOutbox)
    .where(and(eq(mailOutbox.status, "pending"), lte(mailOutbox.nextAttemptAt, h.clock.now())))
    .orderBy(mailOutbox.nextAttemptAt)
    .limit(batch)
    .all();
  let sent = 0;
  for (const message of due) {
    const attempts = message.attempts + 1;
    try {
      await h.mail.send({
        from: h.config.mailFrom,
        to: message.toAddress,
        subject: message.subject,
        text: message.textBody,
      });
      h.db
        .update(mailOutbox)
        .set({ status: "sent", attempts, sentAt: h.clock.now(), lastError: null })
        .where(eq(mailOutbox.id, message.id))
        .run();
      sent += 1;
    } catch (error) {
      const failed = attempts >= MAIL_MAX_ATTEMPTS;
      const reason = (error as Error).message.slice(0, 500);
      h.db
        .update(mailOutbox)
        .set({
          attempts,
          lastError: reason,
          status: failed ? "failed" : "pending",
          nextAttemptAt: h.clock.now() + mailRetryDelayMs(attempts),
        })
        .where(eq(mailOutbox.id, message.id))
        .run();
      h.logger.warn(failed ? "mail delivery failed for good" : "mail delivery failed; will retry", {
        mail_id: message.id,
        attempts,
        reason,
      });
    }
  }
  return sent;
}
