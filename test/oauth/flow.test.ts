import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { buildApp } from "../../src/app.ts";
import { markMcpDispatch } from "../../src/http/mcp-dispatch.ts";
import {
  attributeOf,
  type DashboardWorld,
  formOf,
  screenOf,
  type TestBrowser,
} from "../dashboard/support.ts";
import {
  authorizationCode,
  grantTokens,
  oauthWorld,
  REDIRECT_URI,
  registeredClient,
  tokenRequest,
} from "./support.ts";

let world: DashboardWorld;
let owner: TestBrowser;
let clientId: string;
let app: ReturnType<typeof buildApp>;

beforeAll(async () => {
  world = await oauthWorld();
  owner = await world.signedIn();
  clientId = await registeredClient(world.s.url);
  app = buildApp(world.s.herald);
});
afterAll(() => world.stop());

const MINUTE = 60_000;

/** An API request as the MCP endpoint dispatches it in-process (marked), or over HTTP when not. */
async function api(token: string, path: string, how: "dispatched" | "http", init: RequestInit = {}) {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  if (how === "http") return fetch(`${world.s.url}/v1${path}`, { ...init, headers });
  return app.handle(markMcpDispatch(new Request(`${world.s.url}/v1${path}`, { ...init, headers })));
}

const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
  tokenRequest(world.s.url, {
    grant_type: "authorization_code",
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    ...extra,
  });

const refresh = (refreshToken: string) =>
  tokenRequest(world.s.url, {
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    client_id: clientId,
  });

describe("the code flow with PKCE", () => {
  test("a code and its verifier give an access token, a refresh token and the granted scope", async () => {
    const answer = await grantTokens(world, owner, clientId);
    expect(answer.headers.get("cache-control")).toBe("no-store");
    expect(answer.body).toEqual({
      access_token: expect.stringMatching(/^hk_oat_[A-Za-z0-9]{43}$/),
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^hk_ort_[A-Za-z0-9]{43}$/),
      scope: "workspaces:read posts:read",
    });
    const listed = await api(answer.body.access_token, "/workspaces", "dispatched");
    expect(listed.status).toBe(200);
  });

  test("a code works once; using it again revokes the grant it made", async () => {
    const { code, verifier } = await authorizationCode(world, owner, clientId);
    const first = await exchange(code, verifier);
    expect(first.status).toBe(200);
    const again = await exchange(code, verifier);
    expect(again.status).toBe(400);
    expect(again.body).toEqual({
      error: "invalid_grant",
      error_description: "The authorization code was already used.",
    });
    expect(again.headers.get("cache-control")).toBe("no-store");
    const refused = await api(first.body.access_token, "/workspaces", "dispatched");
    expect(refused.status).toBe(401);
  });

  test("a wrong verifier is invalid_grant (and the right one still works)", async () => {
    const { code, verifier } = await authorizationCode(world, owner, clientId);
    const wrong = await exchange(code, `${verifier.slice(0, -2)}xx`);
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    expect(wrong.body.error_description).toMatch(/code_verifier/);
    expect((await exchange(code, verifier)).status).toBe(200);
  });

  test("a code expires after five minutes of the server's clock", async () => {
    const { code, verifier } = await authorizationCode(world, owner, clientId);
    world.s.clock.advance(5 * MINUTE);
    const late = await exchange(code, verifier);
    expect(late.status).toBe(400);
    expect(late.body).toEqual({
      error: "invalid_grant",
      error_description: "The authorization code has expired.",
    });
  });

  test("the redirect URI, the client and the resource must match the code's", async () => {
    const { code, verifier } = await authorizationCode(world, owner, clientId);
    const other = await registeredClient(world.s.url, "Other");
    const cases: [Record<string, string>, number, string][] = [
      [{ redirect_uri: "http://127.0.0.1:8976/else" }, 400, "invalid_grant"],
      [{ client_id: other }, 400, "invalid_grant"],
      [{ client_id: "hoc_nobody" }, 401, "invalid_client"],
      [{ resource: `${world.s.url}/v1` }, 400, "invalid_target"],
    ];
    for (const [extra, status, error] of cases) {
      const r = await exchange(code, verifier, extra);
      expect({ extra, status: r.status, error: r.body.error }).toEqual({ extra, status, error });
    }
    expect((await exchange(code, verifier, { resource: `${world.s.url}/mcp` })).status).toBe(200);
  });

  test("malformed token requests answer RFC 6749 errors", async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, "invalid_request"],
      [{ grant_type: "password", username: "a", password: "b" }, "unsupported_grant_type"],
      [{ grant_type: "client_credentials" }, "unsupported_grant_type"],
      [{ grant_type: "authorization_code", client_id: clientId }, "invalid_request"],
      [{ grant_type: "refresh_token", client_id: clientId }, "invalid_request"],
      [{ grant_type: "refresh_token", client_id: clientId, refresh_token: "hk_ort_nope" }, "invalid_grant"],
    ];
    for (const [form, error] of cases) {
      const r = await tokenRequest(world.s.url, form);
      expect({ form, status: r.status, error: r.body.error }).toEqual({ form, status: 400, error });
      expect(typeof r.body.error_description).toBe("string");
    }
    const json = await fetch(`${world.s.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "authorization_code" }),
    });
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: string }).error).toBe("invalid_request");
  });
});

describe("refresh tokens", () => {
  test("a refresh rotates both tokens: the old access token and refresh token stop working", async () => {
    const first = (await grantTokens(world, owner, clientId)).body;
    const second = await refresh(first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(second.body.scope).toBe("workspaces:read posts:read");
    expect((await api(first.access_token, "/workspaces", "dispatched")).status).toBe(401);
    expect((await api(second.body.access_token, "/workspaces", "dispatched")).status).toBe(200);
    const third = await refresh(second.body.refresh_token);
    expect(third.status).toBe(200);
    expect((await api(third.body.access_token, "/workspaces", "dispatched")).status).toBe(200);
  });

  test("reusing a rotated refresh token revokes the grant", async () => {
    const first = (await grantTokens(world, owner, clientId)).body;
    const second = (await refresh(first.refresh_token)).body;
    const reused = await refresh(first.refresh_token);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
    expect(reused.body.error_description).toMatch(/already used; the grant is revoked/);
    expect((await api(second.access_token, "/workspaces", "dispatched")).status).toBe(401);
    expect((await refresh(second.refresh_token)).body.error).toBe("invalid_grant");
  });

  test("an access token lasts an hour; the refresh token then gets a new one", async () => {
    const tokens = (await grantTokens(world, owner, clientId)).body;
    world.s.clock.advance(60 * MINUTE);
    const expired = await api(tokens.access_token, "/workspaces", "dispatched");
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as { detail: string }).detail).toMatch(/expired; refresh it/);
    const next = await refresh(tokens.refresh_token);
    expect(next.status).toBe(200);
    expect((await api(next.body.access_token, "/workspaces", "dispatched")).status).toBe(200);
  });
});

describe("a grant is a credential", () => {
  test("its audience is the MCP resource: 401 at /v1 directly, accepted on a request /mcp dispatched", async () => {
    const { access_token } = (await grantTokens(world, owner, clientId)).body;
    const direct = await api(access_token, "/workspaces", "http");
    expect(direct.status).toBe(401);
    expect(direct.headers.get("content-type")).toMatch(/problem\+json/);
    expect(((await direct.json()) as { detail: string }).detail).toMatch(/accepted only by the MCP endpoint/);
    // In-process but not marked by the MCP endpoint: refused as well.
    const unmarked = await app.handle(
      new Request(`${world.s.url}/v1/workspaces`, { headers: { authorization: `Bearer ${access_token}` } }),
    );
    expect(unmarked.status).toBe(401);
    expect((await api(access_token, "/workspaces", "dispatched")).status).toBe(200);
    // An API key keeps working on both.
    expect((await api(world.owner.apiKey, "/workspaces", "http")).status).toBe(200);
    expect((await api(world.owner.apiKey, "/workspaces", "dispatched")).status).toBe(200);
  });

  test("it holds only the chosen scopes and workspaces, and acts as itself in the audit trail", async () => {
    const second = await world.s.request("POST", "/v1/workspaces", {
      key: world.owner.apiKey,
      body: { name: "Second" },
    });
    const { access_token } = (
      await grantTokens(world, owner, clientId, [
        ["workspace_access", "selected"],
        ["workspace_ids", world.owner.workspaceId],
        ["scopes", "workspaces:read"],
        ["scopes", "workspaces:write"],
        ["decision", "allow"],
      ])
    ).body;
    expect((await api(access_token, `/workspaces/${world.owner.workspaceId}`, "dispatched")).status).toBe(
      200,
    );
    expect((await api(access_token, `/workspaces/${second.body.id}`, "dispatched")).status).toBe(404);
    const noScope = await api(access_token, `/workspaces/${world.owner.workspaceId}/posts`, "dispatched");
    expect(noScope.status).toBe(403);
    expect(((await noScope.json()) as { detail: string }).detail).toMatch(/the OAuth grant does not have/);
    const renamed = await api(access_token, `/workspaces/${world.owner.workspaceId}`, "dispatched", {
      method: "PATCH",
      body: JSON.stringify({ name: "Acme renamed" }),
    });
    expect(renamed.status).toBe(200);
    const audit = await world.s.request("GET", "/v1/audit-records?limit=5", { key: world.owner.apiKey });
    const record = audit.body.data.find((r: { action: string }) => r.action === "workspace.updated");
    expect(record.credential_id).toMatch(/^grt_/);
  });

  test("it is listed with the keys, marked with its client's name, and revoking it refuses its token at once", async () => {
    const { access_token, refresh_token } = (await grantTokens(world, owner, clientId)).body;
    const page = await owner.get("/dashboard/keys");
    const screen = screenOf(page.text);
    const rows = screen.recordsOf(screen.getByRole("table", { name: /API keys$/ }));
    const grants = rows.filter((r) => r.Name === "Test assistant OAuth grant" && r.Status === "active");
    expect(grants.length).toBeGreaterThan(0);
    expect(grants[0]).toMatchObject({
      Prefix: "MCP access · live",
      Scopes: "workspaces: read; posts: read",
      Workspaces: "All",
    });
    expect((await api(access_token, "/workspaces", "dispatched")).status).toBe(200);
    // The newest grant is the first active one listed: revoke it with its own form.
    const button = screen.getAllByRole("button", { name: "Revoke Test assistant" })[0]!;
    const action = attributeOf(formOf(button)!, "action")!;
    const revoked = await owner.submit("/dashboard/keys", {}, action);
    expect(revoked.status).toBe(303);
    expect((await api(access_token, "/workspaces", "dispatched")).status).toBe(401);
    expect((await refresh(refresh_token)).body.error).toBe("invalid_grant");
    const audit = await world.s.request("GET", "/v1/audit-records?limit=5", { key: world.owner.apiKey });
    const actions = audit.body.data.map((r: { action: string; target_type: string }) => r.action);
    expect(actions).toContain("oauth_grant.revoked");
  });

  test("a member sees the grants they gave, like the keys they made", async () => {
    const member = await world.signedInAs("member", "grant-member@example.com");
    await grantTokens(world, member, clientId, [
      ["workspace_access", "all"],
      ["scopes", "posts:read"],
      ["decision", "allow"],
    ]);
    const rowsOf = async (browser: TestBrowser) => {
      const screen = screenOf((await browser.get("/dashboard/keys")).text);
      return screen.recordsOf(screen.getByRole("table", { name: /API keys$/ }));
    };
    const own = await rowsOf(member);
    expect(own).toHaveLength(1);
    expect(own[0]).toMatchObject({
      Name: "Test assistant OAuth grant",
      Scopes: "posts: read",
      Status: "active",
    });
    // The owner sees the member's grant among the account's.
    expect((await rowsOf(owner)).filter((r) => r.Scopes === "posts: read").length).toBeGreaterThan(0);
  });

  test("removing a member revokes the grants they gave, audited as OAuth grants", async () => {
    const email = "leaving-member@example.com";
    const member = await world.signedInAs("member", email);
    const tokens = (
      await grantTokens(world, member, clientId, [
        ["workspace_access", "all"],
        ["scopes", "posts:read"],
        ["decision", "allow"],
      ])
    ).body;
    expect((await api(tokens.access_token, "/workspaces", "dispatched")).status).toBe(200);
    const members = await world.s.request("GET", "/v1/account/members", { key: world.owner.apiKey });
    const leaving = members.body.data.find((m: { email: string }) => m.email === email);
    const removed = await world.s.request("POST", `/v1/account/members/${leaving.id}/remove`, {
      key: world.owner.apiKey,
      body: { confirmed: true, confirmation: email },
    });
    expect(removed.status).toBe(200);
    const grantIds = removed.body.revoked_key_ids as string[];
    expect(grantIds).toHaveLength(1);
    expect(grantIds[0]).toMatch(/^grt_/);
    expect((await api(tokens.access_token, "/workspaces", "dispatched")).status).toBe(401);
    const audit = await world.s.request("GET", "/v1/audit-records?limit=10", { key: world.owner.apiKey });
    const entries = audit.body.data.map((r: { action: string; target: { type: string; id: string } }) => [
      r.action,
      r.target.type,
      r.target.id,
    ]);
    expect(entries).toContainEqual(["oauth_grant.revoked", "oauth_grant", grantIds[0]]);
  });
});

// Last: it moves the clock past every session of the file.
describe("a grant's lifetime", () => {
  test("a grant ends after 90 days: refreshing it is invalid_grant", async () => {
    const tokens = (await grantTokens(world, owner, clientId)).body;
    world.s.clock.advance(90 * 24 * 60 * MINUTE);
    const r = await refresh(tokens.refresh_token);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      error: "invalid_grant",
      error_description: "The grant has expired; authorize again.",
    });
  });
});
