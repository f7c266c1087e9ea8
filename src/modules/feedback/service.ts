import { iso } from "../../lib/clock.ts";
import { newId } from "../../db/ids.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { invalid, ProblemError } from "../../core/problem.ts";
import { findAccount } from "../account/repo.ts";
import { recordAudit } from "../audit/repo.ts";
import { findAccountApiKey } from "../keys/repo.ts";
import { findMember } from "../team/repo.ts";
import { insertFeedback, updateFeedback } from "./repo.ts";

/** The longest message, in characters (Unicode code points). */
export const FEEDBACK_MAX_CHARACTERS = 10_000;

/** Seconds a client is asked to wait before sending feedback again after a 503. */
export const FEEDBACK_RETRY_AFTER_SECONDS = 60;

/** The feedback resource answered on success. */
export interface FeedbackCreated {
  object: "feedback";
  id: string;
  created_at: string;
}

/** 400 on /message unless it has 1 to 10,000 characters and is not only white space. */
function checkMessage(message: string): void {
  const characters = [...message].length;
  if (message.trim().length === 0) throw invalid("/message", "must not be empty or only white space");
  if (characters > FEEDBACK_MAX_CHARACTERS)
    throw invalid("/message", `must have at most ${FEEDBACK_MAX_CHARACTERS} characters (has ${characters})`);
}

/** Who sent it, for the operator's reply: the person's address when one is known. */
async function senderLines(h: Herald, actor: Actor): Promise<string[]> {
  const account = await findAccount(h.db, actor.accountId);
  const lines = [`Account: ${account?.name ?? "?"} (${actor.accountId})`];
  if (actor.kind === "session") {
    lines.push(`From: ${actor.name} (signed in to the dashboard)`);
    return lines;
  }
  lines.push(`Credential: ${actor.name} (${actor.prefix}…, ${actor.credentialId})`);
  const key = await findAccountApiKey(h.db, actor.accountId, actor.credentialId);
  if (key?.createdByUserId) {
    const creator = await findMember(h.db, actor.accountId, key.createdByUserId);
    if (creator) lines.push(`Key created by: ${creator.email}`);
  }
  return lines;
}

/**
 * Stores a feedback message and e-mails it to HERALD_FEEDBACK_TO at once (not through the outbox:
 * the caller learns whether it arrived). The message is committed before the e-mail is tried, so it
 * is kept whatever happens; when no mail can be sent (no SMTP, no feedback address, the server refuses
 * or cannot be reached) it stays `unsent` with the reason and the answer is 503 `public_unavailable`,
 * retryable.
 */
export async function submitFeedback(args: {
  h: Herald;
  actor: Actor;
  message: string;
}): Promise<FeedbackCreated> {
  const { h, actor, message } = args;
  checkMessage(message);
  const now = h.clock.now();
  const id = newId("fb");
  await inTransaction(h.db, async (tx) => {
    await insertFeedback(tx, {
      id,
      accountId: actor.accountId,
      credentialId: actor.credentialId,
      message,
      status: "unsent",
      createdAt: now,
    });
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "feedback.submitted", targetType: "feedback", targetId: id },
      now,
    );
  });
  const failure = await sendFeedbackMail(h, actor, id, message);
  if (failure !== null) {
    await inTransaction(h.db, (tx) => updateFeedback(tx, id, { lastError: failure }));
    h.logger.warn("feedback stored but not e-mailed", { feedback_id: id, reason: failure });
    throw new ProblemError(
      "public_unavailable",
      "Your feedback is saved, but it could not be e-mailed to the operator right now. Try again later.",
      { retryAfter: FEEDBACK_RETRY_AFTER_SECONDS, retrySafety: "safe" },
    );
  }
  const sentAt = h.clock.now();
  await inTransaction(h.db, (tx) => updateFeedback(tx, id, { status: "sent", sentAt, lastError: null }));
  return { object: "feedback", id, created_at: iso(now) };
}

/** Sends the e-mail; the reason it could not be sent, or null when the mail server accepted it. */
async function sendFeedbackMail(
  h: Herald,
  actor: Actor,
  id: string,
  message: string,
): Promise<string | null> {
  if (!h.mail) return "no mail server: HERALD_SMTP_URL is not set";
  if (!h.config.feedbackTo) return "no feedback address: HERALD_FEEDBACK_TO is not set";
  try {
    await h.mail.send({
      from: h.config.mailFrom,
      to: h.config.feedbackTo,
      subject: `Herald feedback ${id}`,
      text: [...(await senderLines(h, actor)), `Feedback: ${id}`, ``, message].join("\n"),
    });
    return null;
  } catch (error) {
    // Never the SMTP URL (it may hold credentials): nodemailer's messages carry the server's answer.
    return (error instanceof Error ? error.message : String(error)).slice(0, 500);
  }
}
