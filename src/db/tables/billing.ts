// Tables of billing with Stripe (issue 17, docs/billing.md): the account's subscription as the last
// applied Stripe event left it, the Stripe events already seen, and workspaces taken out of it.
import type { TableBuilders } from "./builders.ts";
import type { AccountTables } from "./accounts.ts";

/** The billing tables. */
export function defineBillingTables(
  b: TableBuilders,
  { accounts, workspaces }: Pick<AccountTables, "accounts" | "workspaces">,
) {
  /** An account's subscription; an account without a row has not started a checkout yet. */
  const billingSubscriptions = b.table(
    "billing_subscriptions",
    {
      accountId: b
        .text("account_id")
        .primaryKey()
        .references(() => accounts.id),
      stripeCustomerId: b.text("stripe_customer_id"),
      stripeSubscriptionId: b.text("stripe_subscription_id"),
      /** The contract's subscription status (`pending_checkout` until Stripe reports a subscription). */
      status: b
        .text("status", {
          enum: ["pending_checkout", "trialing", "active", "past_due", "canceled", "unpaid", "incomplete"],
        })
        .notNull(),
      interval: b.text("interval", { enum: ["month", "year"] }),
      currency: b.text("currency"),
      workspaceQuantity: b.integer("workspace_quantity").notNull(),
      trialEndsAt: b.integer("trial_ends_at"),
      currentPeriodEndsAt: b.integer("current_period_ends_at"),
      cancelAt: b.integer("cancel_at"),
      cancelAtPeriodEnd: b.boolean("cancel_at_period_end").notNull(),
      /** When the subscription became `past_due` (the grace period runs from here). */
      pastDueSince: b.integer("past_due_since"),
      /** `created` of the last Stripe event applied (ms): an older event arriving later is not applied. */
      lastEventAt: b.integer("last_event_at"),
      createdAt: b.integer("created_at").notNull(),
      updatedAt: b.integer("updated_at").notNull(),
    },
    (t) => [b.uniqueIndex("billing_subscriptions_customer").on(t.stripeCustomerId)],
  );

  /** Every Stripe event received once: a redelivery is recognised by its id and not applied again. */
  const billingStripeEvents = b.table(
    "billing_stripe_events",
    {
      id: b.text("id").primaryKey(),
      type: b.text("type").notNull(),
      accountId: b.text("account_id"),
      /** The event's `created` (ms). */
      createdAt: b.integer("created_at").notNull(),
      receivedAt: b.integer("received_at").notNull(),
      /** `applied`, `stale` (older than the state already applied) or `ignored` (nothing of ours). */
      outcome: b.text("outcome", { enum: ["applied", "stale", "ignored"] }).notNull(),
    },
    (t) => [b.index("billing_stripe_events_received").on(t.receivedAt)],
  );

  /** A workspace whose share of the subscription was cancelled; it stops creating work at `ends_at`. */
  const billingWorkspaceCancellations = b.table(
    "billing_workspace_cancellations",
    {
      workspaceId: b
        .text("workspace_id")
        .primaryKey()
        .references(() => workspaces.id),
      accountId: b.text("account_id").notNull(),
      canceledAt: b.integer("canceled_at").notNull(),
      endsAt: b.integer("ends_at").notNull(),
    },
    (t) => [b.index("billing_workspace_cancellations_account").on(t.accountId, t.canceledAt)],
  );

  /**
   * The installation's billing facts, one row (`id` = "installation"): when a server first ran in a
   * processor mode. Accounts older than that count their trial from then, not from their creation.
   */
  const billingInstallation = b.table("billing_installation", {
    id: b.text("id").primaryKey(),
    processorSince: b.integer("processor_since").notNull(),
  });
  return { billingSubscriptions, billingStripeEvents, billingWorkspaceCancellations, billingInstallation };
}
