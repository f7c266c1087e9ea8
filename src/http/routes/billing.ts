import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { MAX_JSON_BODY_BYTES, payloadTooLarge } from "../body-limit.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { cancelWorkspaceSubscription } from "../../modules/billing/cancel.ts";
import { getBilling } from "../../modules/billing/service.ts";
import { xMonthlyLimit } from "../../modules/posts/x-usage.ts";
import { convertTrial, createCheckoutSession, createPortalSession } from "../../modules/billing/sessions.ts";
import { receiveStripeEvent, webhookReceipt } from "../../modules/billing/webhook.ts";
import {
  billingSchema,
  BillingCheckoutSession,
  BillingConversion,
  BillingPortalSession,
  CancelSubscriptionBody,
  CheckoutBody,
  ConversionBody,
  PortalBody,
} from "./billing-schemas.ts";
import { WorkspaceParams } from "./common-schemas.ts";
import { handler, publicHandler, workspaceOf, type RouteContext } from "./context.ts";

async function showBilling(h: Herald, { actor }: RouteContext) {
  return resourceResponse(await getBilling({ h, actor }));
}

function startCheckout(h: Herald, { actor, request, body }: RouteContext<Static<typeof CheckoutBody>>) {
  return runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () =>
    resourceResponse(await createCheckoutSession({ h, actor, interval: body.interval }), 201),
  );
}

async function openPortal(h: Herald, { actor }: RouteContext) {
  return resourceResponse(await createPortalSession({ h, actor }), 201);
}

function endTrial(h: Herald, { actor, request, body }: RouteContext<Static<typeof ConversionBody>>) {
  return runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () =>
    resourceResponse(await convertTrial({ h, actor })),
  );
}

function cancelSubscription(h: Herald, c: RouteContext<Static<typeof CancelSubscriptionBody>>) {
  const { actor, request, body } = c;
  return runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () =>
    resourceResponse(
      await cancelWorkspaceSubscription({
        h,
        actor,
        workspace: workspaceOf(c),
        confirmation: body.confirmation,
      }),
    ),
  );
}

/** Stripe's webhook: the raw body (its signature covers the bytes), size-limited like any JSON body. */
async function receiveStripeWebhook(h: Herald, { request }: { request: Request }) {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_JSON_BODY_BYTES) throw payloadTooLarge();
  const raw = new Uint8Array(await request.arrayBuffer());
  if (raw.byteLength > MAX_JSON_BODY_BYTES) throw payloadTooLarge();
  const body = new TextDecoder().decode(raw);
  const result = await receiveStripeEvent(h, body, request.headers.get("stripe-signature"));
  return Response.json(webhookReceipt(result));
}

const tag = "Billing";
const processorNote =
  "409 public_conflict while HERALD_BILLING_MODE is disabled; 502 public_provider_error when Stripe " +
  "cannot be reached or refuses.";
const doc = {
  get: operation({
    scope: "billing:read",
    operationId: "getBilling",
    summary: "The account's subscription, entitlement and X usage",
    description:
      "The billing mode (`disabled` when the server bills nothing), the entitlement (trialing, " +
      "active, grace or read_only), the Stripe subscription as Herald last heard of it, each " +
      "workspace's X usage against the monthly limit, and the workspaces taken out of the " +
      "subscription.",
    tag,
  }),
  checkout: operation({
    scope: "billing:write",
    operationId: "createBillingCheckoutSession",
    summary: "Start a Stripe Checkout that subscribes the account (one unit per workspace)",
    tag,
    errors: [409, 502],
    idempotency: "optional",
    description: processorNote,
  }),
  portal: operation({
    scope: "billing:write",
    operationId: "createBillingPortalSession",
    summary: "Open Stripe's billing portal (payment method, invoices, quantity)",
    tag,
    errors: [409, 502],
    description: processorNote,
  }),
  conversion: operation({
    scope: "billing:write",
    operationId: "convertTrial",
    summary: "End the trial now and start paying",
    tag,
    errors: [409, 502],
    idempotency: "optional",
    description: processorNote,
  }),
  cancel: operation({
    scope: "billing:write",
    operationId: "cancelWorkspaceSubscription",
    summary: "Take a workspace out of the subscription (it stops creating work at the period's end)",
    tag,
    errors: [404, 409, 502],
    idempotency: "optional",
    description:
      '`confirmation` must be exactly "CANCEL <workspace name>" (400 at /confirmation). ' + processorNote,
  }),
};

/** The account's billing under /v1, and Stripe's webhook receiver outside it (signed, no bearer). */
export function billingRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  const Billing = billingSchema(xMonthlyLimit(h.config));
  const v1 = new Elysia()
    .use(rails)
    .get("/billing", handler(h, showBilling), { ...doc.get, response: { 200: Billing } })
    .post("/billing/checkout-sessions", handler(h, startCheckout), {
      ...doc.checkout,
      parse: JSON_PARSER,
      body: CheckoutBody,
      response: { 201: BillingCheckoutSession },
    })
    .post("/billing/portal-sessions", handler(h, openPortal), {
      ...doc.portal,
      parse: JSON_PARSER,
      body: PortalBody,
      response: { 201: BillingPortalSession },
    })
    .post("/billing/conversion", handler(h, endTrial), {
      ...doc.conversion,
      parse: JSON_PARSER,
      body: ConversionBody,
      response: { 200: BillingConversion },
    })
    .post("/workspaces/:workspace_id/subscription/cancel", handler(h, cancelSubscription), {
      ...doc.cancel,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      body: CancelSubscriptionBody,
      response: { 200: Billing },
    });
  return new Elysia()
    .post("/billing/stripe/webhook", publicHandler(h, receiveStripeWebhook), {
      parse: "none",
      detail: { hide: true },
    })
    .group("/v1", (group) => group.use(v1));
}
