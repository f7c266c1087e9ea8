// The billing page with a processor: the entitlement and subscription as GET /v1/billing has them,
// Stripe's checkout and portal reached through the API (303 to Stripe's page), roles.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { START, stripeEnv } from "../billing/helpers.ts";
import { startStripeFake, type StripeFake } from "../fakes/stripe.ts";
import {
  attributeOf,
  dashboardWorld,
  type DashboardWorld,
  expectDashboardPage,
  headingOf,
  screenOf,
  submitPairs,
  type TestBrowser,
} from "./support.ts";

let world: DashboardWorld;
let stripe: StripeFake;
let owner: TestBrowser;
beforeAll(async () => {
  const clock = new ManualClock(START);
  stripe = startStripeFake({ now: () => clock.now() });
  world = await dashboardWorld({
    clock,
    env: stripeEnv(stripe),
  });
  owner = await world.signedIn();
});
afterAll(async () => {
  await world.stop();
  await stripe.stop();
});

const STRIPE_ACTIONS = ["https://checkout.stripe.com", "https://billing.stripe.com"];

describe("the billing page with Stripe", () => {
  test("shows the trial and the subscribe form; its CSP lets the form go on to Stripe", async () => {
    const r = await owner.get("/dashboard/billing");
    expect(r.status).toBe(200);
    expectDashboardPage("/dashboard/billing", r, { formActions: STRIPE_ACTIONS });
    const screen = screenOf(r.text);
    expect(screen.text()).toContain("Billing through Stripe (test mode).");
    expect(screen.text()).toContain("The trial is running");
    expect(attributeOf(screen.getByRole("form", { name: "Subscribe" }), "action")).toBe(
      "/dashboard/billing/checkout",
    );
    const usage = screen.rowsOf(screen.getByRole("table", { name: /^X usage in/ }));
    expect(usage).toContainEqual(["Acme", "0", "0", "0 of 50"]);
  });

  test("subscribing needs the confirmation, then goes to Stripe's checkout page", async () => {
    const unconfirmed = await submitPairs(
      world.s,
      owner,
      "/dashboard/billing",
      "/dashboard/billing/checkout",
      [["interval", "year"]],
    );
    expect(unconfirmed.status).toBe(400);
    expect(headingOf(unconfirmed)).toBe("Billing could not be opened");
    const r = await submitPairs(world.s, owner, "/dashboard/billing", "/dashboard/billing/checkout", [
      ["interval", "year"],
      ["confirmed", "true"],
    ]);
    expect(r.status).toBe(303);
    expect(r.location).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_/);
  });

  test("an admin sees billing without the forms; a member is refused; a forged checkout is 403", async () => {
    const admin = await world.signedInAs("admin");
    const seen = await admin.get("/dashboard/billing");
    expect(seen.status).toBe(200);
    const screen = screenOf(seen.text);
    expect(screen.getByRole("heading", { level: 1, name: "Billing" })).toBeDefined();
    expect(screen.queryByRole("form", { name: "Subscribe" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Continue to Stripe" })).toBeNull();
    const forged = await submitPairs(world.s, admin, "/dashboard/billing", "/logout", []);
    expect(forged.status).toBe(303);
    const member = await world.signedInAs("member");
    expect((await member.get("/dashboard/billing")).status).toBe(403);
  });
});
