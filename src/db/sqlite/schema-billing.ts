// Tables of billing with Stripe (issue 17, docs/billing.md): the account's subscription as the last
// applied Stripe event left it, the Stripe events already seen, and workspaces taken out of it.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, workspaces } from "./schema.ts";

/** An account's subscription; an account without a row has not started a checkout yet. */
export const billingSubscriptions = sqliteTable(
  "billing_subscriptions",
  {
    accountId: text("account_id")
      .primaryKey()
      .references(() => accounts.id),
    stripeCustomerId: text("stripe_customer_id"),
    stripeSubscriptionId: text("stripe_subscription_id"),
    /** The contract's subscription status (`pending_checkout` until Stripe reports a subscription). */
    status: text("status", {
      enum: ["pending_checkout", "trialing", "active", "past_due", "canceled", "unpaid", "incomplete"],
    }).notNull(),
    interval: text("interval", { enum: ["month", "year"] }),
    currency: text("currency"),
    workspaceQuantity: integer("workspace_quantity").notNull(),
    trialEndsAt: integer("trial_ends_at"),
    currentPeriodEndsAt: integer("current_period_ends_at"),
    cancelAt: integer("cancel_at"),
    cancelAtPeriodEnd: integer("cancel_at_period_end", { mode: "boolean" }).notNull(),
    /** When the subscription became `past_due` (the grace period runs from here). */
    pastDueSince: integer("past_due_since"),
    /** `created` of the last Stripe event applied (ms): an older event arriving later is not applied. */
    lastEventAt: integer("last_event_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [uniqueIndex("billing_subscriptions_customer").on(t.stripeCustomerId)],
);

/** Every Stripe event received once: a redelivery is recognised by its id and not applied again. */
export const billingStripeEvents = sqliteTable(
  "billing_stripe_events",
  {
    id: text("id").primaryKey(),
    type: text("type").notNull(),
    accountId: text("account_id"),
    /** The event's `created` (ms). */
    createdAt: integer("created_at").notNull(),
    receivedAt: integer("received_at").notNull(),
    /** `applied`, `stale` (older than the state already applied) or `ignored` (nothing of ours). */
    outcome: text("outcome", { enum: ["applied", "stale", "ignored"] }).notNull(),
  },
  (t) => [index("billing_stripe_events_received").on(t.receivedAt)],
);

/** A workspace whose share of the subscription was cancelled; it stops creating work at `ends_at`. */
export const billingWorkspaceCancellations = sqliteTable(
  "billing_workspace_cancellations",
  {
    workspaceId: text("workspace_id")
      .primaryKey()
      .references(() => workspaces.id),
    accountId: text("account_id").notNull(),
    canceledAt: integer("canceled_at").notNull(),
    endsAt: integer("ends_at").notNull(),
  },
  (t) => [index("billing_workspace_cancellations_account").on(t.accountId, t.canceledAt)],
);

/**
 * The installation's billing facts, one row (`id` = "installation"): when a server first ran in a
 * processor mode. Accounts older than that count their trial from then, not from their creation.
 */
export const billingInstallation = sqliteTable("billing_installation", {
  id: text("id").primaryKey(),
  processorSince: integer("processor_since").notNull(),
});
