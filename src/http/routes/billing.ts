import { Elysia, t } from "elysia";
import { Type } from "@sinclair/typebox";
import type { Herald } from "../../herald.ts";
import { operation, Timestamp } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { MAX_JSON_BODY_BYTES, payloadTooLarge } from "../body-limit.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { cancelWorkspaceSubscription } from "../../modules/billing/cancel.ts";
import { getBilling } from "../../modules/billing/service.ts";
import { convertTrial, createCheckoutSession, createPortalSession } from "../../modules/billing/sessions.ts";
import { receiveStripeEvent, webhookReceipt } from "../../modules/billing/webhook.ts";

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()]);

const Subscription = t.Object({
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
});

export const Billing = t.Object(
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
      t.Object({
        workspace_id: t.String(),
        used: Type.Integer({ minimum: 0, maximum: 50 }),
        reserved: Type.Integer({ minimum: 0, maximum: 50 }),
        limit: t.Literal(50),
      }),
    ),
    grace_ends_at: Nullable(Timestamp),
    cancelled_workspaces: t.Array(
      t.Object({ workspace_id: t.String(), cancelled_at: Timestamp, ends_at: Timestamp }),
    ),
  },
  { title: "Billing" },
);

export const HostedSession = (object: string, title: string) =>
  t.Object({ object: t.Literal(object), url: t.String({ format: "uri" }) }, { title });

const tag = "Billing";
const processorNote =
  "409 public_conflict while HERALD_BILLING_MODE is disabled; 502 public_provider_error when Stripe " +
  "cannot be reached or refuses.";

/** The account's billing under /v1, and Stripe's webhook receiver outside it (signed, no bearer). */
export function billingRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  const v1 = new Elysia()
    .use(rails)
    .get("/billing", async ({ actor }) => resourceResponse(await getBilling({ h, actor })), {
      ...operation({
        scope: "billing:read",
        summary: "The account's subscription, entitlement and X usage",
        tag,
      }),
      response: { 200: Billing },
    })
    .post(
      "/billing/checkout-sessions",
      ({ actor, request, body }) =>
        runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () =>
          resourceResponse(await createCheckoutSession({ h, actor, interval: body.interval }), 201),
        ),
      {
        ...operation({
          scope: "billing:write",
          summary: "Start a Stripe Checkout that subscribes the account (one unit per workspace)",
          tag,
          errors: [409, 502],
          idempotency: "optional",
          description: processorNote,
        }),
        parse: JSON_PARSER,
        body: t.Object(
          { interval: t.Union([t.Literal("month"), t.Literal("year")]), confirmed: t.Literal(true) },
          { additionalProperties: false },
        ),
        response: { 201: HostedSession("billing_checkout_session", "BillingCheckoutSession") },
      },
    )
    .post(
      "/billing/portal-sessions",
      async ({ actor }) => resourceResponse(await createPortalSession({ h, actor }), 201),
      {
        ...operation({
          scope: "billing:write",
          summary: "Open Stripe's billing portal (payment method, invoices, quantity)",
          tag,
          errors: [409, 502],
          description: processorNote,
        }),
        parse: JSON_PARSER,
        body: t.Optional(t.Object({}, { additionalProperties: false })),
        response: { 201: HostedSession("billing_portal_session", "BillingPortalSession") },
      },
    )
    .post(
      "/billing/conversion",
      ({ actor, request, body }) =>
        runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () =>
          resourceResponse(await convertTrial({ h, actor })),
        ),
      {
        ...operation({
          scope: "billing:write",
          summary: "End the trial now and start paying",
          tag,
          errors: [409, 502],
          idempotency: "optional",
          description: processorNote,
        }),
        parse: JSON_PARSER,
        body: t.Object({ confirmed: t.Literal(true) }, { additionalProperties: false }),
        response: {
          200: t.Object(
            { object: t.Literal("billing_conversion"), converted: t.Literal(true) },
            { title: "BillingConversion" },
          ),
        },
      },
    )
    .post(
      "/workspaces/:workspace_id/subscription/cancel",
      ({ actor, workspace, request, body }) =>
        runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () =>
          resourceResponse(
            await cancelWorkspaceSubscription({
              h,
              actor,
              workspace: workspace!,
              confirmation: body.confirmation,
            }),
          ),
        ),
      {
        ...operation({
          scope: "billing:write",
          summary: "Take a workspace out of the subscription (it stops creating work at the period's end)",
          tag,
          errors: [404, 409, 502],
          idempotency: "optional",
          description:
            '`confirmation` must be exactly "CANCEL <workspace name>" (400 at /confirmation). ' +
            processorNote,
        }),
        parse: JSON_PARSER,
        params: t.Object({ workspace_id: t.String() }),
        body: t.Object(
          {
            confirmed: t.Literal(true),
            confirmation: t.String({ description: 'exactly "CANCEL <workspace name>"' }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Billing },
      },
    );
  return new Elysia()
    .post(
      "/billing/stripe/webhook",
      async ({ request }) => {
        const declared = Number(request.headers.get("content-length") ?? "0");
        if (declared > MAX_JSON_BODY_BYTES) throw payloadTooLarge();
        const raw = new Uint8Array(await request.arrayBuffer());
        if (raw.byteLength > MAX_JSON_BODY_BYTES) throw payloadTooLarge();
        const body = new TextDecoder().decode(raw);
        const result = await receiveStripeEvent(h, body, request.headers.get("stripe-signature"));
        return Response.json(webhookReceipt(result));
      },
      { parse: "none", detail: { hide: true } },
    )
    .group("/v1", (group) => group.use(v1));
}
