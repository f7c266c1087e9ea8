import { invalid } from "../../core/problem.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Db } from "../../db/open.ts";
import type { Herald } from "../../herald.ts";
import { billingDisabled } from "./service.ts";
import {
  accountExists,
  ensureSubscriptionRow,
  findSubscriptionByCustomer,
  insertStripeEvent,
  stripeEventSeen,
  updateSubscriptionRow,
} from "./repo.ts";
import { stripeOf, type Stripe } from "./stripe.ts";
import { customerIdOf, isEnded, storeSubscription, subscriptionFields } from "./subscription.ts";

/** What became of a received event. */
export type EventOutcome = "applied" | "stale" | "ignored" | "duplicate";

/** Stripe's default tolerance between the signature's timestamp and now. */
const TOLERANCE_SECONDS = 300;

/**
 * `POST <origin>/billing/stripe/webhook`: verifies the `Stripe-Signature` of the raw body with the
 * official package (`webhooks.constructEventAsync`: under Bun the package signs with Web Crypto, which
 * has no synchronous form), then applies the event once (its id is remembered) and only when it is not
 * older than the state already applied to that subscription (Stripe delivers out of order).
 */
export async function receiveStripeEvent(
  h: Herald,
  rawBody: string,
  signature: string | null,
): Promise<{ id: string; outcome: EventOutcome }> {
  if (h.config.billingMode === "disabled") throw billingDisabled();
  if (signature === null) throw invalid("", "the Stripe-Signature header is missing", "Stripe-Signature");
  const stripe = await stripeOf(h);
  let event: Stripe.Event;
  try {
    event = await stripe.webhooks.constructEventAsync(
      rawBody,
      signature,
      h.config.billing.stripeWebhookSecret!,
      TOLERANCE_SECONDS,
    );
  } catch (error) {
    throw invalid(
      "",
      `the Stripe-Signature does not verify against the body (${(error as Error).message.split("\n")[0]})`,
      "Stripe-Signature",
    );
  }
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    if (await stripeEventSeen(tx, event.id)) return { id: event.id, outcome: "duplicate" as const };
    const { accountId, outcome } = await applyEvent(tx, event, now);
    await insertStripeEvent(tx, {
      id: event.id,
      type: event.type,
      accountId,
      createdAt: event.created * 1000,
      receivedAt: now,
      outcome,
    });
    if (outcome === "ignored")
      h.logger.info("stripe event ignored", { event_id: event.id, type: event.type, account_id: accountId });
    return { id: event.id, outcome };
  });
}

type Applied = { accountId: string | null; outcome: Exclude<EventOutcome, "duplicate"> };

async function applyEvent(db: Db, event: Stripe.Event, now: number): Promise<Applied> {
  if (event.type.startsWith("customer.subscription.")) {
    return applySubscription(db, event.data.object as Stripe.Subscription, event.created * 1000, now);
  }
  if (event.type === "checkout.session.completed") {
    return linkCheckout(db, event.data.object as Stripe.Checkout.Session, now);
  }
  return { accountId: null, outcome: "ignored" };
}

/** The Herald account a Stripe object belongs to: its metadata, else the customer Herald created. */
async function accountOf(db: Db, metadataAccountId: string | undefined, customerId: string | null) {
  if (metadataAccountId && (await accountExists(db, metadataAccountId))) return metadataAccountId;
  if (customerId) return (await findSubscriptionByCustomer(db, customerId))?.accountId ?? null;
  return null;
}

/**
 * A `customer.subscription.*` event: its object is the whole subscription as of `created`. Applied
 * unless the account already holds a newer state of the same subscription (equal times apply: Stripe
 * stamps whole seconds). Another subscription replaces the stored one only once that one has ended.
 */
export async function applySubscription(
  db: Db,
  subscription: Stripe.Subscription,
  eventAt: number,
  now: number,
): Promise<Applied> {
  const accountId = await accountOf(db, subscription.metadata?.herald_account_id, customerIdOf(subscription));
  if (accountId === null) return { accountId: null, outcome: "ignored" };
  const row = await ensureSubscriptionRow(db, accountId, now);
  const same = row.stripeSubscriptionId === subscription.id;
  if (row.stripeSubscriptionId !== null && !same) {
    const replaces = isEnded(row.status) && !isEnded(subscriptionFields(subscription).status);
    if (!replaces) return { accountId, outcome: "ignored" };
  }
  if (same && row.lastEventAt !== null && eventAt < row.lastEventAt) return { accountId, outcome: "stale" };
  await storeSubscription(db, row, subscription, eventAt, now);
  return { accountId, outcome: "applied" };
}

/** `checkout.session.completed`: links the customer and subscription to the account that started it. */
async function linkCheckout(db: Db, session: Stripe.Checkout.Session, now: number): Promise<Applied> {
  const customerId = customerIdOf(session);
  const accountId = await accountOf(db, session.client_reference_id ?? undefined, customerId);
  const subscriptionId =
    typeof session.subscription === "string" ? session.subscription : (session.subscription?.id ?? null);
  if (accountId === null || session.mode !== "subscription" || subscriptionId === null)
    return { accountId, outcome: "ignored" };
  const row = await ensureSubscriptionRow(db, accountId, now);
  // The subscription's own events carry its state; this only links ids not known yet.
  if (row.stripeSubscriptionId !== null && !isEnded(row.status)) return { accountId, outcome: "ignored" };
  if (row.stripeSubscriptionId === subscriptionId) return { accountId, outcome: "ignored" };
  await updateSubscriptionRow(db, accountId, {
    stripeSubscriptionId: subscriptionId,
    stripeCustomerId: customerId ?? row.stripeCustomerId,
    // A replaced subscription's late events must not count as the new one's (see applySubscription).
    status: row.status === "pending_checkout" ? "pending_checkout" : "incomplete",
    lastEventAt: null,
    pastDueSince: null,
    updatedAt: now,
  });
  return { accountId, outcome: "applied" };
}

/** The answer Stripe gets: any 2xx means "received" (Stripe retries anything else for three days). */
export function webhookReceipt(result: { id: string; outcome: EventOutcome }) {
  return { received: true, id: result.id, outcome: result.outcome };
}
