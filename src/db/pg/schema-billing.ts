// Tables of billing with Stripe. PostgreSQL twin of src/db/sqlite/schema-billing.ts.
import { bigint, boolean, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts, workspaces } from "./schema.ts";

/** An account's subscription; an account without a row has not started a checkout yet. */
export const billingSubscriptions = pgTable(
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
    workspaceQuantity: bigint("workspace_quantity", { mode: "number" }).notNull(),
    trialEndsAt: bigint("trial_ends_at", { mode: "number" }),
    currentPeriodEndsAt: bigint("current_period_ends_at", { mode: "number" }),
    cancelAt: bigint("cancel_at", { mode: "number" }),
    cancelAtPeriodEnd: boolean("cancel_at_period_end").notNull(),
    /** When the subscription became `past_due` (the grace period runs from here). */
    pastDueSince: bigint("past_due_since", { mode: "number" }),
    /** `created` of the last Stripe event applied (ms): an older event arriving later is not applied. */
    lastEventAt: bigint("last_event_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("billing_subscriptions_customer").on(t.stripeCustomerId)],
);

/** Every Stripe event received once: a redelivery is recognised by its id and not applied again. */
export const billingStripeEvents = pgTable(
  "billing_stripe_events",
  {
    id: text("id").primaryKey(),
    type: text("type").notNull(),
    accountId: text("account_id"),
    /** The event's `created` (ms). */
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    receivedAt: bigint("received_at", { mode: "number" }).notNull(),
    /** `applied`, `stale` (older than the state already applied) or `ignored` (nothing of ours). */
    outcome: text("outcome", { enum: ["applied", "stale", "ignored"] }).notNull(),
  },
  (t) => [index("billing_stripe_events_received").on(t.receivedAt)],
);

/** A workspace whose share of the subscription was cancelled; it stops creating work at `ends_at`. */
export const billingWorkspaceCancellations = pgTable(
  "billing_workspace_cancellations",
  {
    workspaceId: text("workspace_id")
      .primaryKey()
      .references(() => workspaces.id),
    accountId: text("account_id").notNull(),
    canceledAt: bigint("canceled_at", { mode: "number" }).notNull(),
    endsAt: bigint("ends_at", { mode: "number" }).notNull(),
  },
  (t) => [index("billing_workspace_cancellations_account").on(t.accountId, t.canceledAt)],
);

/**
 * The installation's billing facts, one row (`id` = "installation"): when a server first ran in a
 * processor mode. Accounts older than that count their trial from then, not from their creation.
 */
export const billingInstallation = pgTable("billing_installation", {
  id: text("id").primaryKey(),
  processorSince: bigint("processor_since", { mode: "number" }).notNull(),
});
