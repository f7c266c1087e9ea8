import { afterAll, describe, expect, test } from "bun:test";
import { expectProblem } from "../helpers/problems.ts";
import { billing, DAY_MS, startBillingServer, subscribe, newAccount } from "./helpers.ts";

// processor_test against the Stripe fake, driven through the official `stripe` package: the account
// before a subscription, Checkout, the portal and trial conversion. One account per test.
const b = await startBillingServer();
const { s, stripe } = b;
afterAll(() => b.stop());
const account = () => newAccount(b);

describe("before any checkout", () => {
  test("a new account is trialing on Herald's own trial; the subscription is pending_checkout", async () => {
    const a = await account();
    const body = await billing(a.s);
    expect(body).toMatchObject({ object: "billing", mode: "processor_test", entitlement: "trialing" });
    expect(body.subscription).toEqual({
      status: "pending_checkout",
      interval: null,
      currency: null,
      workspace_quantity: 0,
      trial_ends_at: new Date(s.clock.now() + 14 * DAY_MS).toISOString(),
      current_period_ends_at: null,
      cancel_at: null,
      cancel_at_period_end: false,
    });
    expect(body.x_usage).toEqual([{ workspace_id: a.s.owner.workspaceId, used: 0, reserved: 0, limit: 50 }]);
  });

  test("portal and conversion are 409 until there is a customer and a subscription", async () => {
    const a = await account();
    const portal = await a.s.request("POST", "/v1/billing/portal-sessions", { body: {} });
    expectProblem(portal, 409, "public_conflict");
    expect(portal.body.detail).toContain("checkout");
    expectProblem(
      await a.s.request("POST", "/v1/billing/conversion", { body: { confirmed: true } }),
      409,
      "public_conflict",
    );
  });
});

describe("POST /v1/billing/checkout-sessions", () => {
  test("creates the customer once and a Checkout for one unit per workspace, with the trial", async () => {
    const a = await account();
    await a.s.request("POST", "/v1/workspaces", { body: { name: "Two" } });
    const r = await a.s.request("POST", "/v1/billing/checkout-sessions", {
      body: { interval: "year", confirmed: true },
    });
    expect(r.status).toBe(201);
    expect(r.body.object).toBe("billing_checkout_session");
    expect(r.body.url).toStartWith("https://checkout.stripe.com/c/pay/cs_test_");
    const session = [...stripe.sessions.values()].at(-1)!;
    expect(session.client_reference_id).toBe(a.s.owner.accountId);
    expect(session._line.price.id).toBe("price_herald_yearly");
    expect(session._line.quantity).toBe(2);
    expect(session._subscription_data.metadata).toEqual({ herald_account_id: a.s.owner.accountId });
    expect(session._subscription_data.trial_end).toBe(Math.floor((s.clock.now() + 14 * DAY_MS) / 1000));
    expect(session.success_url).toBe(`${s.url}/dashboard/billing?checkout=success`);
    const customer = stripe.customers.get(session.customer)!;
    expect(customer.metadata).toEqual({ herald_account_id: a.s.owner.accountId });
    // A second attempt reuses the customer.
    const again = await a.s.request("POST", "/v1/billing/checkout-sessions", {
      body: { interval: "month", confirmed: true },
    });
    expect(again.status).toBe(201);
    expect([...stripe.sessions.values()].at(-1)!.customer).toBe(session.customer);
    const audit = await a.s.request("GET", "/v1/audit-records");
    expect(audit.body.data.map((r: any) => r.action)).toContain("billing.checkout_session_created");
  });

  test("with less than 48 hours of trial left, the checkout has no trial (Stripe's minimum)", async () => {
    const a = await account();
    s.clock.advance(13 * DAY_MS);
    try {
      const r = await a.s.request("POST", "/v1/billing/checkout-sessions", {
        body: { interval: "month", confirmed: true },
      });
      expect(r.status).toBe(201);
      expect([...stripe.sessions.values()].at(-1)!._subscription_data.trial_end).toBeNull();
    } finally {
      s.clock.advance(-13 * DAY_MS);
    }
  });

  test("once subscribed, another checkout is 409 pointing at the portal", async () => {
    const a = await account();
    const { subscription } = await subscribe(a);
    await a.deliver(stripe.event("customer.subscription.created", subscription));
    const r = await a.s.request("POST", "/v1/billing/checkout-sessions", {
      body: { interval: "month", confirmed: true },
    });
    expectProblem(r, 409, "public_conflict");
    expect(r.body.detail).toContain("portal-sessions");
  });

  test("Stripe down is 502 public_provider_error, retryable; refusing is 502, not retryable", async () => {
    const a = await account();
    stripe.failNext(3, { status: 500 });
    const down = await a.s.request("POST", "/v1/billing/checkout-sessions", {
      body: { interval: "month", confirmed: true },
    });
    expectProblem(down, 502, "public_provider_error");
    expect(down.body).toMatchObject({ retryable: true, user_action: "retry_later" });
    stripe.failNext(1, {
      status: 400,
      body: { error: { type: "invalid_request_error", message: "No such price" } },
    });
    const refused = await a.s.request("POST", "/v1/billing/checkout-sessions", {
      body: { interval: "month", confirmed: true },
    });
    expectProblem(refused, 502, "public_provider_error");
    expect(refused.body.retryable).toBe(false);
    expect(refused.body.detail).toContain("No such price");
  });
});

describe("POST /v1/billing/portal-sessions and /v1/billing/conversion", () => {
  test("the portal opens for the account's customer and returns to the dashboard", async () => {
    const a = await account();
    await subscribe(a);
    const r = await a.s.request("POST", "/v1/billing/portal-sessions", { body: {} });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      object: "billing_portal_session",
      url: expect.stringMatching(/^https:\/\/billing\.stripe\.com\/p\/session\//),
    });
    // The body may be omitted.
    expect((await a.s.request("POST", "/v1/billing/portal-sessions")).status).toBe(201);
  });

  test("conversion ends the Stripe trial now and the account is active", async () => {
    const a = await account();
    const { subscription } = await subscribe(a);
    await a.deliver(stripe.event("customer.subscription.created", subscription));
    // The customer converts a minute after subscribing.
    s.clock.advance(60_000);
    const r = await a.s.request("POST", "/v1/billing/conversion", { body: { confirmed: true } });
    s.clock.advance(-60_000);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ object: "billing_conversion", converted: true });
    expect(stripe.subscriptions.get(subscription.id)!.status).toBe("active");
    const body = await billing(a.s);
    expect(body.entitlement).toBe("active");
    expect(body.subscription.status).toBe("active");
    // Not trialing any more: converting again is 409.
    expectProblem(
      await a.s.request("POST", "/v1/billing/conversion", { body: { confirmed: true } }),
      409,
      "public_conflict",
    );
    // The stale trialing event, delivered late, does not undo it.
    const late = stripe.event("customer.subscription.updated", subscription, subscription.created);
    expect((await a.deliver(late)).body.outcome).toBe("stale");
    expect((await billing(a.s)).entitlement).toBe("active");
  });
});
