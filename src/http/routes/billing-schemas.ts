import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { Closed, Nullable } from "./common-schemas.ts";
import { X_MONTHLY_LIMIT_DEFAULT } from "../../modules/posts/x-usage.ts";

/** The account's Stripe subscription, as Herald last heard of it. */
export const Subscription = t.Object(
  {
    status: t.Union(
      ["pending_checkout", "trialing", "active", "past_due", "canceled", "unpaid", "incomplete"].map((s) =>
        t.Literal(s),
      ),
    ),
    interval: Nullable(t.Union([t.Literal("month"), t.Literal("year")])),
    currency: Nullable(t.String()),
    workspace_quantity: Type.Integer({ minimum: 0 }),
    trial_ends_at: Nullable(Timestamp),
    current_period_ends_at: Nullable(Timestamp),
    cancel_at: Nullable(Timestamp),
    cancel_at_period_end: t.Boolean(),
  },
  { title: "Subscription" },
);

/**
 * The account's billing: subscription, entitlement and X usage, whose counts run up to the server's
 * monthly X limit (`xMonthlyLimit`: the contract's constant 50 unless the operator sets
 * HERALD_X_MONTHLY_POST_LIMIT), so the OpenAPI document describes this server.
 */
export const billingSchema = (xLimit: number) =>
  t.Object(
    {
      object: t.Literal("billing"),
      mode: t.Union([t.Literal("disabled"), t.Literal("processor_test"), t.Literal("processor_live")]),
      entitlement: t.Union([
        t.Literal("trialing"),
        t.Literal("active"),
        t.Literal("grace"),
        t.Literal("read_only"),
      ]),
      subscription: Nullable(Subscription),
      x_usage: t.Array(
        t.Object(
          {
            workspace_id: t.String(),
            used: Type.Integer({ minimum: 0, maximum: xLimit }),
            reserved: Type.Integer({ minimum: 0, maximum: xLimit }),
            limit: t.Literal(xLimit),
          },
          { title: "XUsage" },
        ),
      ),
      grace_ends_at: Nullable(Timestamp),
      cancelled_workspaces: t.Array(
        t.Object(
          { workspace_id: t.String(), cancelled_at: Timestamp, ends_at: Timestamp },
          { title: "CancelledWorkspace" },
        ),
      ),
    },
    { title: "Billing" },
  );

/** The billing object with the contract's limit (the type pages read it as). */
export const Billing = billingSchema(X_MONTHLY_LIMIT_DEFAULT);

/** A Stripe-hosted page to send the person to. */
const HostedSession = (object: string, title: string) =>
  t.Object({ object: t.Literal(object), url: t.String({ format: "uri" }) }, { title });

export const BillingCheckoutSession = HostedSession("billing_checkout_session", "BillingCheckoutSession");
export const BillingPortalSession = HostedSession("billing_portal_session", "BillingPortalSession");

export const BillingConversion = t.Object(
  { object: t.Literal("billing_conversion"), converted: t.Literal(true) },
  { title: "BillingConversion" },
);

/** Body of starting a checkout. */
export const CheckoutBody = Closed(
  { interval: t.Union([t.Literal("month"), t.Literal("year")]), confirmed: t.Literal(true) },
  { title: "CreateBillingCheckoutSessionRequest", examples: [{ interval: "month", confirmed: true }] },
);

/** Body of opening the portal (optional, empty). */
export const PortalBody = t.Optional(
  Closed({}, { title: "CreateBillingPortalSessionRequest", examples: [{}] }),
);

/** Body of ending the trial now. */
export const ConversionBody = Closed(
  { confirmed: t.Literal(true) },
  { title: "ConvertTrialRequest", examples: [{ confirmed: true }] },
);

/** Body of taking a workspace out of the subscription. */
export const CancelSubscriptionBody = Closed(
  {
    confirmed: t.Literal(true),
    confirmation: t.String({ description: 'exactly "CANCEL <workspace name>"' }),
  },
  {
    title: "CancelWorkspaceSubscriptionRequest",
    examples: [{ confirmed: true, confirmation: "CANCEL Marketing" }],
  },
);
