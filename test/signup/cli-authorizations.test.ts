import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { screenOf } from "../helpers/screen.ts";
import { eq } from "drizzle-orm";
import { tables } from "../helpers/tables.ts";
import { sha256Hex } from "../../src/lib/crypto.ts";
import { bootstrapAccount } from "../../src/modules/account/bootstrap.ts";
import { CLI_KEY_SCOPES } from "../../src/modules/cli-auth/service.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { TestBrowser, pathOf } from "../helpers/browser.ts";

const { cliAuthorizations } = tables;

const MINUTE_MS = 60 * 1000;
const PASSWORD = "correct horse battery";

let s: TestServer;
let person: { email: string; accountId: string; workspaceId: string };
beforeAll(async () => {
  s = await startTestServer({ env: { HERALD_SIGNUP_REQUESTS_PER_HOUR: "1000" } });
  // A person who can sign in to the pages (bootstrap sets the password the pages check).
  const email = "person@example.com";
  const made = await bootstrapAccount(s.herald, { email, workspaceName: "Person's", password: PASSWORD });
  person = { email, accountId: made.account_id, workspaceId: made.workspace_id };
});
afterAll(async () => {
  await s.stop();
});

const start = (body: unknown = { device_name: "laptop", cli_version: "0.1.0" }) =>
  s.request("POST", "/v1/cli-authorizations", { key: null, body });
const poll = (deviceSecret: unknown) =>
  s.request("POST", "/v1/cli-authorizations/token", { key: null, body: { device_secret: deviceSecret } });

/** A browser signed in as the person. */
async function signedIn(): Promise<TestBrowser> {
  const browser = new TestBrowser(s);
  await browser.signIn(person.email, PASSWORD);
  return browser;
}

/** Opens the authorization's verification_uri_complete and answers with `decision`. */
async function decide(browser: TestBrowser, started: any, decision: "approve" | "deny", extra = {}) {
  return browser.submit(pathOf(started.verification_uri_complete), { decision, ...extra }, "/device");
}

describe("POST /v1/cli-authorizations", () => {
  test("201 with the start response: a one-time device secret, where to approve, interval, expiry", async () => {
    const r = await start();
    expect(r.status).toBe(201);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(Object.keys(r.body).sort()).toEqual(
      [
        "device_secret",
        "expires_at",
        "interval",
        "object",
        "sensitive",
        "verification_uri",
        "verification_uri_complete",
      ].sort(),
    );
    expect(r.body).toMatchObject({
      object: "cli_authorization",
      sensitive: true,
      verification_uri: `${s.url}/device`,
      interval: 5,
      expires_at: new Date(s.clock.now() + 30 * MINUTE_MS).toISOString(),
    });
    expect(r.body.device_secret.length).toBeGreaterThanOrEqual(32);
    expect(r.body.device_secret.length).toBeLessThanOrEqual(200);
    const code = new URL(r.body.verification_uri_complete).searchParams.get("user_code");
    expect(code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    const [row] = await s.herald.db
      .select()
      .from(cliAuthorizations)
      .where(eq(cliAuthorizations.deviceSecretHash, sha256Hex(r.body.device_secret)));
    expect(row).toMatchObject({
      deviceName: "laptop",
      cliVersion: "0.1.0",
      userCodeHash: sha256Hex(code!.replace("-", "")),
    });
  });

  test("cli_version may be left out; the longest names are accepted", async () => {
    expect((await start({ device_name: "laptop" })).status).toBe(201);
    expect((await start({ device_name: "d".repeat(200), cli_version: "v".repeat(100) })).status).toBe(201);
  });

  const invalid: [string, unknown, string[]][] = [
    ["device_name missing", { cli_version: "1" }, ["/device_name"]],
    ["device_name empty", { device_name: "" }, ["/device_name"]],
    ["device_name of 201 characters", { device_name: "d".repeat(201) }, ["/device_name"]],
    ["device_name blank", { device_name: "  " }, ["/device_name"]],
    ["device_name with a line break", { device_name: "a\nb" }, ["/device_name"]],
    ["device_name not a string", { device_name: 7 }, ["/device_name"]],
    ["cli_version empty", { device_name: "d", cli_version: "" }, ["/cli_version"]],
    ["cli_version of 101 characters", { device_name: "d", cli_version: "v".repeat(101) }, ["/cli_version"]],
    ["an unknown property", { device_name: "d", scopes: ["posts:write"] }, ["/scopes"]],
  ];
  for (const [name, body, pointers] of invalid) {
    test(`400 public_invalid_request: ${name}`, async () => {
      expectProblem(await start(body), 400, "public_invalid_request", pointers);
    });
  }
});

describe("POST /v1/cli-authorizations/token: refusals", () => {
  const invalid: [string, unknown, string[]][] = [
    ["device_secret missing", {}, ["/device_secret"]],
    ["device_secret of 31 characters", { device_secret: "x".repeat(31) }, ["/device_secret"]],
    ["device_secret of 201 characters", { device_secret: "x".repeat(201) }, ["/device_secret"]],
    ["device_secret not a string", { device_secret: 12345 }, ["/device_secret"]],
    ["an unknown property", { device_secret: "x".repeat(40), grant_type: "device_code" }, ["/grant_type"]],
  ];
  for (const [name, body, pointers] of invalid) {
    test(`400 public_invalid_request: ${name}`, async () => {
      const r = await s.request("POST", "/v1/cli-authorizations/token", { key: null, body });
      expectProblem(r, 400, "public_invalid_request", pointers);
    });
  }

  test("an unknown device secret is 404 public_not_found", async () => {
    expectProblem(await poll(`hcd_${"A".repeat(43)}`), 404, "public_not_found");
    expectProblem(await poll("x".repeat(32)), 404, "public_not_found");
  });

  test("an API key is not a device secret (404), and a device secret is not an API key (401)", async () => {
    expectProblem(await poll(s.owner.apiKey), 404, "public_not_found");
    const started = (await start()).body;
    const r = await s.request("GET", "/v1/account", { key: started.device_secret });
    expectProblem(r, 401, "public_authentication_required");
  });

  test("pending: 202 with retry_after and Retry-After until someone approves", async () => {
    const started = (await start()).body;
    const r = await poll(started.device_secret);
    expect(r.status).toBe(202);
    expect(r.headers.get("retry-after")).toBe("5");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.body).toEqual({
      object: "cli_authorization",
      status: "pending",
      retry_after: 5,
      expires_at: started.expires_at,
    });
    s.clock.advance(5000);
    expect((await poll(started.device_secret)).status).toBe(202);
  });

  test("polling sooner than the interval is 429 and adds 5 s to it (RFC 8628 slow_down)", async () => {
    const started = (await start()).body;
    expect((await poll(started.device_secret)).status).toBe(202);
    s.clock.advance(1000);
    const early = await poll(started.device_secret);
    expectProblem(early, 429, "public_rate_limited");
    expect(early.headers.get("retry-after")).toBe("10");
    expect(early.body.retry.after).toBe(10);
    expect(early.body.detail).toContain("10 seconds");
    // The new interval holds from now on: 5 s is too early again, 10 s is not.
    s.clock.advance(5000);
    const again = await poll(started.device_secret);
    expectProblem(again, 429, "public_rate_limited");
    expect(again.headers.get("retry-after")).toBe("15");
    s.clock.advance(15_000 - 200); // a poll a moment early still counts as on time
    const onTime = await poll(started.device_secret);
    expect(onTime.status).toBe(202);
    expect(onTime.body.retry_after).toBe(15);
  });

  test("expired: 409 public_cli_authorization_expired, and its code is no longer accepted", async () => {
    const started = (await start()).body;
    s.clock.advance(30 * MINUTE_MS);
    expectProblem(await poll(started.device_secret), 409, "public_cli_authorization_expired");
    const browser = await signedIn();
    const page = await browser.get(pathOf(started.verification_uri_complete));
    expect(page.status).toBe(404);
    expect(page.text).toContain("not valid or has expired");
  });
});

describe("the device flow", () => {
  test("approve on /device, then the exchange gives a live least-privilege key, once", async () => {
    const started = (await start({ device_name: "work laptop", cli_version: "1.2.3" })).body;
    expect((await poll(started.device_secret)).status).toBe(202);

    // Not signed in: /device sends the person to sign in and back to the same code.
    const browser = new TestBrowser(s);
    const code = new URL(started.verification_uri_complete).searchParams.get("user_code")!;
    const open = await browser.get(pathOf(started.verification_uri_complete));
    expect(open.status).toBe(303);
    expect(open.location).toBe(`/login?next=${encodeURIComponent(`/device?user_code=${code}`)}`);
    const login = await browser.get(open.location!);
    expect(login.text).toContain(`name="next" value="/device?user_code=${code}"`);
    const signIn = await browser.submit(
      open.location!,
      { email: person.email, password: PASSWORD, next: `/device?user_code=${code}` },
      "/login",
    );
    expect(signIn.status).toBe(303);
    expect(signIn.location).toBe(`/device?user_code=${code}`);

    const question = await browser.get(signIn.location!);
    expect(question.status).toBe(200);
    expect(question.text).toContain("work laptop");
    expect(question.text).toContain("1.2.3");
    expect(question.text).toContain(code);
    for (const scope of CLI_KEY_SCOPES) expect(question.text).toContain(`<code>${scope}</code>`);
    // Times as people read them, with the zone named (not raw ISO).
    const said = screenOf(question.text).text();
    expect(said).toMatch(/Requested 1 Mar 2026, \d\d:\d\d UTC/);
    expect(said).toMatch(/Expires 1 Mar 2026, \d\d:\d\d UTC/);

    const approved = await decide(browser, started, "approve");
    expect(approved.status).toBe(200);
    expect(approved.text).toContain("Command line approved");

    s.clock.advance(5000);
    const exchanged = await poll(started.device_secret);
    expect(exchanged.status).toBe(200);
    expect(exchanged.headers.get("cache-control")).toBe("no-store");
    expect(Object.keys(exchanged.body).sort()).toEqual(
      ["account_id", "api_key", "object", "status", "workspace_id", "workspace_name"].sort(),
    );
    expect(exchanged.body).toMatchObject({
      object: "cli_credential",
      status: "authorized",
      workspace_id: person.workspaceId,
      workspace_name: "Person's",
      account_id: person.accountId.replace(/^acc_/, "acct_"),
    });
    expect(exchanged.body.account_id).toMatch(/^acct_/);
    const key = exchanged.body.api_key;
    expect(key).toMatch(/^hk_live_[A-Za-z0-9]{40}$/);

    // The key works, is live, named after the device, for every workspace, with the CLI's scopes only.
    const account = await s.request("GET", "/v1/account", { key });
    expect(account.status).toBe(200);
    expect(account.body.id).toBe(person.accountId);
    expect(account.body.authentication).toMatchObject({
      name: "work laptop",
      environment: "live",
      workspace_access_mode: "all",
      expires_at: null,
    });
    expect([...account.body.authentication.scopes].sort()).toEqual([...CLI_KEY_SCOPES].sort());
    expect((await s.request("GET", "/v1/workspaces", { key })).status).toBe(200);
    expect((await s.request("GET", `/v1/workspaces/${person.workspaceId}/posts`, { key })).status).toBe(200);
    expectProblem(await s.request("GET", "/v1/audit-records", { key }), 403, "public_scope_missing");
    expectProblem(
      await s.request("POST", "/v1/workspaces", { key, body: { name: "No" } }),
      403,
      "public_scope_missing",
    );

    // The device secret worked once.
    s.clock.advance(5000);
    expectProblem(await poll(started.device_secret), 409, "public_cli_authorization_consumed");
    s.clock.advance(60 * MINUTE_MS);
    expectProblem(await poll(started.device_secret), 409, "public_cli_authorization_consumed");

    // The audit log names the approval (by the session) and the key.
    const owner = await s.createKey({ accountId: person.accountId, scopes: ["audit:read"] });
    const audit = await s.request("GET", "/v1/audit-records?limit=100", { key: owner });
    const actions = audit.body.data.map((r: { action: string }) => r.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        "cli_authorization.approved",
        "api_key.created",
        "cli_authorization.exchanged",
      ]),
    );
  });

  test("deny: 403 public_cli_authorization_denied from then on, and no key is made", async () => {
    const started = (await start()).body;
    const browser = await signedIn();
    const denied = await decide(browser, started, "deny");
    expect(denied.status).toBe(200);
    expect(denied.text).toContain("Request denied");
    expectProblem(await poll(started.device_secret), 403, "public_cli_authorization_denied");
    s.clock.advance(10_000);
    expectProblem(await poll(started.device_secret), 403, "public_cli_authorization_denied");
    const [row] = await s.herald.db
      .select()
      .from(cliAuthorizations)
      .where(eq(cliAuthorizations.deviceSecretHash, sha256Hex(started.device_secret)));
    expect(row).toMatchObject({ status: "denied", credentialId: null, accountId: person.accountId });
  });

  test("an answered request cannot be answered again", async () => {
    const started = (await start()).body;
    const browser = await signedIn();
    const page = await browser.get(pathOf(started.verification_uri_complete));
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)![1]!;
    const code = new URL(started.verification_uri_complete).searchParams.get("user_code")!;
    expect(
      (await browser.post("/device", { csrf_token: csrf, user_code: code, decision: "approve" })).status,
    ).toBe(200);
    const second = await browser.post("/device", { csrf_token: csrf, user_code: code, decision: "deny" });
    expect(second.status).toBe(409);
    expect(second.text).toContain("already answered");
    s.clock.advance(5000);
    expect((await poll(started.device_secret)).status).toBe(200);
  });

  test("an approved authorization that expires before its exchange is not exchanged", async () => {
    const started = (await start()).body;
    const browser = await signedIn();
    expect((await decide(browser, started, "approve")).status).toBe(200);
    s.clock.advance(30 * MINUTE_MS);
    expectProblem(await poll(started.device_secret), 409, "public_cli_authorization_expired");
  });

  test("with several workspaces the person picks the credential's workspace", async () => {
    const owner = await s.createKey({ accountId: person.accountId });
    const second = await s.request("POST", "/v1/workspaces", { key: owner, body: { name: "Second" } });
    expect(second.status).toBe(201);
    const started = (await start()).body;
    const browser = await signedIn();
    const page = await browser.get(pathOf(started.verification_uri_complete));
    expect(page.text).toContain('<select id="workspace_id" name="workspace_id">');
    expect(page.text).toContain(`<option value="${second.body.id}">Second</option>`);
    const approved = await decide(browser, started, "approve", { workspace_id: second.body.id });
    expect(approved.status).toBe(200);
    const credential = await poll(started.device_secret);
    expect(credential.body).toMatchObject({ workspace_id: second.body.id, workspace_name: "Second" });
  });

  test("a workspace of another account is not accepted: the credential names the person's first", async () => {
    const other = await s.bootstrap();
    const started = (await start()).body;
    const browser = await signedIn();
    expect((await decide(browser, started, "approve", { workspace_id: other.workspaceId })).status).toBe(200);
    const credential = await poll(started.device_secret);
    expect(credential.body.workspace_id).toBe(person.workspaceId);
    const account = await s.request("GET", `/v1/workspaces/${other.workspaceId}`, {
      key: credential.body.api_key,
    });
    expectProblem(account, 404, "public_not_found");
  });
});
