import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { tables } from "../helpers/tables.ts";
import { sha256Hex } from "../../src/lib/crypto.ts";
import { bootstrapAccount } from "../../src/modules/account/bootstrap.ts";
import { DASHBOARD_CSP } from "../../src/http/dashboard/router.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { csrfTokenOf, TestBrowser, pathOf } from "../helpers/browser.ts";

const { sessions } = tables;

const PASSWORD = "correct horse battery";

let s: TestServer;
const person = { email: "pages@example.com", accountId: "", workspaceId: "" };
beforeAll(async () => {
  s = await startTestServer({ env: { HERALD_SIGNUP_REQUESTS_PER_HOUR: "1000" } });
  const made = await bootstrapAccount(s.herald, {
    email: person.email,
    workspaceName: "Pages Inc",
    password: PASSWORD,
  });
  person.accountId = made.account_id;
  person.workspaceId = made.workspace_id;
});
afterAll(async () => {
  await s.stop();
});

const signupUrl = async () => {
  const r = await s.request("POST", "/v1/signup-intents", {
    key: null,
    body: { email: `someone-${crypto.randomUUID()}@example.com`, workspace_name: "Fresh" },
  });
  expect(r.status).toBe(201);
  return pathOf(r.body.signup_url);
};

async function signedIn(): Promise<TestBrowser> {
  const browser = new TestBrowser(s);
  await browser.signIn(person.email, PASSWORD);
  return browser;
}

/** Checks what every page must be: headers, language, labels, local assets only, CSRF on its forms. */
function expectWellFormedPage(path: string, r: { status: number; headers: Headers; text: string }) {
  const where = { path };
  // The dashboard's pages may load its own script (test/dashboard checks them); the others load none.
  const dashboard = path.startsWith("/dashboard");
  expect({ ...where, type: r.headers.get("content-type") }).toEqual({
    ...where,
    type: "text/html; charset=utf-8",
  });
  expect(r.headers.get("cache-control")).toBe("no-store");
  expect(r.headers.get("content-security-policy")).toBe(
    dashboard
      ? DASHBOARD_CSP
      : "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  expect(r.headers.get("x-frame-options")).toBe("DENY");
  expect(r.headers.get("referrer-policy")).toBe("no-referrer");
  expect(r.headers.get("x-content-type-options")).toBe("nosniff");
  expect(r.headers.get("service-request-id")).toBeTruthy();
  expect(r.text).toStartWith("<!doctype html>");
  expect(r.text).toContain('<html lang="en">');
  expect(r.text).toMatch(/<title>[^<]+ · Herald<\/title>/);
  expect(r.text).toContain("<main");
  if (dashboard) expect(r.text).not.toMatch(/<script(?! src="\/pages\/dashboard\.js" defer><\/script>)/i);
  else expect(r.text).not.toMatch(/<script/i);
  expect(r.text).not.toMatch(/\sstyle=/i);
  for (const [, url] of r.text.matchAll(/\b(?:src|href|action)="([^"]*)"/g))
    expect({ ...where, url }).toEqual({ ...where, url: expect.stringMatching(/^(\/(?!\/)|#)/) });
  // Every visible control has a label; every form posts, with a CSRF token.
  for (const [, id] of r.text.matchAll(/<(?:input|select) id="([^"]+)"/g))
    expect({ ...where, labelled: r.text.includes(`<label for="${id}">`) }).toEqual({
      ...where,
      labelled: true,
    });
  for (const input of r.text.matchAll(/<input [^>]*>/g)) {
    if (input[0].includes('type="hidden"')) continue;
    expect({ ...where, input: input[0], hasId: /\sid="/.test(input[0]) }).toMatchObject({ hasId: true });
  }
  for (const [form] of r.text.matchAll(/<form[\s\S]*?<\/form>/g)) {
    expect({ ...where, post: form.startsWith('<form method="post"') }).toEqual({ ...where, post: true });
    expect({ ...where, csrf: form.includes('name="csrf_token"') }).toEqual({ ...where, csrf: true });
  }
}

describe("every page", () => {
  test("is HTML with the security headers, labelled controls, local assets only and CSRF on each form", async () => {
    const visitor = new TestBrowser(s);
    const anonymous = ["/login", "/signup", await signupUrl()];
    for (const path of anonymous) {
      const r = await visitor.get(path);
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
      expectWellFormedPage(path, r);
    }
    const started = (
      await s.request("POST", "/v1/cli-authorizations", { key: null, body: { device_name: "<b>laptop</b>" } })
    ).body;
    const browser = await signedIn();
    for (const path of ["/dashboard", "/device", "/logout", pathOf(started.verification_uri_complete)]) {
      const r = await browser.get(path);
      expect({ path, status: r.status }).toEqual({ path, status: 200 });
      expectWellFormedPage(path, r);
    }
    // Text from the API is escaped, never markup.
    const question = await browser.get(pathOf(started.verification_uri_complete));
    expect(question.text).toContain("&#60;b&#62;laptop&#60;/b&#62;");
    expect(question.text).not.toContain("<b>laptop</b>");
  });

  test("the stylesheet is Herald's own, with a visible focus style", async () => {
    const r = await fetch(`${s.url}/pages/herald.css`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/css; charset=utf-8");
    const css = await r.text();
    expect(css).toContain(":focus-visible");
    expect(css).toContain("outline: 3px solid");
    expect(css).not.toMatch(/@import|url\(/);
  });
});

describe("cookies and CSRF", () => {
  test("a first visit gets the CSRF cookie: HttpOnly, SameSite=Lax, not Secure on an http base URL", async () => {
    const browser = new TestBrowser(s);
    const r = await browser.get("/login");
    expect(r.setCookies).toHaveLength(1);
    expect(r.setCookies[0]).toMatch(/^herald_csrf=[A-Za-z0-9]{32}; Path=\/; HttpOnly; SameSite=Lax$/);
    // Known browsers keep their key.
    expect((await browser.get("/login")).setCookies).toEqual([]);
  });

  test("the session cookie is HttpOnly, SameSite=Lax, lasts 7 days, and its token is stored hashed", async () => {
    const browser = new TestBrowser(s);
    const r = await browser.signIn(person.email, PASSWORD);
    expect(r.location).toBe("/dashboard");
    const line = r.setCookies.find((c) => c.startsWith("herald_session="))!;
    expect(line).toMatch(/^herald_session=[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);
    const token = browser.cookies.get("herald_session")!;
    const [row] = await s.herald.db
      .select()
      .from(sessions)
      .where(eq(sessions.tokenHash, sha256Hex(token)));
    expect(row).toMatchObject({ accountId: person.accountId, revokedAt: null });
    expect(JSON.stringify(row)).not.toContain(token);
  });

  test("cookies are Secure and __Host- prefixed when HERALD_BASE_URL is https", async () => {
    const base = s.herald.config.baseUrl;
    s.herald.config.baseUrl = "https://herald.example";
    try {
      const browser = new TestBrowser(s);
      const first = await browser.get("/login");
      expect(first.setCookies[0]).toStartWith("__Host-herald_csrf=");
      expect(first.setCookies[0]).toEndWith("; HttpOnly; SameSite=Lax; Secure");
      const signIn = await browser.signIn(person.email, PASSWORD);
      expect(signIn.setCookies.find((c) => c.startsWith("__Host-herald_session="))).toMatch(
        /; Path=\/; HttpOnly; SameSite=Lax; Secure; Max-Age=604800$/,
      );
    } finally {
      s.herald.config.baseUrl = base;
    }
  });

  test("a form without this browser's token is refused with 403 and changes nothing", async () => {
    const stranger = new TestBrowser(s);
    const strangersToken = csrfTokenOf((await stranger.get("/login")).text);
    const browser = new TestBrowser(s);
    await browser.get("/login");
    const attempts: Record<string, string>[] = [
      { email: person.email, password: PASSWORD },
      { email: person.email, password: PASSWORD, csrf_token: "forged" },
      { email: person.email, password: PASSWORD, csrf_token: strangersToken },
    ];
    for (const form of attempts) {
      const r = await browser.post("/login", form);
      expect(r.status).toBe(403);
      expect(r.text).toContain("This form cannot be used");
      expect(r.setCookies.filter((c) => c.startsWith("herald_session"))).toEqual([]);
    }
    // A token without its cookie (another site posting with a token it saw) is refused too.
    const cookieless = await fetch(`${s.url}/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf_token: strangersToken, email: person.email, password: PASSWORD }),
    });
    expect(cookieless.status).toBe(403);
  });

  test("a form body above 16 KiB is not read: refused like a form without a token", async () => {
    const browser = new TestBrowser(s);
    const token = csrfTokenOf((await browser.get("/login")).text);
    const r = await browser.post("/login", {
      csrf_token: token,
      email: person.email,
      password: PASSWORD,
      padding: "x".repeat(17 * 1024),
    });
    expect(r.status).toBe(403);
  });

  test("a token issued before sign-in does not work in the session (tokens are bound to it)", async () => {
    const browser = new TestBrowser(s);
    const before = csrfTokenOf((await browser.get("/login")).text);
    await browser.signIn(person.email, PASSWORD);
    const r = await browser.post("/logout", { csrf_token: before });
    expect(r.status).toBe(403);
    expect((await browser.get("/dashboard")).status).toBe(200);
  });

  test("signup and device forms refuse a missing token too", async () => {
    const visitor = new TestBrowser(s);
    const path = await signupUrl();
    await visitor.get(path);
    const signup = await visitor.post(path, {
      name: "X",
      password: PASSWORD,
      password_confirmation: PASSWORD,
    });
    expect(signup.status).toBe(403);
    expect((await visitor.get(path)).status).toBe(200); // the link was not used up
    const browser = await signedIn();
    expect((await browser.post("/device", { user_code: "BCDF-GHJK", decision: "approve" })).status).toBe(403);
  });
});

describe("/login and /logout", () => {
  test("a wrong password, an unknown address and a user without password all fail alike: 400, no session", async () => {
    await s.bootstrap("nopassword@example.com");
    for (const [email, password] of [
      [person.email, "wrong password!"],
      ["nobody@example.com", PASSWORD],
      ["nopassword@example.com", PASSWORD],
    ]) {
      const browser = new TestBrowser(s);
      const r = await browser.submit("/login", { email: email!, password: password! }, "/login");
      expect(r.status).toBe(400);
      expect(r.text).toContain("The e-mail address or the password is not right.");
      expect(r.text).toContain('aria-invalid="true"');
      expect(r.text).toContain(`value="${email}"`);
      expect(browser.cookies.has("herald_session")).toBe(false);
    }
  });

  test("the address is matched in any case", async () => {
    const browser = new TestBrowser(s);
    const r = await browser.submit("/login", { email: "Pages@Example.com", password: PASSWORD }, "/login");
    expect(r.status).toBe(303);
  });

  test("next leads back to a page of this server only", async () => {
    for (const [next, location] of [
      ["/device?user_code=BCDF-GHJK", "/device?user_code=BCDF-GHJK"],
      ["https://evil.example/", "/dashboard"],
      ["//evil.example/", "/dashboard"],
      ["/\\evil.example", "/dashboard"],
      ["javascript:alert(1)", "/dashboard"],
    ]) {
      const browser = new TestBrowser(s);
      const r = await browser.submit(
        "/login",
        { email: person.email, password: PASSWORD, next: next! },
        "/login",
      );
      expect({ next, location: r.location }).toEqual({ next, location });
    }
  });

  test("signed in, /login goes on to the dashboard", async () => {
    const browser = await signedIn();
    const r = await browser.get("/login");
    expect(r.status).toBe(303);
    expect(r.location).toBe("/dashboard");
  });

  test("sign-out revokes the session and clears its cookie", async () => {
    const browser = await signedIn();
    const token = browser.cookies.get("herald_session")!;
    const page = await browser.get("/logout");
    expect(page.status).toBe(200);
    const r = await browser.submit("/logout", {}, "/logout");
    expect(r.status).toBe(303);
    expect(r.location).toBe("/login?signed_out=1");
    expect(r.setCookies).toContain("herald_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0");
    const [row] = await s.herald.db
      .select()
      .from(sessions)
      .where(eq(sessions.tokenHash, sha256Hex(token)));
    expect(row!.revokedAt).toBe(s.clock.now());
    // The old cookie is worth nothing now.
    browser.cookies.set("herald_session", token);
    const after = await browser.get("/dashboard");
    expect(after.status).toBe(303);
    expect(after.location).toBe("/login?next=%2Fdashboard");
    expect((await browser.get("/login?signed_out=1")).text).toContain("You are signed out.");
  });

  test("/logout without a session goes to /login", async () => {
    const r = await new TestBrowser(s).get("/logout");
    expect(r.status).toBe(303);
    expect(r.location).toBe("/login");
  });

  test("sessions end after 7 days", async () => {
    const browser = await signedIn();
    expect((await browser.get("/dashboard")).status).toBe(200);
    s.clock.advance(7 * 24 * 60 * 60 * 1000);
    expect((await browser.get("/dashboard")).status).toBe(303);
  });
});

describe("/dashboard and /device", () => {
  test("the dashboard needs a session and shows the account and its workspaces", async () => {
    const anonymous = await new TestBrowser(s).get("/dashboard");
    expect(anonymous.status).toBe(303);
    const browser = await signedIn();
    const r = await browser.get("/dashboard");
    expect(r.status).toBe(200);
    expect(r.text).toContain("Pages Inc");
    expect(r.text).toContain(person.workspaceId);
    expect(r.text).toContain("Signed in as pages@example.com");
    expect(r.text).not.toContain("Send the link again"); // bootstrap's owner needs no confirmation
  });

  test("/device asks for the code; a typed code in any case and without the dash finds the request", async () => {
    const started = (
      await s.request("POST", "/v1/cli-authorizations", { key: null, body: { device_name: "pc" } })
    ).body;
    const code = new URL(started.verification_uri_complete).searchParams.get("user_code")!;
    const browser = await signedIn();
    const form = await browser.get("/device");
    expect(form.text).toContain('<label for="user_code">Code</label>');
    const r = await browser.submit("/device", { user_code: code.replace("-", " ").toLowerCase() }, "/device");
    expect(r.status).toBe(200);
    expect(r.text).toContain("Sign in the Herald command line?");
    expect(r.text).toContain(code);
    const wrong = await browser.submit("/device", { user_code: "BBBB-BBBB" }, "/device");
    expect(wrong.status).toBe(404);
    expect(wrong.text).toContain("not valid or has expired");
    const nonsense = await browser.submit("/device", { user_code: "hello" }, "/device");
    expect(nonsense.status).toBe(404);
  });

  test("without a session, posting the code form leads to sign-in", async () => {
    const r = await new TestBrowser(s).post("/device", { user_code: "BCDF-GHJK" });
    expect(r.status).toBe(303);
    expect(r.location).toBe("/login?next=%2Fdevice");
  });
});

describe("guessing", () => {
  let g: TestServer;
  beforeAll(async () => {
    g = await startTestServer({ env: { HERALD_AUTH_FAILURES_PER_MINUTE: "3" } });
    await bootstrapAccount(g.herald, { email: "guess@example.com", workspaceName: "G", password: PASSWORD });
  });
  afterAll(async () => {
    await g.stop();
  });

  test("past the failed sign-ins of a minute, even the right password is 429 until the minute ends", async () => {
    const browser = new TestBrowser(g);
    for (let i = 0; i < 3; i++)
      expect(
        (await browser.submit("/login", { email: "guess@example.com", password: `nope-${i}-nope` }, "/login"))
          .status,
      ).toBe(400);
    const blocked = await browser.submit(
      "/login",
      { email: "guess@example.com", password: PASSWORD },
      "/login",
    );
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("retry-after")).toBe("60");
    g.clock.advance(60_000);
    expect(
      (await browser.submit("/login", { email: "guess@example.com", password: PASSWORD }, "/login")).status,
    ).toBe(303);
  });

  test("wrong codes on /device are limited per session", async () => {
    const browser = new TestBrowser(g);
    await browser.signIn("guess@example.com", PASSWORD);
    for (let i = 0; i < 3; i++)
      expect((await browser.submit("/device", { user_code: "BBBB-BBBB" }, "/device")).status).toBe(404);
    const blocked = await browser.submit("/device", { user_code: "BBBB-BBBB" }, "/device");
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // The code in the address (verification_uri_complete) counts the same way.
    expect((await browser.get("/device?user_code=CCCC-CCCC")).status).toBe(429);
  });
});
