import { afterAll, describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { tables } from "../helpers/tables.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer } from "../helpers/server.ts";
import { inline } from "../fuzz/document.ts";
import { billing, deliverSigned, WEBHOOK_SECRET } from "./helpers.ts";

const { xUsage } = tables;

// HERALD_BILLING_MODE unset: the self-hoster's default. Everything is allowed, the processor
// operations are 409, and GET /billing still reports X usage.
const s = await startTestServer();
afterAll(() => s.stop());

const ws = s.owner.workspaceId;
const second = (await s.request("POST", "/v1/workspaces", { body: { name: "Second" } })).body.id as string;
await inTransaction(s.herald.db, async (tx) => {
  await tx.insert(xUsage).values({ workspaceId: ws, month: "2026-03", reserved: 3, used: 7 });
  await tx.insert(xUsage).values({ workspaceId: ws, month: "2026-02", reserved: 9, used: 40 });
  // A counter past the limit (the limit lowered after the fact) is reported within the contract's range.
  await tx.insert(xUsage).values({ workspaceId: second, month: "2026-03", reserved: 0, used: 55 });
});

describe("GET /v1/billing with billing disabled", () => {
  test("is the billing object: disabled, active, no subscription, this month's X usage", async () => {
    const r = await s.request("GET", "/v1/billing");
    expect(r.status).toBe(200);
    expect(r.headers.get("etag")).toMatch(/^"/);
    expect(r.headers.get("herald-billing-warning")).toBeNull();
    expect(r.body).toEqual({
      object: "billing",
      mode: "disabled",
      entitlement: "active",
      subscription: null,
      x_usage: [
        { workspace_id: ws, used: 7, reserved: 3, limit: 50 },
        { workspace_id: second, used: 50, reserved: 0, limit: 50 },
      ].sort((a, b) => a.workspace_id.localeCompare(b.workspace_id)),
      grace_ends_at: null,
      cancelled_workspaces: [],
    });
  });

  test("a selected-access key sees the usage of its workspaces only", async () => {
    const key = await s.createKey({ scopes: ["billing:read"], workspaceIds: [second] });
    const r = await s.request("GET", "/v1/billing", { key });
    expect(r.body.x_usage).toEqual([{ workspace_id: second, used: 50, reserved: 0, limit: 50 }]);
  });

  test("a new month starts from zero", async () => {
    s.clock.advance(31 * 86_400_000);
    const body = await billing(s);
    expect(body.x_usage.every((u: any) => u.used === 0 && u.reserved === 0)).toBe(true);
    s.clock.advance(-31 * 86_400_000);
  });
});

describe("processor operations answer 409 while billing is disabled", () => {
  const cases: [string, string, unknown][] = [
    ["POST", "/v1/billing/checkout-sessions", { interval: "month", confirmed: true }],
    ["POST", "/v1/billing/portal-sessions", {}],
    ["POST", "/v1/billing/conversion", { confirmed: true }],
    [
      "POST",
      `/v1/workspaces/${ws}/subscription/cancel`,
      { confirmed: true, confirmation: "CANCEL Test workspace" },
    ],
  ];
  for (const [method, path, body] of cases) {
    test(`${method} ${path}`, async () => {
      const r = await s.request(method, path, { body });
      expectProblem(r, 409, "public_conflict", []);
      expect(r.body.detail).toContain("HERALD_BILLING_MODE=disabled");
    });
  }

  test("the Stripe webhook receiver too, even correctly signed", async () => {
    const r = await deliverSigned(
      s,
      { id: "evt_1", object: "event", type: "ping", created: 1 },
      WEBHOOK_SECRET,
    );
    expectProblem(r, 409, "public_conflict");
  });
});

describe("request validation comes first, with precise pointers", () => {
  const checkout: [string, unknown, string[]][] = [
    ["no body fields", {}, ["/interval", "/confirmed"]],
    ["an unknown interval", { interval: "week", confirmed: true }, ["/interval"]],
    ["confirmed false", { interval: "month", confirmed: false }, ["/confirmed"]],
    ["confirmed missing", { interval: "year" }, ["/confirmed"]],
    ["an unknown field", { interval: "year", confirmed: true, plan: "pro" }, ["/plan"]],
  ];
  for (const [name, body, pointers] of checkout) {
    test(`checkout with ${name} is 400`, async () => {
      const r = await s.request("POST", "/v1/billing/checkout-sessions", { body });
      expectProblem(r, 400, "public_invalid_request");
      for (const pointer of pointers)
        expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    });
  }

  const cancel: [string, unknown, string][] = [
    ["a wrong phrase", { confirmed: true, confirmation: "CANCEL Other" }, "/confirmation"],
    ["lower case", { confirmed: true, confirmation: "cancel Test workspace" }, "/confirmation"],
    ["a trailing space", { confirmed: true, confirmation: "CANCEL Test workspace " }, "/confirmation"],
    ["the name alone", { confirmed: true, confirmation: "Test workspace" }, "/confirmation"],
    ["no confirmation", { confirmed: true }, "/confirmation"],
    ["confirmed false", { confirmed: false, confirmation: "CANCEL Test workspace" }, "/confirmed"],
  ];
  for (const [name, body, pointer] of cancel) {
    test(`cancelling a workspace's subscription with ${name} is 400 at ${pointer}`, async () => {
      const r = await s.request("POST", `/v1/workspaces/${ws}/subscription/cancel`, { body });
      expectProblem(r, 400, "public_invalid_request", [pointer]);
    });
  }

  test("the expected phrase is named in the problem", async () => {
    const r = await s.request("POST", `/v1/workspaces/${ws}/subscription/cancel`, {
      body: { confirmed: true, confirmation: "CANCEL" },
    });
    expect(r.body.errors[0].detail).toContain('"CANCEL Test workspace"');
  });

  test("scopes: billing:read cannot write, and another account's workspace is 404", async () => {
    const reader = await s.createKey({ scopes: ["billing:read"] });
    expectProblem(
      await s.request("POST", "/v1/billing/checkout-sessions", {
        key: reader,
        body: { interval: "month", confirmed: true },
      }),
      403,
      "public_scope_missing",
    );
    const other = await s.bootstrap();
    expectProblem(
      await s.request("POST", `/v1/workspaces/${other.workspaceId}/subscription/cancel`, {
        body: { confirmed: true, confirmation: "CANCEL Test workspace" },
      }),
      404,
      "public_not_found",
    );
  });
});

describe("configuration", () => {
  const stripe = {
    HERALD_BILLING_MODE: "processor_test",
    HERALD_STRIPE_SECRET_KEY: "sk_test_abc",
    HERALD_STRIPE_WEBHOOK_SECRET: "whsec_abc",
    HERALD_STRIPE_PRICE_MONTHLY: "price_m",
    HERALD_STRIPE_PRICE_YEARLY: "price_y",
  };
  test("a processor mode with its keys and prices loads, with the defaults for trial and grace", () => {
    expect(loadConfig(stripe).billing).toEqual({
      stripeSecretKey: "sk_test_abc",
      stripeWebhookSecret: "whsec_abc",
      priceMonthly: "price_m",
      priceYearly: "price_y",
      stripeApiBase: "https://api.stripe.com",
      gracePeriodMs: 7 * 86_400_000,
      trialMs: 14 * 86_400_000,
    });
  });

  const refused: [string, Record<string, string>, string][] = [
    ["no secret key", { HERALD_STRIPE_SECRET_KEY: "" }, "HERALD_STRIPE_SECRET_KEY is required"],
    ["no webhook secret", { HERALD_STRIPE_WEBHOOK_SECRET: "" }, "HERALD_STRIPE_WEBHOOK_SECRET is required"],
    ["no monthly price", { HERALD_STRIPE_PRICE_MONTHLY: "" }, "HERALD_STRIPE_PRICE_MONTHLY is required"],
    ["no yearly price", { HERALD_STRIPE_PRICE_YEARLY: "" }, "HERALD_STRIPE_PRICE_YEARLY is required"],
    [
      "a publishable key",
      { HERALD_STRIPE_SECRET_KEY: "pk_test_abc" },
      "HERALD_STRIPE_SECRET_KEY must look like",
    ],
    ["a live key in test mode", { HERALD_STRIPE_SECRET_KEY: "sk_live_abc" }, "must be a test key"],
    ["a test key in live mode", { HERALD_BILLING_MODE: "processor_live" }, "must be a live key"],
    [
      "a product id for a price",
      { HERALD_STRIPE_PRICE_YEARLY: "prod_abc" },
      "HERALD_STRIPE_PRICE_YEARLY must look like",
    ],
    ["a webhook secret without whsec_", { HERALD_STRIPE_WEBHOOK_SECRET: "abc" }, "must look like whsec_"],
    ["an unknown mode", { HERALD_BILLING_MODE: "stripe" }, "HERALD_BILLING_MODE must be one of"],
    ["a grace period in hours", { HERALD_BILLING_GRACE_DAYS: "1.5" }, "HERALD_BILLING_GRACE_DAYS"],
    ["an API base that is not a URL", { HERALD_STRIPE_API_BASE: "stripe" }, "HERALD_STRIPE_API_BASE"],
  ];
  for (const [name, change, message] of refused) {
    test(`refuses to start with ${name}`, () => {
      expect(() => loadConfig({ ...stripe, ...change })).toThrow(ConfigError);
      expect(() => loadConfig({ ...stripe, ...change })).toThrow(message);
    });
  }

  test("disabled mode needs none of them", () => {
    expect(loadConfig({}).billing.stripeSecretKey).toBeNull();
  });
});

describe("the billing object in the OpenAPI document", () => {
  /** The schema in `node` that has property `name` (searched depth first). */
  const withProperty = (node: any, name: string): any => {
    if (!node || typeof node !== "object") return null;
    if (node.properties?.[name]) return node;
    for (const value of Object.values(node)) {
      const found = withProperty(value, name);
      if (found) return found;
    }
    return null;
  };

  test("documents its counts as integers with the contract's ranges (not string or integer)", async () => {
    const named = (await s.request("GET", "/v1/openapi.json", { key: null })).body;
    const doc = inline(named, named);
    const subscription = withProperty(doc.paths["/billing"].get.responses["200"], "workspace_quantity");
    expect(subscription.properties.workspace_quantity).toEqual({ type: "integer", minimum: 0 });
    const usage = withProperty(doc.paths["/billing"].get.responses["200"], "reserved");
    for (const name of ["used", "reserved"])
      expect(usage.properties[name]).toEqual({ type: "integer", minimum: 0, maximum: 50 });
    expect(usage.properties.limit).toMatchObject({ const: 50 });
  });
});
