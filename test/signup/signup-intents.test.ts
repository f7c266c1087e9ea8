import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { tables } from "../helpers/tables.ts";
import { sha256Hex } from "../../src/lib/crypto.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const { cliAuthorizations, signupIntents } = tables;

const HOUR_MS = 60 * 60 * 1000;

/** An address of exactly `length` characters (a 64-character local part, labels of at most 63). */
function addressOfLength(length: number, localLength = 64): string {
  const local = "x".repeat(localLength);
  let domainLength = length - local.length - 1 - ".com".length;
  const labels: string[] = [];
  while (domainLength > 0) {
    const size = Math.min(63, domainLength);
    labels.push("a".repeat(size));
    domainLength -= size + 1;
  }
  const address = `${local}@${labels.join(".")}.com`;
  if (address.length !== length) throw new Error(`cannot build an address of ${length} characters`);
  return address;
}

let counter = 0;
const fresh = () => `new-${++counter}@example.com`;
const intent = (s: TestServer, body: unknown, headers: Record<string, string> = {}) =>
  s.request("POST", "/v1/signup-intents", { key: null, body, headers });

describe("POST /v1/signup-intents", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { HERALD_SIGNUP_REQUESTS_PER_HOUR: "1000" } });
  });
  afterAll(async () => {
    await s.stop();
  });

  test("201 with the signup intent: a one-time page URL and its expiry, nothing else", async () => {
    const r = await intent(s, { email: fresh(), workspace_name: "Acme" });
    expect(r.status).toBe(201);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("service-request-id")).toBeTruthy();
    expect(Object.keys(r.body).sort()).toEqual(["expires_at", "object", "signup_url"]);
    expect(r.body.object).toBe("signup_intent");
    expect(r.body.signup_url).toMatch(new RegExp(`^${s.url}/signup/[A-Za-z0-9]{43}$`));
    expect(r.body.expires_at).toBe(new Date(s.clock.now() + HOUR_MS).toISOString());
  });

  test("the page token is stored only as its hash; the address is stored lower-cased", async () => {
    const r = await intent(s, { email: "Mixed.Case@Example.COM", workspace_name: "Acme" });
    expect(r.status).toBe(201);
    const token = r.body.signup_url.split("/").at(-1);
    const [row] = await s.herald.db
      .select()
      .from(signupIntents)
      .where(eq(signupIntents.tokenHash, sha256Hex(token)));
    expect(row).toBeDefined();
    expect(row!.email).toBe("mixed.case@example.com");
    expect(JSON.stringify(row)).not.toContain(token);
  });

  test("two intents never share a page URL", async () => {
    const a = await intent(s, { email: fresh(), workspace_name: "A" });
    const b = await intent(s, { email: fresh(), workspace_name: "B" });
    expect(a.body.signup_url).not.toBe(b.body.signup_url);
  });

  test("authorize_cli attaches the start object of a CLI authorization, expiring with the intent", async () => {
    const r = await intent(s, {
      email: fresh(),
      workspace_name: "Acme",
      authorize_cli: true,
      device_name: "laptop",
      cli_version: "0.1.0",
    });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(["cli_authorization", "expires_at", "object", "signup_url"]);
    const cli = r.body.cli_authorization;
    expect(Object.keys(cli).sort()).toEqual(
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
    expect(cli).toMatchObject({
      object: "cli_authorization",
      sensitive: true,
      verification_uri: `${s.url}/device`,
      expires_at: r.body.expires_at,
      interval: 5,
    });
    expect(cli.device_secret).toMatch(/^hcd_[A-Za-z0-9]{43}$/);
    expect(cli.verification_uri_complete).toMatch(
      new RegExp(`^${s.url}/device\\?user_code=[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`),
    );
    // Stored hashed: the secret is nowhere in its row.
    const [row] = await s.herald.db
      .select()
      .from(cliAuthorizations)
      .where(eq(cliAuthorizations.deviceSecretHash, sha256Hex(cli.device_secret)));
    expect(row).toMatchObject({ deviceName: "laptop", cliVersion: "0.1.0", status: "pending" });
    expect(JSON.stringify(row)).not.toContain(cli.device_secret);
    expect(JSON.stringify(row)).not.toContain(cli.verification_uri_complete.split("=")[1]);
  });

  test("authorize_cli false (or absent) attaches nothing, even with a device name", async () => {
    for (const extra of [{}, { authorize_cli: false, device_name: "laptop", cli_version: "1" }]) {
      const r = await intent(s, { email: fresh(), workspace_name: "Acme", ...extra });
      expect(r.status).toBe(201);
      expect(r.body).not.toHaveProperty("cli_authorization");
    }
  });

  test("the longest values of every field are accepted", async () => {
    const r = await intent(s, {
      email: addressOfLength(254),
      workspace_name: "w".repeat(200),
      authorize_cli: true,
      device_name: "d".repeat(200),
      cli_version: "v".repeat(100),
    });
    expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
  });

  const valid = { email: "valid@example.com", workspace_name: "Acme" };
  const cli = { authorize_cli: true, device_name: "laptop" };
  const invalid: [string, unknown, string[]][] = [
    ["email missing", { workspace_name: "Acme" }, ["/email"]],
    ["email not an address", { ...valid, email: "not-an-address" }, ["/email"]],
    ["email without a domain dot", { ...valid, email: "someone@localhost" }, ["/email"]],
    ["email with a space", { ...valid, email: "some one@example.com" }, ["/email"]],
    ["email of 255 characters", { ...valid, email: addressOfLength(255) }, ["/email"]],
    ["email with 65 characters before the @", { ...valid, email: addressOfLength(100, 65) }, ["/email"]],
    ["email not a string", { ...valid, email: 5 }, ["/email"]],
    ["workspace_name missing", { email: valid.email }, ["/workspace_name"]],
    ["workspace_name empty", { ...valid, workspace_name: "" }, ["/workspace_name"]],
    ["workspace_name of 201 characters", { ...valid, workspace_name: "w".repeat(201) }, ["/workspace_name"]],
    ["workspace_name blank", { ...valid, workspace_name: "   " }, ["/workspace_name"]],
    ["workspace_name with a line break", { ...valid, workspace_name: "a\nb" }, ["/workspace_name"]],
    ["authorize_cli not a boolean", { ...valid, authorize_cli: "yes" }, ["/authorize_cli"]],
    ["authorize_cli without device_name", { ...valid, authorize_cli: true }, ["/device_name"]],
    ["device_name empty", { ...valid, ...cli, device_name: "" }, ["/device_name"]],
    ["device_name of 201 characters", { ...valid, ...cli, device_name: "d".repeat(201) }, ["/device_name"]],
    ["device_name blank", { ...valid, ...cli, device_name: " " }, ["/device_name"]],
    ["device_name with a control character", { ...valid, ...cli, device_name: "a\u0007" }, ["/device_name"]],
    ["cli_version empty", { ...valid, ...cli, cli_version: "" }, ["/cli_version"]],
    ["cli_version of 101 characters", { ...valid, ...cli, cli_version: "v".repeat(101) }, ["/cli_version"]],
    ["an unknown property", { ...valid, plan: "pro" }, ["/plan"]],
    ["two fields wrong at once", { email: "x", workspace_name: "" }, ["/email", "/workspace_name"]],
  ];
  for (const [name, body, pointers] of invalid) {
    test(`400 public_invalid_request: ${name}`, async () => {
      expectProblem(await intent(s, body), 400, "public_invalid_request", pointers);
    });
  }

  test("400 on a body that is not JSON, and on none", async () => {
    expectProblem(await intent(s, "{"), 400, "public_invalid_request", [""]);
    const none = await s.request("POST", "/v1/signup-intents", { key: null });
    expectProblem(none, 400, "public_invalid_request");
  });

  test("409 public_conflict on /email when the address has an account (in any case)", async () => {
    await s.bootstrap("taken@example.com", "Taken");
    for (const email of ["taken@example.com", "TAKEN@Example.com"]) {
      const r = await intent(s, { email, workspace_name: "Acme" });
      expectProblem(r, 409, "public_conflict", ["/email"]);
      expect(r.body.detail).toContain("herald login");
    }
  });

  test("a key is neither needed nor looked at", async () => {
    const withKey = await s.request("POST", "/v1/signup-intents", {
      body: { email: fresh(), workspace_name: "Acme" },
    });
    expect(withKey.status).toBe(201);
    const badKey = await intent(
      s,
      { email: fresh(), workspace_name: "Acme" },
      { authorization: "Bearer nope" },
    );
    expect(badKey.status).toBe(201);
  });

  test("the OpenAPI document lists the three handoff operations without security", async () => {
    const doc = (await s.request("GET", "/v1/openapi.json", { key: null })).body;
    for (const path of ["/signup-intents", "/cli-authorizations", "/cli-authorizations/token"]) {
      const op = doc.paths[path].post;
      expect({ path, security: op.security, scope: op["x-required-scope"] }).toEqual({
        path,
        security: [],
        scope: "none",
      });
      expect(op.responses["429"]).toBeDefined();
    }
    expect(doc.paths["/signup-intents"].post.responses["403"]).toBeDefined();
    expect(doc.paths["/cli-authorizations/token"].post.responses["202"].headers).toHaveProperty(
      "Retry-After",
    );
  });
});

describe("HERALD_SIGNUP=closed", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { HERALD_SIGNUP: "closed" } });
  });
  afterAll(async () => {
    await s.stop();
  });

  test("403 public_signup_closed, before the body is looked at", async () => {
    const r = await intent(s, { email: fresh(), workspace_name: "Acme" });
    expectProblem(r, 403, "public_signup_closed");
    expect(r.body.category).toBe("permission");
    expectProblem(await intent(s, { email: 5 }), 403, "public_signup_closed");
  });

  test("people with an account can still authorize the CLI", async () => {
    const r = await s.request("POST", "/v1/cli-authorizations", {
      key: null,
      body: { device_name: "laptop" },
    });
    expect(r.status).toBe(201);
  });
});

describe("rate limit per client address", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { HERALD_SIGNUP_REQUESTS_PER_HOUR: "3" } });
  });
  afterAll(async () => {
    await s.stop();
  });

  test("signups and CLI authorizations count together; past the limit 429 with Retry-After until the hour ends", async () => {
    expect((await intent(s, { email: fresh(), workspace_name: "A" })).status).toBe(201);
    // A refused request counts too: the limit is on requests, not on successes.
    expect((await intent(s, { email: "bad" })).status).toBe(400);
    const cli = await s.request("POST", "/v1/cli-authorizations", { key: null, body: { device_name: "d" } });
    expect(cli.status).toBe(201);
    s.clock.advance(10 * 60 * 1000);
    const over = await intent(s, { email: fresh(), workspace_name: "A" });
    expectProblem(over, 429, "public_rate_limited");
    expect(over.headers.get("retry-after")).toBe("3000");
    expect(over.body.retry).toEqual({ safety: "safe", after: 3000 });
    const overCli = await s.request("POST", "/v1/cli-authorizations", {
      key: null,
      body: { device_name: "d" },
    });
    expectProblem(overCli, 429, "public_rate_limited");
    // Polling is not counted: its own interval rule applies.
    const poll = await s.request("POST", "/v1/cli-authorizations/token", {
      key: null,
      body: { device_secret: cli.body.device_secret },
    });
    expect(poll.status).toBe(202);
    s.clock.advance(50 * 60 * 1000);
    expect((await intent(s, { email: fresh(), workspace_name: "A" })).status).toBe(201);
  });
});

describe("settings", () => {
  test("HERALD_SIGNUP_REQUESTS_PER_HOUR defaults to 20 and must be a positive integer", () => {
    expect(loadConfig({}).signupRequestsPerHour).toBe(20);
    expect(loadConfig({ HERALD_SIGNUP_REQUESTS_PER_HOUR: "5" }).signupRequestsPerHour).toBe(5);
    expect(() => loadConfig({ HERALD_SIGNUP_REQUESTS_PER_HOUR: "0" })).toThrow(ConfigError);
  });
});
