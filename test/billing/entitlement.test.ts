import { afterAll, describe, expect, test } from "bun:test";
import { ALL_SCOPES } from "../../src/core/scopes.ts";
import { createsWork, WRITE_OPERATIONS } from "../../src/modules/billing/work.ts";
import { TestBrowser, pathOf } from "../helpers/browser.ts";
import type { TestResponse } from "../helpers/server.ts";
import { insertXDestination } from "../posts/fixtures.ts";
import { deliverState, newAccount, startBillingServer, subscribe, type BillingServer } from "./helpers.ts";

// The table test of the rails' billing rule: every authenticated write operation of the server's own
// OpenAPI document is classified in WRITE_OPERATIONS, and answers as classified for a read-only account
// (402 or not) and for one in grace (never 402, always the warning header).
const b = await startBillingServer();
const { s, stripe } = b;
afterAll(() => b.stop());

const doc = (await s.request("GET", "/v1/openapi.json", { key: null })).body;
const writes = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(
      ([method, op]) =>
        ["post", "put", "patch", "delete"].includes(method) && op["x-required-scope"] !== "none",
    )
    .map(([method, op]) => ({
      name: `${method.toUpperCase()} ${path}`,
      method: method.toUpperCase(),
      path,
      op,
    })),
);

/** An account whose subscription Stripe reports in `status`, with a key holding every scope. */
async function accountWith(
  status: string,
): Promise<{ key: () => Promise<string>; ws: string; account: BillingServer }> {
  const owner = await s.bootstrap();
  const request: typeof s.request = (method, path, options = {}) =>
    s.request(method, path, { ...options, key: options.key === undefined ? owner.apiKey : options.key });
  const account = { ...b, s: { ...s, owner, request } };
  const { subscription } = await subscribe(account);
  stripe.setSubscription(subscription.id, { status });
  await deliverState(account, subscription.id);
  return {
    account,
    ws: owner.workspaceId,
    // A fresh key per call: POST /me/revoke revokes the key that calls it.
    key: () => s.createKey({ accountId: owner.accountId, scopes: [...ALL_SCOPES] }),
  };
}

/** Sends a write with a small JSON body, the headers it may need and dummy ids. */
async function send(
  name: string,
  method: string,
  path: string,
  ws: string,
  key: string,
): Promise<TestResponse> {
  const url = `/v1${path.replace("{workspace_id}", ws).replace(/\{[^}]+\}/g, "dummy_00000000")}`;
  const body = method === "DELETE" ? undefined : {};
  return s.request(method, url, {
    key,
    body,
    headers: { "idempotency-key": `entitlement-${name}-${Math.random()}`, "if-match": "*" },
  });
}

describe("the classification", () => {
  test("covers every authenticated write of the document, and nothing else", () => {
    expect(writes.length).toBeGreaterThan(20);
    expect(writes.map((w) => w.name).sort()).toEqual(Object.keys(WRITE_OPERATIONS).sort());
  });

  test("reads never create work; an unclassified write does (fail closed)", () => {
    expect(createsWork("GET", "/v1/workspaces/:workspace_id/posts")).toBe(false);
    expect(createsWork("POST", "/v1/workspaces/:workspace_id/posts")).toBe(true);
    expect(createsWork("POST", "/v1/workspaces/:workspace_id/posts/:post_id/cancel")).toBe(false);
    expect(createsWork("POST", "/v1/something-new")).toBe(true);
  });

  test("the document lists 402 where work is created and the warning header on successes", () => {
    for (const { name, op } of writes) {
      if (WRITE_OPERATIONS[name] === "creates_work")
        expect({ name, documented: op.responses["402"] !== undefined }).toEqual({ name, documented: true });
      for (const [status, response] of Object.entries(op.responses as Record<string, any>))
        if (/^2/.test(status))
          expect({ name, status, header: "Herald-Billing-Warning" in (response.headers ?? {}) }).toEqual({
            name,
            status,
            header: true,
          });
    }
  });
});

const readOnly = await accountWith("unpaid");
const grace = await accountWith("past_due");

describe("a read_only account", () => {
  for (const { name, method, path } of writes) {
    const refused = WRITE_OPERATIONS[name] === "creates_work";
    test(`${name}: ${refused ? "402 public_subscription_required" : "not refused"}`, async () => {
      const r = await send(name, method, path, readOnly.ws, await readOnly.key());
      if (refused) {
        expect({ status: r.status, code: r.body?.code }).toEqual({
          status: 402,
          code: "public_subscription_required",
        });
        expect(r.body.user_action).toBe("upgrade_plan");
        expect(r.body.detail).toContain("subscription is unpaid");
      } else {
        expect({ name, status: r.status, code: r.body?.code }).not.toMatchObject({ status: 402 });
      }
    });
  }

  test("reads keep working, with the read_only warning", async () => {
    const r = await s.request("GET", `/v1/workspaces/${readOnly.ws}/posts`, { key: await readOnly.key() });
    expect(r.status).toBe(200);
    expect(r.headers.get("herald-billing-warning")).toBe("read_only");
  });
});

describe("an account in grace", () => {
  for (const { name, method, path } of writes) {
    test(`${name}: allowed, with the warning header`, async () => {
      const r = await send(name, method, path, grace.ws, await grace.key());
      expect({ name, status: r.status }).not.toMatchObject({ status: 402 });
      expect({ name, warning: r.headers.get("herald-billing-warning") }).toEqual({
        name,
        warning: expect.stringMatching(/^grace; read_only_at=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
    });
  }
});

describe("a 404 for a foreign workspace comes before the billing rule", () => {
  test("a read_only account's key on another account's workspace is 404, not 402", async () => {
    const r = await s.request("POST", `/v1/workspaces/${grace.ws}/posts`, {
      key: await readOnly.key(),
      body: {},
    });
    expect(r.status).toBe(404);
  });
});

describe("a review link of a read_only account", () => {
  test("approving through it is refused as the approve operation is (402); the post still awaits", async () => {
    // A server with an X app configured, so a post to X can be sent for approval.
    const bx = await startBillingServer({
      HERALD_X_CLIENT_ID: "x-client",
      HERALD_X_CLIENT_SECRET: "x-secret",
    });
    afterAll(() => bx.stop());
    const { s, stripe } = bx;
    const account = await newAccount(bx);
    const { subscription } = await subscribe(account);
    const { owner } = account.s;
    const ws = owner.workspaceId;
    const destination = await insertXDestination(s, ws);
    const writeHeaders = () => ({ "idempotency-key": `review-${Math.random()}`, "if-match": "*" });
    const on = await account.s.request("PATCH", `/v1/workspaces/${ws}`, {
      headers: writeHeaders(),
      body: { approval_required: true },
    });
    expect(on.status).toBe(200);
    const memberKey = await s.createKey({
      accountId: owner.accountId,
      scopes: ["posts:read", "posts:write"],
    });
    const created = await s.request("POST", `/v1/workspaces/${ws}/posts`, {
      key: memberKey,
      headers: writeHeaders(),
      body: {
        when: "now",
        confirmed: true,
        group: "billing-review",
        posts: [{ destination_id: destination, body: ["Hi"] }],
      },
    });
    expect({
      status: created.status,
      approval: created.body?.posts?.[0]?.approval?.status,
      text: created.status === 202 ? "" : created.text,
    }).toEqual({ text: "", status: 202, approval: "requested" });
    const link = await account.s.request("POST", `/v1/workspaces/${ws}/review-links`, {
      headers: writeHeaders(),
      body: { group: "billing-review" },
    });
    expect(link.status).toBe(201);
    stripe.setSubscription(subscription.id, { status: "unpaid" });
    await deliverState(account, subscription.id);

    const path = pathOf(link.body.url);
    const page = await new TestBrowser(s).submit(path, {}, `${path}/approve`);
    expect(page.status).toBe(402);
    expect(page.text).toContain("subscription is unpaid");
    const post = await account.s.request("GET", `/v1/workspaces/${ws}/posts/${created.body.posts[0].id}`);
    expect({ state: post.body.state, approval: post.body.approval.status }).toEqual({
      state: "draft",
      approval: "requested",
    });
  });
});
