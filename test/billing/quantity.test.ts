// The subscription's workspace quantity follows the account's workspaces: a workspace created after
// checkout joins it through the `billing-quantity` job (prorated at Stripe), a cancelled one stays out,
// an ending subscription is left alone, and a Stripe outage is retried on the next run.
import { afterAll, describe, expect, test } from "bun:test";
import {
  billing,
  deliverState,
  newAccount,
  startBillingServer,
  subscribe,
  type BillingServer,
} from "./helpers.ts";

const b = await startBillingServer();
const { s, stripe } = b;
afterAll(() => b.stop());

/** A fresh account with `workspaces` workspaces in all, subscribed, Stripe's creation event applied. */
async function subscribedAccount(workspaces = 1) {
  const a = await newAccount(b);
  for (let i = 2; i <= workspaces; i++) await createWorkspace(a, `Client ${i}`);
  const { subscription } = await subscribe(a);
  await a.deliver(stripe.event("customer.subscription.created", subscription));
  return { a, subscriptionId: subscription.id as string };
}

async function createWorkspace(a: BillingServer, name: string): Promise<string> {
  const r = await a.s.request("POST", "/v1/workspaces", { body: { name } });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
  return r.body.id;
}

const stripeQuantity = (id: string) => stripe.subscriptions.get(id)!.items.data[0].quantity;
const updatesOf = (id: string) => stripe.subscriptionUpdates.filter((u) => u.id === id);
const runJob = () => s.server.scheduler.runNow("billing-quantity");

describe("billing-quantity", () => {
  test("workspaces created after checkout are added to the quantity once, prorated, and audited", async () => {
    const { a, subscriptionId } = await subscribedAccount();
    expect(stripeQuantity(subscriptionId)).toBe(1);
    await createWorkspace(a, "Client B");
    await createWorkspace(a, "Client C");
    expect((await billing(a.s)).subscription.workspace_quantity).toBe(1);

    await runJob();
    expect(stripeQuantity(subscriptionId)).toBe(3);
    const updates = updatesOf(subscriptionId);
    expect(updates.map((u) => u.body)).toEqual([
      {
        items: [{ id: stripe.subscriptions.get(subscriptionId)!.items.data[0].id, quantity: "3" }],
        proration_behavior: "create_prorations",
      },
    ]);
    expect((await billing(a.s)).subscription.workspace_quantity).toBe(3);
    const audit = await a.s.request("GET", "/v1/audit-records");
    expect(audit.body.data).toContainEqual(
      expect.objectContaining({
        action: "billing.workspace_quantity_raised",
        credential_id: null,
        target: { type: "subscription", id: subscriptionId },
      }),
    );

    // Nothing left to do: the next run asks Stripe for nothing.
    const before = stripe.requests.length;
    await runJob();
    expect(updatesOf(subscriptionId)).toHaveLength(1);
    expect(stripe.requests.slice(before).filter((r) => r.path.includes(subscriptionId))).toEqual([]);
  });

  test("a cancelled workspace stays out of the quantity; a new one is added", async () => {
    const { a, subscriptionId } = await subscribedAccount(2);
    expect(stripeQuantity(subscriptionId)).toBe(2);
    const [, second] = (await a.s.request("GET", "/v1/workspaces")).body.data.map((w: any) => w.id);
    const name = (await a.s.request("GET", `/v1/workspaces/${second}`)).body.name;
    const cancelled = await a.s.request("POST", `/v1/workspaces/${second}/subscription/cancel`, {
      body: { confirmed: true, confirmation: `CANCEL ${name}` },
    });
    expect(cancelled.status).toBe(200);
    expect(stripeQuantity(subscriptionId)).toBe(1);

    await runJob();
    expect(stripeQuantity(subscriptionId)).toBe(1);
    await createWorkspace(a, "Client D");
    await runJob();
    expect(stripeQuantity(subscriptionId)).toBe(2);
    expect((await billing(a.s)).cancelled_workspaces.map((c: any) => c.workspace_id)).toEqual([second]);
  });

  test("raise, cancel, raise again: the same numbers later are a new change at Stripe, not a replay", async () => {
    const { a, subscriptionId } = await subscribedAccount();
    const second = await createWorkspace(a, "Client B2");
    await runJob();
    expect(stripeQuantity(subscriptionId)).toBe(2);
    const cancelled = await a.s.request("POST", `/v1/workspaces/${second}/subscription/cancel`, {
      body: { confirmed: true, confirmation: "CANCEL Client B2" },
    });
    expect(cancelled.status).toBe(200);
    expect(stripeQuantity(subscriptionId)).toBe(1);
    await createWorkspace(a, "Client C2");
    // The job's next run is at least 30 seconds later.
    s.clock.advance(30_000);
    await runJob();
    expect(stripeQuantity(subscriptionId)).toBe(2);
    expect((await billing(a.s)).subscription.workspace_quantity).toBe(2);
    const audit = await a.s.request("GET", "/v1/audit-records");
    const raises = audit.body.data.filter((r: any) => r.action === "billing.workspace_quantity_raised");
    expect(raises).toHaveLength(2);
  });

  test("a quantity lowered in the portal below the workspaces in use is raised back", async () => {
    const { a, subscriptionId } = await subscribedAccount(2);
    stripe.subscriptions.get(subscriptionId)!.items.data[0].quantity = 1;
    await deliverState(a, subscriptionId);
    expect((await billing(a.s)).subscription.workspace_quantity).toBe(1);
    await runJob();
    expect(stripeQuantity(subscriptionId)).toBe(2);
    expect((await billing(a.s)).subscription.workspace_quantity).toBe(2);
  });

  test("a subscription set to end, or over, is not changed", async () => {
    const ending = await subscribedAccount();
    stripe.setSubscription(ending.subscriptionId, { cancel_at_period_end: true });
    await deliverState(ending.a, ending.subscriptionId);
    await createWorkspace(ending.a, "Client E");
    // An account that is over creates no workspace (402): one made before it ended.
    const over = await subscribedAccount();
    await createWorkspace(over.a, "Client F");
    stripe.setSubscription(over.subscriptionId, { status: "canceled" });
    await deliverState(over.a, over.subscriptionId);

    await runJob();
    expect(updatesOf(ending.subscriptionId)).toEqual([]);
    expect(updatesOf(over.subscriptionId)).toEqual([]);
    expect(stripeQuantity(ending.subscriptionId)).toBe(1);
  });

  test("the cancellation Stripe made meanwhile is stored instead of raising", async () => {
    const { a, subscriptionId } = await subscribedAccount();
    await createWorkspace(a, "Client G");
    // Cancelled in the portal; the event has not arrived yet.
    stripe.setSubscription(subscriptionId, { cancel_at_period_end: true });
    await runJob();
    expect(updatesOf(subscriptionId)).toEqual([]);
    expect((await billing(a.s)).subscription.cancel_at_period_end).toBe(true);
  });

  test("Stripe unreachable: nothing changes, the next run raises it", async () => {
    const { a, subscriptionId } = await subscribedAccount();
    await createWorkspace(a, "Client H");
    // The package retries twice: three failures make the run fail.
    stripe.failNext(3, { status: 500, path: subscriptionId });
    await runJob();
    expect(stripeQuantity(subscriptionId)).toBe(1);
    expect((await billing(a.s)).subscription.workspace_quantity).toBe(1);
    await runJob();
    expect(stripeQuantity(subscriptionId)).toBe(2);
  });
});
