import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { newId } from "../../src/db/ids.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { bootstrapAccount } from "../../src/modules/account/bootstrap.ts";
import { type DashboardWorld, PASSWORD, screenOf, TestBrowser } from "../dashboard/support.ts";
import { tables } from "../helpers/tables.ts";
import {
  answerConsent,
  authorizePath,
  createPkcePair,
  oauthWorld,
  REDIRECT_URI,
  redirectParams,
  registeredClient,
} from "./support.ts";

let world: DashboardWorld;
let owner: TestBrowser;
let clientId: string;
const { challenge } = createPkcePair();

beforeAll(async () => {
  world = await oauthWorld();
  owner = await world.signedIn();
  clientId = await registeredClient(world.s.url);
});
afterAll(() => world.stop());

const path = (overrides: Record<string, string | null> = {}) =>
  authorizePath(world.s.url, clientId, challenge, overrides);

describe("GET /oauth/authorize before the redirect URI is trusted: a page, never a redirect", () => {
  const cases: [string, () => string, RegExp][] = [
    ["no client_id", () => path({ client_id: null }), /names no client/],
    ["an unknown client", () => path({ client_id: "hoc_unknown" }), /not registered/],
    [
      "a redirect URI the client did not register",
      () => path({ redirect_uri: "http://127.0.0.1:8976/other" }),
      /not one the application registered/,
    ],
    [
      "a look-alike redirect URI",
      () => path({ redirect_uri: `${REDIRECT_URI}/` }),
      /not one the application registered/,
    ],
  ];
  for (const [what, make, detail] of cases)
    test(what, async () => {
      const r = await owner.get(make());
      expect(r.status).toBe(400);
      expect(r.location).toBeNull();
      expect(r.headers.get("content-type")).toMatch(/^text\/html/);
      const screen = screenOf(r.text);
      screen.getByRole("heading", { level: 1 });
      expect(screen.text()).toMatch(detail);
    });
});

test("a repeated parameter is 400 and never redirects (the rails refuse repeats on every path)", async () => {
  const r = await owner.get(`${path()}&client_id=${clientId}`);
  expect(r.status).toBe(400);
  expect(r.location).toBeNull();
});

describe("GET /oauth/authorize after the redirect URI is trusted: error= at the redirect URI", () => {
  const cases: [string, Record<string, string | null>, string, RegExp][] = [
    ["another response type", { response_type: "token" }, "unsupported_response_type", /code/],
    ["no PKCE challenge", { code_challenge: null }, "invalid_request", /code_challenge is required/],
    ["the plain PKCE method", { code_challenge_method: "plain" }, "invalid_request", /S256/],
    ["no PKCE method (plain by default)", { code_challenge_method: null }, "invalid_request", /S256/],
    ["a malformed challenge", { code_challenge: "short" }, "invalid_request", /base64url/],
    ["another resource", { resource: "https://elsewhere.example/mcp" }, "invalid_target", /\/mcp/],
    ["the API as resource", { resource: "RESOURCE_V1" }, "invalid_target", /\/mcp/],
    ["an unknown scope", { scope: "posts:read posts:delete" }, "invalid_scope", /posts:delete/],
  ];
  for (const [what, overrides, error, description] of cases)
    test(what, async () => {
      const fixed = { ...overrides };
      if (fixed.resource === "RESOURCE_V1") fixed.resource = `${world.s.url}/v1`;
      // The same answer signed in or not: the request is checked before anyone signs in.
      for (const browser of [owner, new TestBrowser(world.s)]) {
        const r = await browser.get(path(fixed));
        expect(r.status).toBe(303);
        expect(r.location!.startsWith(`${REDIRECT_URI}?`)).toBe(true);
        const params = redirectParams(r.location);
        expect(params.get("error")).toBe(error);
        expect(params.get("error_description")).toMatch(description);
        expect(params.get("state")).toBe("st-123~!*()'");
        expect(params.get("iss")).toBe(world.s.url);
        expect(params.get("code")).toBeNull();
      }
    });
});

describe("signing in and consenting", () => {
  test("a browser without a session goes to the sign-in page and comes back to the same request", async () => {
    const browser = new TestBrowser(world.s);
    const asked = path();
    const r = await browser.get(asked);
    expect(r.status).toBe(303);
    const login = new URL(r.location!, world.s.url);
    expect(login.pathname).toBe("/login");
    const next = login.searchParams.get("next")!;
    const back = new URL(next, world.s.url).searchParams;
    expect(Object.fromEntries(back)).toEqual(Object.fromEntries(new URL(asked, world.s.url).searchParams));
    const signedIn = await browser.submit(
      `/login?next=${encodeURIComponent(next)}`,
      { email: world.owner.email, password: "correct horse battery" },
      "/login",
    );
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe(next);
    const consent = await browser.get(signedIn.location!);
    expect(consent.status).toBe(200);
    screenOf(consent.text).getByRole("heading", { level: 1, name: "Allow “Test assistant” to use Herald?" });
  });

  test("the consent page names the client and where it returns, and offers workspaces and the role's scopes", async () => {
    const r = await owner.get(path());
    expect(r.status).toBe(200);
    expect(r.headers.get("content-security-policy")).toMatch(
      /form-action 'self' http:\/\/127\.0\.0\.1:8976;/,
    );
    const screen = screenOf(r.text);
    screen.getByRole("heading", { level: 1, name: "Allow “Test assistant” to use Herald?" });
    expect(screen.text()).toMatch(/goes back to 127\.0\.0\.1:8976/);
    screen.getByRole("group", { name: "Workspace access" });
    screen.getByRole("radio", { name: /^All workspaces/, checked: true });
    screen.getByRole("checkbox", { name: "Acme", checked: false });
    const permissions = screen.getByRole("group", { name: /^Permissions/ });
    const within = screen.within(permissions);
    // What the client asked for is pre-selected; the rest of the owner's scopes are offered unticked.
    expect(within.namesOf("checkbox", { checked: true })).toEqual([
      "workspaces:read",
      "posts:read",
      "posts:write",
    ]);
    within.getByRole("checkbox", { name: "billing:write", checked: false });
    screen.getByRole("button", { name: "Allow" });
    screen.getByRole("button", { name: "Deny" });
  });

  test("a member is offered only their role's scopes", async () => {
    const member = await world.signedInAs("member");
    const r = await member.get(path({ scope: "workspaces:write posts:write" }));
    const permissions = screenOf(r.text).within(
      screenOf(r.text).getByRole("group", { name: /^Permissions/ }),
    );
    expect(permissions.queryByRole("checkbox", { name: "workspaces:write" })).toBeNull();
    expect(permissions.namesOf("checkbox", { checked: true })).toEqual(["posts:write"]);
    // A scope beyond the role, posted anyway, is refused at its field.
    const posted = await answerConsent(member, path(), [
      ["workspace_access", "all"],
      ["scopes", "workspaces:write"],
      ["decision", "allow"],
    ]);
    expect(posted.status).toBe(400);
    expect(screenOf(posted.text).getByRole("alert").children.length).toBeGreaterThan(0);
    expect(screenOf(posted.text).text()).toMatch(/your role cannot grant workspaces:write/);
  });

  test("Deny sends access_denied to the client with its state", async () => {
    const r = await answerConsent(owner, path(), [["decision", "deny"]]);
    expect(r.status).toBe(303);
    const params = redirectParams(r.location);
    expect(params.get("error")).toBe("access_denied");
    expect(params.get("state")).toBe("st-123~!*()'");
    expect(params.get("iss")).toBe(world.s.url);
  });

  test("Allow without a scope or a selected workspace comes back with the problems at their fields", async () => {
    const r = await answerConsent(owner, path(), [
      ["workspace_access", "selected"],
      ["decision", "allow"],
    ]);
    expect(r.status).toBe(400);
    const screen = screenOf(r.text);
    const alert = screen.getByRole("alert");
    expect(screen.within(alert).namesOf("link")).toEqual([
      "Permissions: choose at least one permission",
      "Workspaces: choose at least one workspace",
    ]);
  });

  test("Allow with a foreign workspace is refused", async () => {
    const r = await answerConsent(owner, path(), [
      ["workspace_access", "selected"],
      ["workspace_ids", world.foreignWorkspaceId],
      ["scopes", "posts:read"],
      ["decision", "allow"],
    ]);
    expect(r.status).toBe(400);
    expect(screenOf(r.text).text()).toMatch(/names a workspace that is not yours/);
  });

  test("Allow redirects with a code, the state and iss", async () => {
    const r = await answerConsent(owner, path(), [
      ["workspace_access", "all"],
      ["scopes", "posts:read"],
      ["decision", "allow"],
    ]);
    expect(r.status).toBe(303);
    const params = redirectParams(r.location);
    expect(params.get("code")).toMatch(/^hk_oac_[A-Za-z0-9]{43}$/);
    expect(params.get("state")).toBe("st-123~!*()'");
    expect(params.get("iss")).toBe(world.s.url);
  });

  test("a consent form without this browser's CSRF token does nothing", async () => {
    const page = await owner.get(path());
    expect(page.status).toBe(200);
    const r = await owner.send("POST", "/oauth/authorize", [
      ...new URLSearchParams(path().split("?")[1]),
      ["csrf_token", "forged"],
      ["workspace_access", "all"],
      ["scopes", "posts:read"],
      ["decision", "allow"],
    ]);
    expect(r.status).toBe(403);
    expect(r.location).toBeNull();
  });

  test("an account whose address is not confirmed cannot allow (creating a credential waits for it)", async () => {
    const email = "unconfirmed-oauth@example.com";
    const made = await bootstrapAccount(world.s.herald, {
      email,
      workspaceName: "Waiting",
      password: PASSWORD,
    });
    const [user] = await world.s.herald.db.select().from(tables.users).where(eq(tables.users.email, email));
    await inTransaction(world.s.herald.db, (tx) =>
      tx.insert(tables.emailConfirmations).values({
        id: newId("emc"),
        userId: user!.id,
        accountId: made.account_id,
        email,
        tokenHash: `unconfirmed-${Date.now()}`,
        createdAt: world.s.clock.now(),
        expiresAt: world.s.clock.now() + 86_400_000,
        confirmedAt: null,
      }),
    );
    const browser = new TestBrowser(world.s);
    await browser.signIn(email, PASSWORD);
    const r = await answerConsent(browser, path(), [
      ["workspace_access", "all"],
      ["scopes", "posts:read"],
      ["decision", "allow"],
    ]);
    expect(r.status).toBe(403);
    expect(r.location).toBeNull();
    screenOf(r.text).getByRole("heading", { level: 1, name: "Confirm your address first" });
  });
});
