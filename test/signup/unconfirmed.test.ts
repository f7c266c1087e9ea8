// An account whose address is not confirmed looks around but creates nothing: every operation of
// REFUSED_WHILE_UNCONFIRMED is 403 public_email_unconfirmed for its keys and its dashboard, and the
// same operations pass the rails once the address is confirmed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { inTransaction } from "../../src/db/transaction.ts";
import { WRITE_OPERATIONS } from "../../src/modules/billing/work.ts";
import { markAddressConfirmed } from "../../src/modules/signup/repo.ts";
import { REFUSED_WHILE_UNCONFIRMED } from "../../src/modules/signup/unconfirmed.ts";
import { hiddenFields, type TestBrowser } from "../helpers/browser.ts";
import { expectProblem } from "../helpers/problems.ts";
import { screenOf, textOf } from "../helpers/screen.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tables } from "../helpers/tables.ts";
import { headingOf, submitPairs } from "../dashboard/support.ts";
import { signUpThroughPage } from "./support.ts";

const EMAIL = "squatter@example.com";

let s: TestServer;
let browser: TestBrowser;
let accountId: string;
let userId: string;
let workspaceId: string;
let key: string;

beforeAll(async () => {
  s = await startTestServer({ env: { HERALD_SIGNUP_CONFIRM_EMAIL: "on" } });
  ({ accountId, userId, workspaceId, browser } = await signUpThroughPage(s, {
    email: EMAIL,
    name: "Squatter",
    workspaceName: "Squat",
  }));
  // A key the account holds (made before this rule, or by an operator): the rule is the account's.
  key = await s.createKey({ accountId, workspaceIds: "all" });
});
afterAll(async () => {
  await s.stop();
});

/** Sends one operation of the table (`METHOD /path`) with placeholder ids and a minimal body. */
function send(operation: string) {
  const [method, template] = operation.split(" ") as [string, string];
  const path = template
    .replace("{workspace_id}", workspaceId)
    .replace(/\{[a-z_]+\}/g, (name) => `${name.slice(1, -4)}_none`);
  return s.request(method, `/v1${path}`, {
    key,
    body: {},
    headers: { "idempotency-key": `unconfirmed-${Math.random()}` },
  });
}

/** The dashboard's key form, filled in. */
function createKeyInDashboard(name: string) {
  return submitPairs(s, browser, "/dashboard/keys", "/dashboard/keys", [
    ["name", name],
    ["environment", "live"],
    ["scopes", "posts:read"],
    ["workspace_access", "all"],
    ["expiry", "30"],
  ]);
}

test("the table covers every operation that creates work (billing's list) and more", () => {
  const creating = Object.entries(WRITE_OPERATIONS)
    .filter(([, kind]) => kind === "creates_work")
    .map(([operation]) => operation);
  for (const operation of creating) expect(REFUSED_WHILE_UNCONFIRMED).toContain(operation);
  expect(REFUSED_WHILE_UNCONFIRMED).toContain("POST /billing/checkout-sessions");
});

describe("before the address is confirmed", () => {
  for (const operation of REFUSED_WHILE_UNCONFIRMED)
    test(`${operation} is 403 public_email_unconfirmed`, async () => {
      const r = await send(operation);
      expectProblem(r, 403, "public_email_unconfirmed");
      expect(r.body).toMatchObject({
        title: "Address not confirmed",
        category: "permission",
        user_action: "check_credentials",
        retryable: false,
      });
    });

  test("reading and looking around still work", async () => {
    for (const path of ["/account", `/workspaces/${workspaceId}`, `/workspaces/${workspaceId}/posts`])
      expect((await s.request("GET", `/v1${path}`, { key })).status).toBe(200);
    const renamed = await s.request("PATCH", `/v1/workspaces/${workspaceId}`, {
      key,
      body: { name: "Mine" },
    });
    expect(renamed.status).toBe(200);
  });

  test("the dashboard refuses a new API key with a page that says why and offers a new link", async () => {
    const r = await createKeyInDashboard("Sneaky");
    expect(r.status).toBe(403);
    expect(headingOf(r)).toBe("Confirm your address first");
    const screen = screenOf(r.text);
    expect(textOf(screen.getByRole("alert"))).toContain("Confirm your e-mail address first");
    expect(screen.text()).toContain("Confirm your e-mail address first");
    expect(screen.text()).toContain(EMAIL);
    expect(screen.getByRole("button", { name: "Send the link again" })).toBeDefined();
    const keys = await s.herald.db
      .select()
      .from(tables.apiKeys)
      .where(eq(tables.apiKeys.accountId, accountId));
    expect(keys.map((k) => k.name)).not.toContain("Sneaky");
    // The page's button sends a new link.
    const action = "/dashboard/resend-confirmation";
    const resend = await browser.post(action, hiddenFields(r.text, action));
    expect([resend.status, resend.location]).toEqual([303, "/dashboard?resent=1"]);
  });

  test("a dashboard write through the API shows the same page (an invitation)", async () => {
    const r = await submitPairs(s, browser, "/dashboard/team", "/dashboard/team/invitations", [
      ["email", "friend@example.com"],
    ]);
    expect(r.status).toBe(403);
    expect(headingOf(r)).toBe("Confirm your address first");
  });
});

describe("after the address is confirmed", () => {
  beforeAll(async () => {
    await inTransaction(s.herald.db, (tx) => markAddressConfirmed(tx, userId, s.clock.now()));
  });

  for (const operation of REFUSED_WHILE_UNCONFIRMED)
    test(`${operation} passes the rule`, async () => {
      const r = await send(operation);
      expect(r.body?.code).not.toBe("public_email_unconfirmed");
    });

  test("a draft, an invitation and a dashboard key are made", async () => {
    const draft = await s.request("POST", `/v1/workspaces/${workspaceId}/posts`, {
      key,
      body: { when: "draft", group: "after", posts: [{ channel: "mastodon", body: ["hello"] }] },
    });
    expect(draft.status).toBe(201);
    const invitation = await s.request("POST", "/v1/account/invitations", {
      key,
      body: { email: "friend@example.com" },
      headers: { "idempotency-key": "invite-after" },
    });
    expect(invitation.status).toBe(201);
    expect((await createKeyInDashboard("Welcome")).status).toBe(201);
  });
});
