import { afterAll, describe, expect, test } from "bun:test";
import { expectProblem } from "../helpers/problems.ts";
import { billing, DAY_MS, deliverState, startBillingServer, subscribe, newAccount } from "./helpers.ts";

// How the subscription's state decides what an account may do, and cancelling a workspace's share.
const b = await startBillingServer();
const { s, stripe } = b;
afterAll(() => b.stop());
const account = () => newAccount(b);

describe("entitlement follows the subscription", () => {
  test("past_due: grace with the warning until the grace period ends, then read_only", async () => {
    const a = await account();
    const { subscription } = await subscribe(a);
    stripe.setSubscription(subscription.id, { status: "past_due" });
    await deliverState(a, subscription.id);
    const ws = a.s.owner.workspaceId;
    const body = await billing(a.s);
    expect(body.entitlement).toBe("grace");
    const readOnlyAt = new Date(Math.floor(s.clock.now() / 1000) * 1000 + 7 * DAY_MS).toISOString();
    expect(body.grace_ends_at).toBe(readOnlyAt);
    const draft = { when: "draft", group: "g1", posts: [{ channel: "x", body: ["Hello"] }] };
    const created = await a.s.request("POST", `/v1/workspaces/${ws}/posts`, { body: draft });
    expect(created.status).toBe(201);
    expect(created.headers.get("herald-billing-warning")).toBe(`grace; read_only_at=${readOnlyAt}`);

    s.clock.advance(7 * DAY_MS + 1000);
    try {
      expect((await billing(a.s)).entitlement).toBe("read_only");
      const refused = await a.s.request("POST", `/v1/workspaces/${ws}/posts`, {
        body: { ...draft, group: "g2" },
      });
      expectProblem(refused, 402, "public_subscription_required");
      expect(refused.body).toMatchObject({
        category: "billing",
        user_action: "upgrade_plan",
        retryable: false,
      });
      expect(refused.body.detail).toContain("/v1/billing/portal-sessions");
      // Reads, deletions and the way out keep working.
      const list = await a.s.request("GET", `/v1/workspaces/${ws}/posts`);
      expect(list.status).toBe(200);
      expect(list.headers.get("herald-billing-warning")).toBe("read_only");
      const post = created.body.posts[0];
      const deleted = await a.s.request("DELETE", `/v1/workspaces/${ws}/posts/${post.id}`, {
        headers: { "idempotency-key": `del-${post.id}`, "if-match": created.headers.get("etag")! },
      });
      expect(deleted.status).not.toBe(402);
      expect((await a.s.request("POST", "/v1/billing/portal-sessions", { body: {} })).status).toBe(201);
      // Paid: active again.
      stripe.setSubscription(subscription.id, { status: "active" });
      await deliverState(a, subscription.id, Math.floor(s.clock.now() / 1000));
      const again = await a.s.request("POST", `/v1/workspaces/${ws}/posts`, {
        body: { ...draft, group: "g3" },
      });
      expect(again.status).toBe(201);
      expect(again.headers.get("herald-billing-warning")).toBeNull();
    } finally {
      s.clock.advance(-(7 * DAY_MS + 1000));
    }
  });

  test("an account whose trial ended without a subscription is read_only", async () => {
    const a = await account();
    s.clock.advance(14 * DAY_MS);
    try {
      const body = await billing(a.s);
      expect(body.entitlement).toBe("read_only");
      const r = await a.s.request("POST", "/v1/workspaces", { body: { name: "More" } });
      expectProblem(r, 402, "public_subscription_required");
      expect(r.body.detail).toContain("trial ended");
      // Subscribing is allowed (it is the way out).
      expect(
        (
          await a.s.request("POST", "/v1/billing/checkout-sessions", {
            body: { interval: "month", confirmed: true },
          })
        ).status,
      ).toBe(201);
    } finally {
      s.clock.advance(-14 * DAY_MS);
    }
  });

  for (const status of ["canceled", "unpaid", "incomplete_expired", "paused"]) {
    test(`Stripe status ${status} is read_only`, async () => {
      const a = await account();
      const { subscription } = await subscribe(a);
      stripe.setSubscription(subscription.id, { status });
      await deliverState(a, subscription.id);
      const body = await billing(a.s);
      expect(body.entitlement).toBe("read_only");
      expect(body.subscription.status).toBe(
        status === "incomplete_expired" ? "canceled" : status === "paused" ? "unpaid" : status,
      );
    });
  }
});

describe("POST /v1/workspaces/{id}/subscription/cancel", () => {
  test("lowers the quantity; the workspace works until the period ends, then refuses new work", async () => {
    const a = await account();
    const second = (await a.s.request("POST", "/v1/workspaces", { body: { name: "Client B" } })).body.id;
    const { subscription } = await subscribe(a);
    await a.deliver(stripe.event("customer.subscription.created", subscription));
    const r = await a.s.request("POST", `/v1/workspaces/${second}/subscription/cancel`, {
      body: { confirmed: true, confirmation: "CANCEL Client B" },
    });
    expect(r.status).toBe(200);
    expect(r.body.object).toBe("billing");
    expect(r.body.subscription.workspace_quantity).toBe(1);
    const periodEnd = new Date(subscription.items.data[0].current_period_end * 1000).toISOString();
    expect(r.body.cancelled_workspaces).toEqual([
      { workspace_id: second, cancelled_at: new Date(s.clock.now()).toISOString(), ends_at: periodEnd },
    ]);
    expect(stripe.subscriptions.get(subscription.id)!.items.data[0].quantity).toBe(1);
    expectProblem(
      await a.s.request("POST", `/v1/workspaces/${second}/subscription/cancel`, {
        body: { confirmed: true, confirmation: "CANCEL Client B" },
      }),
      409,
      "public_conflict",
    );
    const draft = { when: "draft", group: "c1", posts: [{ channel: "x", body: ["Hi"] }] };
    expect((await a.s.request("POST", `/v1/workspaces/${second}/posts`, { body: draft })).status).toBe(201);
    const until = Date.parse(periodEnd) - s.clock.now();
    s.clock.advance(until);
    try {
      const refused = await a.s.request("POST", `/v1/workspaces/${second}/posts`, {
        body: { ...draft, group: "c2" },
      });
      expectProblem(refused, 402, "public_subscription_required");
      expect((await a.s.request("GET", `/v1/workspaces/${second}/posts`)).status).toBe(200);
      // The other workspace is still paid for.
      const ws = a.s.owner.workspaceId;
      const other = await a.s.request("POST", `/v1/workspaces/${ws}/posts`, {
        body: { ...draft, group: "c3" },
      });
      expect(other.status).toBe(201);
      // Raising the quantity in the portal puts the workspace back.
      const item = stripe.subscriptions.get(subscription.id)!.items.data[0];
      item.quantity = 2;
      await deliverState(a, subscription.id, Math.floor(s.clock.now() / 1000));
      expect((await billing(a.s)).cancelled_workspaces).toEqual([]);
      const back = await a.s.request("POST", `/v1/workspaces/${second}/posts`, {
        body: { ...draft, group: "c4" },
      });
      expect(back.status).toBe(201);
    } finally {
      s.clock.advance(-until);
    }
  });

  test("cancelling the last workspace cancels the subscription at the period's end", async () => {
    const a = await account();
    const { subscription } = await subscribe(a);
    await a.deliver(stripe.event("customer.subscription.created", subscription));
    const r = await a.s.request("POST", `/v1/workspaces/${a.s.owner.workspaceId}/subscription/cancel`, {
      body: { confirmed: true, confirmation: "CANCEL Test workspace" },
    });
    expect(r.status).toBe(200);
    expect(r.body.subscription).toMatchObject({ cancel_at_period_end: true, workspace_quantity: 1 });
    expect(r.body.subscription.cancel_at).toBe(r.body.subscription.current_period_ends_at);
    expect(r.body.cancelled_workspaces).toHaveLength(1);
    expect(stripe.subscriptions.get(subscription.id)!.cancel_at_period_end).toBe(true);
  });

  test("without a running subscription it is 409", async () => {
    const a = await account();
    const r = await a.s.request("POST", `/v1/workspaces/${a.s.owner.workspaceId}/subscription/cancel`, {
      body: { confirmed: true, confirmation: "CANCEL Test workspace" },
    });
    expectProblem(r, 409, "public_conflict");
  });
});
