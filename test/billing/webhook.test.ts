import { afterAll, describe, expect, test } from "bun:test";
import { expectProblem } from "../helpers/problems.ts";
import { billing, startBillingServer, subscribe, WEBHOOK_SECRET, newAccount } from "./helpers.ts";

// Stripe's webhook: real signatures (the package's signer), redeliveries, out-of-order delivery.
const b = await startBillingServer();
const { s, stripe } = b;
afterAll(() => b.stop());
const account = () => newAccount(b);

describe("the Stripe webhook receiver", () => {
  test("applies a subscription and answers 200; the billing object follows Stripe", async () => {
    const a = await account();
    const { session, subscription } = await subscribe(a);
    const linked = await a.deliver(stripe.event("checkout.session.completed", session));
    expect(linked.body).toMatchObject({ received: true, outcome: "applied" });
    const r = await a.deliver(stripe.event("customer.subscription.created", subscription));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ received: true, id: expect.stringMatching(/^evt_/), outcome: "applied" });
    const body = await billing(a.s);
    expect(body.entitlement).toBe("trialing");
    expect(body.subscription).toEqual({
      status: "trialing",
      interval: "month",
      currency: "eur",
      workspace_quantity: 1,
      trial_ends_at: new Date(subscription.trial_end * 1000).toISOString(),
      current_period_ends_at: new Date(subscription.items.data[0].current_period_end * 1000).toISOString(),
      cancel_at: null,
      cancel_at_period_end: false,
    });
  });

  test("a redelivered event (same id) is received but not applied again", async () => {
    const a = await account();
    const { subscription } = await subscribe(a);
    const event = stripe.event("customer.subscription.updated", { ...subscription, status: "active" });
    expect((await a.deliver(event)).body.outcome).toBe("applied");
    // Stripe moves on; then the old event is delivered again: it must not undo the newer state.
    await a.deliver(
      stripe.event(
        "customer.subscription.updated",
        { ...subscription, status: "past_due" },
        event.created + 5,
      ),
    );
    const again = await a.deliver(event);
    expect(again.status).toBe(200);
    expect(again.body.outcome).toBe("duplicate");
    expect((await billing(a.s)).subscription.status).toBe("past_due");
  });

  test("events are applied in order of creation: an older one arriving later is stale", async () => {
    const a = await account();
    const { subscription } = await subscribe(a);
    const t = Math.floor(s.clock.now() / 1000);
    const older = stripe.event(
      "customer.subscription.updated",
      { ...subscription, status: "past_due" },
      t + 10,
    );
    const newer = stripe.event(
      "customer.subscription.updated",
      { ...subscription, status: "active" },
      t + 20,
    );
    expect((await a.deliver(newer)).body.outcome).toBe("applied");
    expect((await a.deliver(older)).body.outcome).toBe("stale");
    expect((await billing(a.s)).subscription.status).toBe("active");
    // Same second: both are as new as the stored state, so the later delivery wins.
    const same = stripe.event("customer.subscription.updated", { ...subscription, status: "unpaid" }, t + 20);
    expect((await a.deliver(same)).body.outcome).toBe("applied");
    expect((await billing(a.s)).entitlement).toBe("read_only");
  });

  const badSignatures: [string, (body: string, header: string) => Record<string, string>][] = [
    ["no Stripe-Signature header", () => ({})],
    ["a header signed with another secret", (_, header) => ({ "stripe-signature": header })],
    ["a garbled header", () => ({ "stripe-signature": "t=1,v1=00" })],
  ];
  for (const [name, headersOf] of badSignatures) {
    test(`${name} is 400 and changes nothing`, async () => {
      const a = await account();
      const { subscription } = await subscribe(a);
      const event = stripe.event("customer.subscription.updated", { ...subscription, status: "active" });
      const payload = JSON.stringify(event);
      const Stripe = (await import("stripe")).default;
      const header = await new Stripe("sk_test_x").webhooks.generateTestHeaderStringAsync({
        payload,
        secret: "whsec_someone_else",
      });
      const r = await s.request("POST", "/billing/stripe/webhook", {
        key: null,
        headers: { "content-type": "application/json", ...headersOf(payload, header) },
        body: payload,
      });
      expectProblem(r, 400, "public_invalid_request");
      expect(r.body.errors[0].parameter).toBe("Stripe-Signature");
      expect((await billing(a.s)).subscription.status).toBe("pending_checkout");
    });
  }

  test("a body changed after signing is 400", async () => {
    const a = await account();
    const { subscription } = await subscribe(a);
    const event = stripe.event("customer.subscription.updated", subscription);
    const Stripe = (await import("stripe")).default;
    const header = await new Stripe("sk_test_x").webhooks.generateTestHeaderStringAsync({
      payload: JSON.stringify(event),
      secret: WEBHOOK_SECRET,
    });
    const tampered = JSON.stringify({ ...event, data: { object: { ...subscription, status: "active" } } });
    const r = await s.request("POST", "/billing/stripe/webhook", {
      key: null,
      headers: { "stripe-signature": header, "content-type": "application/json" },
      body: tampered,
    });
    expectProblem(r, 400, "public_invalid_request");
  });

  test("events of unknown customers and other types are received and ignored", async () => {
    const stray = stripe.event("customer.subscription.updated", {
      id: "sub_stray",
      object: "subscription",
      customer: "cus_unknown",
      status: "active",
      metadata: {},
      items: { data: [] },
    });
    expect((await b.deliver(stray)).body.outcome).toBe("ignored");
    expect(
      (await b.deliver(stripe.event("invoice.paid", { id: "in_1", object: "invoice" }))).body.outcome,
    ).toBe("ignored");
  });
});
