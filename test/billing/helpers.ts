import { expect } from "bun:test";
import Stripe from "stripe";
import { ManualClock } from "../../src/lib/clock.ts";
import { startStripeFake, type StripeFake } from "../fakes/stripe.ts";
import { startTestServer, type TestResponse, type TestServer } from "../helpers/server.ts";

export const WEBHOOK_SECRET = "whsec_herald_billing_tests";
/** The test clock's start (the server's `now`): 2026-03-01T12:00:00Z. */
export const START = Date.parse("2026-03-01T12:00:00.000Z");
export const DAY_MS = 86_400_000;

// Only the package's signer is used; it never calls Stripe.
const signer = new Stripe("sk_test_signer_only");

/** A Herald server billing through the Stripe fake (`processor_test`). */
export interface BillingServer {
  s: TestServer;
  stripe: StripeFake;
  /** Signs an event with the webhook secret (or `secret`) and POSTs it to Herald's receiver. */
  deliver(event: Record<string, unknown>, secret?: string): Promise<TestResponse>;
  stop(): Promise<void>;
}

/** The variables of a server billing through the Stripe fake (`processor_test`). */
export function stripeEnv(stripe: StripeFake): Record<string, string> {
  return {
    HERALD_BILLING_MODE: "processor_test",
    HERALD_STRIPE_SECRET_KEY: stripe.secretKey,
    HERALD_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    HERALD_STRIPE_PRICE_MONTHLY: "price_herald_monthly",
    HERALD_STRIPE_PRICE_YEARLY: "price_herald_yearly",
    HERALD_STRIPE_API_BASE: stripe.origin,
  };
}

export async function startBillingServer(env: Record<string, string> = {}): Promise<BillingServer> {
  const clock = new ManualClock(START);
  const stripe = startStripeFake({ now: () => clock.now() });
  const s = await startTestServer({
    clock,
    env: { ...stripeEnv(stripe), ...env },
  });
  return {
    s,
    stripe,
    deliver: (event, secret = WEBHOOK_SECRET) => deliverSigned(s, event, secret),
    async stop() {
      await s.stop();
      await stripe.stop();
    },
  };
}

/** POSTs a Stripe event with a real `Stripe-Signature` made by the official package. */
export async function deliverSigned(
  s: TestServer,
  event: Record<string, unknown>,
  secret: string,
): Promise<TestResponse> {
  const payload = JSON.stringify(event);
  const header = await signer.webhooks.generateTestHeaderStringAsync({ payload, secret });
  return s.request("POST", "/billing/stripe/webhook", {
    key: null,
    headers: { "stripe-signature": header, "content-type": "application/json" },
    body: payload,
  });
}

/** Starts a checkout as the owner and completes it on the fake; returns the subscription. */
export async function subscribe(b: BillingServer, interval: "month" | "year" = "month") {
  const r = await b.s.request("POST", "/v1/billing/checkout-sessions", {
    body: { interval, confirmed: true },
  });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
  const sessionId = r.body.url.split("/").pop();
  const { session, subscription } = b.stripe.completeCheckout(sessionId);
  return { session, subscription };
}

/** Delivers `customer.subscription.updated` for the fake's current state of a subscription. */
export async function deliverState(b: BillingServer, subscriptionId: string, created?: number) {
  const sub = b.stripe.subscriptions.get(subscriptionId)!;
  const r = await b.deliver(b.stripe.event("customer.subscription.updated", sub, created));
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 200 });
  return r;
}

/** GET /v1/billing as the owner. */
export async function billing(s: TestServer) {
  const r = await s.request("GET", "/v1/billing");
  expect(r.status).toBe(200);
  return r.body;
}

/** A fresh account (made at the clock's current time) and a view of the server acting as its owner. */
export async function newAccount(b: BillingServer): Promise<BillingServer> {
  const owner = await b.s.bootstrap();
  const request: TestServer["request"] = (method, path, options = {}) =>
    b.s.request(method, path, { ...options, key: options.key === undefined ? owner.apiKey : options.key });
  return { ...b, s: { ...b.s, owner, request } };
}
