// Password sign-in limits (docs/decisions.md, "Issue 26: guard"): per client address a minute, per
// account across addresses in 15 minutes, and a browser that signed in to the account before counts
// only its own failures, so an outsider can slow guessing but never lock the owner's browser out.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootstrapAccount } from "../../src/modules/account/bootstrap.ts";
import { ACCOUNT_FAILURES, ACCOUNT_WINDOW_MS } from "../../src/http/pages/password-attempts.ts";
import { TestBrowser } from "../helpers/browser.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const PASSWORD = "correct horse battery staple";
const EMAIL = "target@example.com";

let s: TestServer;
beforeAll(async () => {
  // The test's requests come from 127.0.0.1, a trusted proxy: X-Forwarded-For names each client.
  s = await startTestServer({
    env: { HERALD_TRUSTED_PROXIES: "127.0.0.1", HERALD_AUTH_FAILURES_PER_MINUTE: "3" },
  });
  await bootstrapAccount(s.herald, { email: EMAIL, workspaceName: "T", password: PASSWORD });
  await bootstrapAccount(s.herald, {
    email: "bystander@example.com",
    workspaceName: "B",
    password: PASSWORD,
  });
});
afterAll(async () => {
  await s.stop();
});

/** A browser at client address `address`. */
function browserAt(address: string): TestBrowser {
  const browser = new TestBrowser(s);
  browser.headers["x-forwarded-for"] = address;
  return browser;
}

const signIn = (browser: TestBrowser, email: string, password: string) =>
  browser.submit("/login", { email, password }, "/login");

describe("per account, across addresses", () => {
  test("the owner's browser signs in first and is remembered", async () => {
    const owner = browserAt("198.51.100.200");
    expect((await signIn(owner, EMAIL, PASSWORD)).status).toBe(303);
    expect(owner.cookies.has("herald_known")).toBe(true);
    ownerBrowser = owner;
    // Signing out keeps the browser known.
    ownerBrowser.cookies.delete("herald_session");
  });

  test(`${ACCOUNT_FAILURES} wrong passwords from as many addresses stop new browsers, even with the right password`, async () => {
    for (let i = 0; i < ACCOUNT_FAILURES; i++)
      expect((await signIn(browserAt(`203.0.113.${i + 1}`), EMAIL, `wrong-guess-${i}`)).status).toBe(400);
    const fresh = await signIn(browserAt("203.0.113.100"), EMAIL, PASSWORD);
    expect(fresh.status).toBe(429);
    expect(Number(fresh.headers.get("retry-after"))).toBeGreaterThan(60);
    expect(fresh.text).toContain("sign in from a browser you used before, or reset the password");
    // Other accounts are not affected, and the address is not limited for them.
    expect((await signIn(browserAt("203.0.113.100"), "bystander@example.com", PASSWORD)).status).toBe(303);
  });

  test("the owner's known browser still signs in, from an address over its own limit too", async () => {
    for (let i = 0; i < 3; i++)
      await signIn(browserAt("198.51.100.200"), "nobody@example.com", `wrong-guess-${i}`);
    expect((await signIn(browserAt("198.51.100.200"), "bystander@example.com", PASSWORD)).status).toBe(429);
    const owner = await signIn(ownerBrowser, EMAIL, PASSWORD);
    expect(owner.status).toBe(303);
    expect(owner.location).toBe("/dashboard");
  });

  test("a known browser's own failures are limited too, without checking the password", async () => {
    ownerBrowser.cookies.delete("herald_session");
    for (let i = 0; i < 3; i++)
      expect((await signIn(ownerBrowser, EMAIL, `typo-${i}-typo`)).status).toBe(400);
    expect((await signIn(ownerBrowser, EMAIL, PASSWORD)).status).toBe(429);
  });

  test("a forged or foreign cookie does not make a browser known", async () => {
    const forged = browserAt("203.0.113.151");
    forged.cookies.set("herald_known", "abc.def");
    expect((await signIn(forged, EMAIL, PASSWORD)).status).toBe(429);
    const bystander = browserAt("203.0.113.152");
    expect((await signIn(bystander, "bystander@example.com", PASSWORD)).status).toBe(303);
    bystander.cookies.delete("herald_session");
    expect((await signIn(bystander, EMAIL, PASSWORD)).status).toBe(429);
  });

  test("the account's limit ends with its window", async () => {
    s.clock.advance(ACCOUNT_WINDOW_MS);
    expect((await signIn(browserAt("203.0.113.101"), EMAIL, PASSWORD)).status).toBe(303);
  });
});

let ownerBrowser: TestBrowser;

describe("on https", () => {
  test("the known-browser cookie is read under its __Host- name", async () => {
    const secure = await startTestServer({
      env: { HERALD_TRUSTED_PROXIES: "127.0.0.1", HERALD_AUTH_FAILURES_PER_MINUTE: "3" },
    });
    try {
      // Served behind a TLS proxy: the base URL says https, so every page cookie is __Host-.
      secure.herald.config.baseUrl = "https://herald.example";
      await bootstrapAccount(secure.herald, { email: EMAIL, workspaceName: "T", password: PASSWORD });
      const at = (address: string) => {
        const browser = new TestBrowser(secure);
        browser.headers["x-forwarded-for"] = address;
        return browser;
      };
      const owner = at("198.51.100.7");
      expect((await signIn(owner, EMAIL, PASSWORD)).status).toBe(303);
      expect(owner.cookies.has("__Host-herald_known")).toBe(true);
      owner.cookies.delete("__Host-herald_session");
      for (let i = 0; i < ACCOUNT_FAILURES; i++)
        expect((await signIn(at(`203.0.113.${i + 1}`), EMAIL, `wrong-guess-${i}`)).status).toBe(400);
      expect((await signIn(at("203.0.113.100"), EMAIL, PASSWORD)).status).toBe(429);
      expect((await signIn(owner, EMAIL, PASSWORD)).status).toBe(303);
    } finally {
      await secure.stop();
    }
  });
});
