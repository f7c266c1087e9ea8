import { auditActorOf, type Actor } from "../../core/actor.ts";
import { ProblemError } from "../../core/problem.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { recordAudit } from "../audit/repo.ts";
import { countWorkspaces, ensureSubscriptionRow, findBillingState, updateSubscriptionRow } from "./repo.ts";
import { billingStateOf, requireProcessor } from "./service.ts";
import { callStripe } from "./stripe.ts";
import { isEnded, storeOwnChange } from "./subscription.ts";

/** Stripe Checkout refuses a `trial_end` less than 48 hours away. */
const MIN_CHECKOUT_TRIAL_MS = 48 * 3_600_000;

async function audit(h: Herald, actor: Actor, action: string, targetType: string, targetId: string) {
  await inTransaction(h.db, (tx) =>
    recordAudit(tx, auditActorOf(actor), { action, targetType, targetId }, h.clock.now()),
  );
}

/** The account's Stripe customer, created (once: an idempotency key per account) on first need. */
async function customerOf(h: Herald, accountId: string, known: string | null): Promise<string> {
  if (known) return known;
  const customer = await callStripe(h, "create a customer", (stripe) =>
    stripe.customers.create(
      { metadata: { herald_account_id: accountId } },
      { idempotencyKey: `herald-customer-${accountId}` },
    ),
  );
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    const row = await ensureSubscriptionRow(tx, accountId, now);
    if (row.stripeCustomerId) return row.stripeCustomerId;
    await updateSubscriptionRow(tx, accountId, { stripeCustomerId: customer.id, updatedAt: now });
    return customer.id;
  });
}

/**
 * POST /billing/checkout-sessions: a Stripe Checkout page that subscribes the account to the chosen
 * price, one unit per workspace. What is left of the account's trial (at least 48 hours, as Stripe
 * requires) carries over, once: an account that had a subscription before gets no new trial.
 */
export async function createCheckoutSession(args: { h: Herald; actor: Actor; interval: "month" | "year" }) {
  const { h, actor } = args;
  requireProcessor(h);
  const state = await billingStateOf(h, actor.accountId);
  const row = state.row;
  if (row?.stripeSubscriptionId && !isEnded(row.status))
    throw new ProblemError(
      "public_conflict",
      `The account already has a subscription (${row.status}); change or pay it in the billing portal ` +
        "(POST /v1/billing/portal-sessions).",
    );
  const customer = await customerOf(h, actor.accountId, row?.stripeCustomerId ?? null);
  const quantity = Math.max(1, await countWorkspaces(h.db, actor.accountId));
  const trialEnd = state.localTrialEndsAt;
  const carryTrial =
    !row?.stripeSubscriptionId && trialEnd !== null && trialEnd - state.now >= MIN_CHECKOUT_TRIAL_MS;
  const metadata = { herald_account_id: actor.accountId };
  const billingPage = `${h.config.baseUrl}/dashboard/billing`;
  const session = await callStripe(h, "create a checkout session", (stripe) =>
    stripe.checkout.sessions.create({
      mode: "subscription",
      customer,
      client_reference_id: actor.accountId,
      line_items: [
        {
          price: args.interval === "year" ? h.config.billing.priceYearly! : h.config.billing.priceMonthly!,
          quantity,
        },
      ],
      subscription_data: carryTrial ? { metadata, trial_end: Math.floor(trialEnd! / 1000) } : { metadata },
      metadata,
      success_url: `${billingPage}?checkout=success`,
      cancel_url: `${billingPage}?checkout=cancelled`,
    }),
  );
  if (!session.url) throw new ProblemError("public_provider_error", "Stripe returned no checkout page.");
  await audit(h, actor, "billing.checkout_session_created", "billing_checkout_session", session.id);
  return { object: "billing_checkout_session" as const, url: session.url };
}

/** POST /billing/portal-sessions: Stripe's customer portal (payment method, invoices, quantity, cancel). */
export async function createPortalSession(args: { h: Herald; actor: Actor }) {
  const { h, actor } = args;
  requireProcessor(h);
  const found = await findBillingState(h.db, actor.accountId);
  const customer = found?.row?.stripeCustomerId;
  if (!customer)
    throw new ProblemError(
      "public_conflict",
      "The account has no Stripe customer yet: start with a checkout (POST /v1/billing/checkout-sessions).",
    );
  const session = await callStripe(h, "create a billing portal session", (stripe) =>
    stripe.billingPortal.sessions.create({ customer, return_url: `${h.config.baseUrl}/dashboard/billing` }),
  );
  await audit(h, actor, "billing.portal_session_created", "billing_portal_session", session.id);
  return { object: "billing_portal_session" as const, url: session.url };
}

/**
 * POST /billing/conversion: ends a Stripe trial now (`trial_end: "now"`), so the first invoice is
 * charged at once. The answer from Stripe is stored straight away; its webhook confirms it.
 */
export async function convertTrial(args: { h: Herald; actor: Actor }) {
  const { h, actor } = args;
  requireProcessor(h);
  const { row } = await billingStateOf(h, actor.accountId);
  if (!row?.stripeSubscriptionId || row.status !== "trialing")
    throw new ProblemError(
      "public_conflict",
      row?.stripeSubscriptionId
        ? `The subscription is ${row.status}, not in a trial: there is nothing to convert.`
        : "The account's trial has no subscription yet: subscribe with POST /v1/billing/checkout-sessions.",
    );
  const subscriptionId = row.stripeSubscriptionId;
  const updated = await callStripe(h, "end the trial", (stripe) =>
    stripe.subscriptions.update(subscriptionId, { trial_end: "now" }),
  );
  const now = h.clock.now();
  await inTransaction(h.db, async (tx) => {
    await storeOwnChange(tx, actor.accountId, updated, now);
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "billing.trial_converted", targetType: "subscription", targetId: subscriptionId },
      now,
    );
  });
  return { object: "billing_conversion" as const, converted: true as const };
}
