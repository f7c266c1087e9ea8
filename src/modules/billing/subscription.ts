import type { Db } from "../../db/open.ts";
import {
  countWorkspaces,
  deleteCancellations,
  findBillingState,
  listCancellations,
  updateSubscriptionRow,
  type SubscriptionFields,
  type SubscriptionRow,
} from "./repo.ts";
import type { Stripe } from "./stripe.ts";

/** Stripe's subscription statuses in the contract's terms (docs/billing.md). */
const STATUS: Record<Stripe.Subscription.Status, SubscriptionRow["status"]> = {
  trialing: "trialing",
  active: "active",
  past_due: "past_due",
  canceled: "canceled",
  unpaid: "unpaid",
  incomplete: "incomplete",
  // The first payment never came: the subscription is over.
  incomplete_expired: "canceled",
  // A trial that ended without a payment method: nothing is paid, as with unpaid.
  paused: "unpaid",
};

/** Whether a status means the subscription is over (a new one may replace it). */
export function isEnded(status: SubscriptionRow["status"]): boolean {
  return status === "canceled";
}

const ms = (seconds: number | null | undefined) => (typeof seconds === "number" ? seconds * 1000 : null);

/**
 * The fields Herald keeps of a Stripe subscription. Since API version 2025-03-31 the billing period
 * is on each item (`items.data[].current_period_end`); Herald prices one item per subscription.
 */
export function subscriptionFields(subscription: Stripe.Subscription): SubscriptionFields {
  const item = subscription.items?.data?.[0];
  const interval = item?.price?.recurring?.interval;
  const legacyPeriodEnd = (subscription as unknown as { current_period_end?: number }).current_period_end;
  return {
    status: STATUS[subscription.status] ?? "incomplete",
    interval: interval === "month" ? "month" : interval === "year" ? "year" : null,
    currency: subscription.currency ?? null,
    workspaceQuantity: item?.quantity ?? 0,
    trialEndsAt: ms(subscription.trial_end),
    currentPeriodEndsAt: ms(item?.current_period_end ?? legacyPeriodEnd),
    cancelAt: ms(subscription.cancel_at),
    cancelAtPeriodEnd: subscription.cancel_at_period_end === true,
  };
}

/** The Stripe customer id of a subscription (the field may be expanded into an object). */
export function customerIdOf(subscription: { customer: string | { id: string } | null }): string | null {
  const customer = subscription.customer;
  return typeof customer === "string" ? customer : (customer?.id ?? null);
}

/**
 * Stores what Stripe says of the account's subscription as of `eventAt` (ms): the status, period and
 * quantity; when it became past due (the grace period's start); and puts cancelled workspaces back
 * when the quantity has grown past the workspaces still in it (raised in the portal), unless the
 * subscription is set to end. Call in a write
 * transaction, after deciding the state is not older than what is stored.
 */
export async function storeSubscription(
  db: Db,
  row: SubscriptionRow,
  subscription: Stripe.Subscription,
  eventAt: number,
  now: number,
): Promise<void> {
  const fields = subscriptionFields(subscription);
  const pastDueSince =
    fields.status !== "past_due"
      ? null
      : row.status === "past_due" && row.pastDueSince !== null
        ? row.pastDueSince
        : eventAt;
  await updateSubscriptionRow(db, row.accountId, {
    ...fields,
    stripeSubscriptionId: subscription.id,
    stripeCustomerId: customerIdOf(subscription) ?? row.stripeCustomerId,
    pastDueSince,
    lastEventAt: Math.max(eventAt, row.stripeSubscriptionId === subscription.id ? (row.lastEventAt ?? 0) : 0),
    updatedAt: now,
  });
  // An ending subscription keeps its quantity until it ends (the last workspace's cancellation).
  if (isEnded(fields.status) || fields.cancelAtPeriodEnd || fields.cancelAt !== null) return;
  const cancelled = await listCancellations(db, row.accountId);
  if (cancelled.length === 0) return;
  const inSubscription = (await countWorkspaces(db, row.accountId)) - cancelled.length;
  const reinstate = Math.min(cancelled.length, fields.workspaceQuantity - inSubscription);
  if (reinstate > 0)
    await deleteCancellations(
      db,
      cancelled.slice(0, reinstate).map((c) => c.workspaceId),
    );
}

/** Stripe stamps events in whole seconds; a state Herald stores itself is stamped the same way. */
const stripeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;

/**
 * Stores Stripe's answer to a change Herald made itself (stamped with the current second), unless
 * another subscription replaced the account's meanwhile. Returns the row as it was before, or null.
 * Call in a write transaction.
 */
export async function storeOwnChange(
  db: Db,
  accountId: string,
  subscription: Stripe.Subscription,
  now: number,
): Promise<SubscriptionRow | null> {
  const current = (await findBillingState(db, accountId))?.row;
  if (current?.stripeSubscriptionId !== subscription.id) return null;
  await storeSubscription(db, current, subscription, stripeSecond(now), now);
  return current;
}
