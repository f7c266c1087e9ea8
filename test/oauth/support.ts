import { expect } from "bun:test";
import { createPkcePair } from "../../src/providers/pkce.ts";
import { dashboardWorld, type DashboardWorld, hiddenFields, type TestBrowser } from "../dashboard/support.ts";
import type { PageResponse } from "../helpers/browser.ts";

export { createPkcePair };

/** The redirect URI the tests' client registers (a native app's loopback listener). */
export const REDIRECT_URI = "http://127.0.0.1:8976/callback";

/**
 * A dashboard world whose address may register many clients (each test registers its own) and fail
 * many token requests (the tests of bad requests send them from one address).
 */
export function oauthWorld(): Promise<DashboardWorld> {
  return dashboardWorld({
    env: { HERALD_SIGNUP_REQUESTS_PER_HOUR: "1000", HERALD_AUTH_FAILURES_PER_MINUTE: "1000" },
  });
}

/** What a JSON endpoint answered. */
export interface JsonAnswer {
  status: number;
  headers: Headers;
  body: any;
}

async function json(response: Response): Promise<JsonAnswer> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

/** POST /oauth/register with a JSON body. */
export async function register(url: string, metadata: unknown): Promise<JsonAnswer> {
  return json(
    await fetch(`${url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(metadata),
    }),
  );
}

/** Registers a client with `REDIRECT_URI` and returns its id. */
export async function registeredClient(url: string, name = "Test assistant"): Promise<string> {
  const answer = await register(url, {
    client_name: name,
    redirect_uris: [REDIRECT_URI],
    grant_types: ["authorization_code", "refresh_token"],
  });
  expect(answer.status).toBe(201);
  return answer.body.client_id;
}

/** POST /oauth/token, form-encoded. */
export async function tokenRequest(url: string, form: Record<string, string>): Promise<JsonAnswer> {
  return json(
    await fetch(`${url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form).toString(),
    }),
  );
}

/** The path of an authorization request with the usual parameters, `overrides` replacing or (null) dropping them. */
export function authorizePath(
  url: string,
  clientId: string,
  challenge: string,
  overrides: Record<string, string | null> = {},
): string {
  const params: Record<string, string | null> = {
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: "S256",
    state: "st-123~!*()'",
    resource: `${url}/mcp`,
    scope: "workspaces:read posts:read posts:write",
    ...overrides,
  };
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== null) query.set(name, value);
  return `/oauth/authorize?${query}`;
}

/** The parameters of a redirect's Location. */
export function redirectParams(location: string | null): URLSearchParams {
  expect(location).not.toBeNull();
  return new URL(location!).searchParams;
}

/**
 * Opens the consent page at `path` (signed in) and answers it with `pairs` (the page's hidden fields
 * first, as a browser sends them).
 */
export async function answerConsent(
  browser: TestBrowser,
  path: string,
  pairs: [string, string][],
): Promise<PageResponse> {
  const page = await browser.get(path);
  expect(page.status).toBe(200);
  const hidden = Object.entries(hiddenFields(page.text, "/oauth/authorize"));
  return browser.send("POST", "/oauth/authorize", [...hidden, ...pairs]);
}

/** Runs the flow to a code: consent with `pairs` (default: allow, all workspaces, two scopes). */
export async function authorizationCode(
  world: DashboardWorld,
  browser: TestBrowser,
  clientId: string,
  pairs: [string, string][] = [
    ["workspace_access", "all"],
    ["scopes", "workspaces:read"],
    ["scopes", "posts:read"],
    ["decision", "allow"],
  ],
): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = createPkcePair();
  const answered = await answerConsent(browser, authorizePath(world.s.url, clientId, challenge), pairs);
  expect(answered.status).toBe(303);
  const params = redirectParams(answered.location);
  expect(params.get("code")).toMatch(/^hk_oac_/);
  return { code: params.get("code")!, verifier };
}

/** A grant's tokens through the whole flow (code, then exchange). */
export async function grantTokens(
  world: DashboardWorld,
  browser: TestBrowser,
  clientId: string,
  pairs?: [string, string][],
): Promise<JsonAnswer> {
  const { code, verifier } = await authorizationCode(world, browser, clientId, pairs);
  const answer = await tokenRequest(world.s.url, {
    grant_type: "authorization_code",
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    resource: `${world.s.url}/mcp`,
  });
  expect(answer.status).toBe(200);
  return answer;
}
