// The front door (issue 26): `/` by kind of client, the first-run /setup with its one-time token, who
// may sign up (the installation's setting, HERALD_SIGNUP over it), /signup and the links of /login.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { tables } from "../helpers/tables.ts";
import { TestBrowser, csrfTokenOf, hiddenFields } from "../helpers/browser.ts";
import { expectProblem } from "../helpers/problems.ts";
import { screenOf } from "../helpers/screen.ts";
import {
  type EmptyTestServer,
  startEmptyTestServer,
  startTestServer,
  type TestServer,
} from "../helpers/server.ts";
import { issueSetupToken } from "../../src/modules/installation/service.ts";
import type { MailMessage } from "../../src/modules/mail/transport.ts";

const { accounts, installationSettings, users, workspaces } = tables;

const PASSWORD = "a long enough password";
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** What a person sees first on a page: its level-one heading. */
const headingOf = (html: string) => screenOf(html).nameOf(screenOf(html).getByRole("heading", { level: 1 }));

const setupFields = (overrides: Record<string, string> = {}) => ({
  email: "Owner@Example.com",
  name: "Ada Lovelace",
  workspace_name: "Launch",
  password: PASSWORD,
  password_confirmation: PASSWORD,
  ...overrides,
});

async function getRoot(url: string, headers: Record<string, string> = {}) {
  return fetch(`${url}/`, { headers, redirect: "manual" });
}

/** POST /v1/signup-intents without a key, as a stranger's client sends it. */
async function signupIntent(s: { url: string }, email: string) {
  const r = await fetch(`${s.url}/v1/signup-intents`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, workspace_name: "Theirs" }),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, text, body: JSON.parse(text) };
}

describe("GET / on an empty installation, then through /setup", () => {
  let s: EmptyTestServer;
  beforeAll(async () => {
    s = await startEmptyTestServer();
  });
  afterAll(async () => {
    await s.stop();
  });

  test("any client but a browser gets the service as JSON", async () => {
    const accepts: Record<string, string>[] = [
      {},
      { accept: "application/json" },
      { accept: "*/*" },
      { accept: "text/html;q=0" },
    ];
    for (const headers of accepts) {
      const r = await getRoot(s.url, headers);
      expect({ headers, status: r.status }).toEqual({ headers, status: 200 });
      expect(r.headers.get("content-type")).toStartWith("application/json");
      expect(await r.json()).toEqual({
        object: "service",
        name: "herald",
        version: s.herald.version,
        api_base: `${s.url}/v1`,
        docs_url: `${s.url}/v1/docs`,
      });
    }
  });

  test("a browser is sent to /setup while no account exists; /setup without a token says where the link is", async () => {
    const r = await getRoot(s.url, { accept: BROWSER_ACCEPT });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe("/setup");
    const page = await new TestBrowser(s).get("/setup");
    expect(page.status).toBe(200);
    expect(headingOf(page.text)).toBe("Open the setup link");
    expect(screenOf(page.text).text()).toContain("herald admin setup-link");
  });

  test("a wrong token is refused; a new token replaces the earlier one", async () => {
    const browser = new TestBrowser(s);
    const wrong = await browser.get(`/setup?token=${"x".repeat(43)}`);
    expect(wrong.status).toBe(404);
    expect(headingOf(wrong.text)).toBe("This setup link is not valid");
    const first = (await issueSetupToken(s.herald))!;
    expect((await browser.get(`/setup?token=${first}`)).status).toBe(200);
    const second = (await issueSetupToken(s.herald))!;
    const replaced = await browser.get(`/setup?token=${first}`);
    expect(replaced.status).toBe(404);
    expect((await browser.get(`/setup?token=${second}`)).status).toBe(200);
    // Stored hashed only.
    const [row] = await s.herald.db.select().from(installationSettings);
    expect(row!.setupTokenHash).not.toContain(second);
    expect(row!.setupTokenHash).toMatch(/^[0-9a-f]{64}$/);
  });

  test("the form: fields with labels, 'only people I invite' preselected; errors are shown by field", async () => {
    const token = (await issueSetupToken(s.herald))!;
    const browser = new TestBrowser(s);
    const page = await browser.get(`/setup?token=${token}`);
    const screen = screenOf(page.text);
    expect(headingOf(page.text)).toBe("Set up Herald");
    for (const label of ["E-mail address", "Name", "First workspace", "Password", "Password again"])
      expect(screen.getByLabelText(label)).toBeDefined();
    expect(screen.getByRole("group", { name: "Who may sign up?" })).toBeDefined();
    expect(screen.getByRole("radio", { name: "Only people I invite", checked: true })).toBeDefined();
    expect(screen.getByRole("radio", { name: "Anyone", checked: false })).toBeDefined();
    const bad = await browser.post("/setup", {
      ...hiddenFields(page.text, "/setup"),
      ...setupFields({ email: "not an address", password_confirmation: "something else entirely" }),
      signup: "closed",
    });
    expect(bad.status).toBe(400);
    const alert = screenOf(bad.text).getByRole("alert");
    expect(screenOf(bad.text).within(alert).namesOf("link")).toEqual([
      "Enter an e-mail address like name@example.com.",
      "The two passwords differ.",
    ]);
    expect(await s.herald.db.select().from(accounts)).toEqual([]);
  });

  test("completing it makes one owner, signs in, stores 'invite only'; the link and the page are gone after", async () => {
    const token = (await issueSetupToken(s.herald))!;
    const browser = new TestBrowser(s);
    const page = await browser.get(`/setup?token=${token}`);
    const done = await browser.post("/setup", {
      ...hiddenFields(page.text, "/setup"),
      ...setupFields(),
      signup: "closed",
    });
    expect(done.status).toBe(303);
    expect(done.location).toBe("/dashboard?welcome=setup");
    expect(done.setCookies.some((c) => c.startsWith("herald_session="))).toBe(true);
    const dashboard = await browser.get(done.location!);
    expect(dashboard.status).toBe(200);
    expect(screenOf(dashboard.text).getByRole("status").children.length).toBeGreaterThan(0);
    expect(screenOf(dashboard.text).text()).toContain("Herald is set up.");

    const people = await s.herald.db.select().from(users);
    expect(people.map((u) => ({ email: u.email, role: u.role }))).toEqual([
      { email: "owner@example.com", role: "owner" },
    ]);
    expect((await s.herald.db.select().from(workspaces)).map((w) => w.name)).toEqual(["Launch"]);
    const [settings] = await s.herald.db.select().from(installationSettings);
    expect(settings).toMatchObject({ signupPolicy: "closed", setupTokenHash: null });

    // Signed in, / goes to the dashboard; another browser goes to /login.
    const cookies = [...browser.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const signedIn = await getRoot(s.url, { accept: BROWSER_ACCEPT, cookie: cookies });
    expect(signedIn.headers.get("location")).toBe("/dashboard");
    const stranger = await getRoot(s.url, { accept: BROWSER_ACCEPT });
    expect(stranger.headers.get("location")).toBe("/login");

    // The used token, a fresh one, and /setup itself answer "already set up".
    const again = await new TestBrowser(s).get(`/setup?token=${token}`);
    expect(again.status).toBe(410);
    expect(headingOf(again.text)).toBe("Herald is already set up");
    expect((await new TestBrowser(s).get("/setup")).status).toBe(410);
    expect(await issueSetupToken(s.herald)).toBeNull();
    // A form sent after setup (from another browser, with a valid CSRF token) makes no second owner.
    const late = new TestBrowser(s);
    const lateCsrf = csrfTokenOf((await late.get("/login")).text);
    const replay = await late.post("/setup", {
      csrf_token: lateCsrf,
      token,
      ...setupFields({ email: "second@example.com" }),
      signup: "open",
    });
    expect(replay.status).toBe(410);
    expect((await s.herald.db.select().from(users)).length).toBe(1);

    // Signup is closed now: the API, /signup and /login say so; the owner sees it on the Server page.
    await expectProblem(await signupIntent(s, "stranger@example.com"), 403, "public_signup_closed");
    const closed = await new TestBrowser(s).get("/signup");
    expect(closed.status).toBe(403);
    expect(headingOf(closed.text)).toBe("Signup is closed");
    const login = screenOf((await new TestBrowser(s).get("/login")).text);
    expect(login.queryByRole("link", { name: "Create an account" })).toBeNull();
    expect(login.getByRole("link", { name: "Forgot your password?" })).toBeDefined();
    expect(login.text()).toContain("by invitation");
  });
});

describe("two setups at once", () => {
  let s: EmptyTestServer;
  beforeAll(async () => {
    s = await startEmptyTestServer();
  });
  afterAll(async () => {
    await s.stop();
  });

  test("with the same token: exactly one makes the owner, the other is told it is set up", async () => {
    const token = (await issueSetupToken(s.herald))!;
    const browsers = [new TestBrowser(s), new TestBrowser(s), new TestBrowser(s)];
    const pages = await Promise.all(browsers.map((b) => b.get(`/setup?token=${token}`)));
    const answers = await Promise.all(
      browsers.map((b, i) =>
        b.post("/setup", {
          ...hiddenFields(pages[i]!.text, "/setup"),
          ...setupFields({ email: `racer${i}@example.com` }),
          signup: "open",
        }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([303, 410, 410]);
    expect((await s.herald.db.select().from(users)).length).toBe(1);
    expect((await s.herald.db.select().from(accounts)).length).toBe(1);
  });
});

describe("HERALD_SIGNUP decides over the installation's setting", () => {
  let s: EmptyTestServer;
  beforeAll(async () => {
    s = await startEmptyTestServer({ env: { HERALD_SIGNUP: "open" } });
  });
  afterAll(async () => {
    await s.stop();
  });

  test("setup does not ask; the Server page says the variable decides and offers no change", async () => {
    const token = (await issueSetupToken(s.herald))!;
    const browser = new TestBrowser(s);
    const page = await browser.get(`/setup?token=${token}`);
    const screen = screenOf(page.text);
    expect(screen.queryByRole("radio", { name: "Only people I invite" })).toBeNull();
    expect(screen.text()).toContain("HERALD_SIGNUP=open");
    const done = await browser.post("/setup", { ...hiddenFields(page.text, "/setup"), ...setupFields() });
    expect(done.status).toBe(303);
    const server = await browser.get("/dashboard/server");
    expect(server.status).toBe(200);
    const settings = screenOf(server.text);
    expect(settings.text()).toContain("HERALD_SIGNUP=open is set in the server's environment");
    expect(settings.queryByRole("button", { name: "Save" })).toBeNull();
    // The stored choice is the variable's; switching the variable to closed wins over it.
    expect((await signupIntent(s, "a@example.com")).status).toBe(201);
    s.herald.config.signup = "closed";
    try {
      await expectProblem(await signupIntent(s, "b@example.com"), 403, "public_signup_closed");
      expect((await browser.get("/signup")).status).toBe(403);
    } finally {
      s.herald.config.signup = "open";
    }
  });
});

describe("an installation made by admin bootstrap (signup never chosen: open)", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { HERALD_SIGNUP_REQUESTS_PER_HOUR: "1000" } });
  });
  afterEach(() => {
    s.herald.config.signup = null;
  });
  afterAll(async () => {
    await s.stop();
  });

  test("/login links to /signup and /password-reset; /signup continues to the intent's page", async () => {
    const browser = new TestBrowser(s);
    const login = screenOf((await browser.get("/login")).text);
    expect(login.getByRole("link", { name: "Create an account" })).toBeDefined();
    expect(login.getByRole("link", { name: "Forgot your password?" })).toBeDefined();
    const start = await browser.get("/signup");
    expect(start.status).toBe(200);
    expect(headingOf(start.text)).toBe("Create a Herald account");
    const screen = screenOf(start.text);
    expect(screen.getByLabelText("E-mail address")).toBeDefined();
    expect(screen.getByLabelText("First workspace")).toBeDefined();
    const next = await browser.submit("/signup", { email: "New.Person@example.com", workspace_name: "Mine" });
    expect(next.status).toBe(303);
    expect(next.location).toMatch(/^\/signup\/[A-Za-z0-9_-]{20,}$/);
    const form = await browser.get(next.location!);
    expect(form.status).toBe(200);
    expect(screenOf(form.text).definitions()).toMatchObject({
      "E-mail address": "new.person@example.com",
      "First workspace": "Mine",
    });
  });

  test("/signup names what is wrong: a bad address, an empty workspace, an address with an account", async () => {
    const browser = new TestBrowser(s);
    const bad = await browser.submit("/signup", { email: "nope", workspace_name: "" });
    expect(bad.status).toBe(400);
    const alert = screenOf(bad.text).getByRole("alert");
    expect(screenOf(bad.text).within(alert).namesOf("link")).toEqual([
      "Enter an e-mail address like name@example.com.",
      "Enter a name of 1 to 200 characters.",
    ]);
    const [owner] = await s.herald.db.select().from(users);
    const taken = await browser.submit("/signup", { email: owner!.email, workspace_name: "Again" });
    expect(taken.status).toBe(409);
    const screen = screenOf(taken.text);
    expect(screen.within(screen.getByRole("alert")).namesOf("link")).toEqual([
      "This address already has an account.",
    ]);
    expect(screen.getByRole("link", { name: "Sign in with that address" })).toBeDefined();
  });

  test("the Server page is for the first account's owners; choosing 'only people I invite' closes signup", async () => {
    const ownerEmail = "first.owner@example.com";
    // The first account is the bootstrap's; give its owner a password to sign in with.
    const [first] = await s.herald.db.select().from(users);
    const { eq } = await import("drizzle-orm");
    const hash = await Bun.password.hash(PASSWORD);
    const { inTransaction } = await import("../../src/db/transaction.ts");
    await inTransaction(s.herald.db, (tx) =>
      tx.update(users).set({ email: ownerEmail, passwordHash: hash }).where(eq(users.id, first!.id)),
    );
    const owner = new TestBrowser(s);
    await owner.signIn(ownerEmail, PASSWORD);
    const page = await owner.get("/dashboard/server");
    expect(page.status).toBe(200);
    const screen = screenOf(page.text);
    expect(screen.getByRole("navigation", { name: "Dashboard" })).toBeDefined();
    expect(screen.getByRole("link", { name: "Server" })).toBeDefined();
    expect(screen.getByRole("radio", { name: "Anyone", checked: true })).toBeDefined();
    expect(screen.text()).toContain("Mail is not configured");
    const saved = await owner.submit("/dashboard/server", { signup: "closed" }, "/dashboard/server/signup");
    expect(saved.status).toBe(303);
    const after = screenOf((await owner.get(saved.location!)).text);
    expect(after.getByRole("status").children.length).toBeGreaterThan(0);
    expect(after.getByRole("radio", { name: "Only people I invite", checked: true })).toBeDefined();
    await expectProblem(await signupIntent(s, "late@example.com"), 403, "public_signup_closed");
    expect((await new TestBrowser(s).get("/signup")).status).toBe(403);
    // Invitations still work while signup is closed.
    const invited = await s.request("POST", "/v1/account/invitations", {
      headers: { "idempotency-key": "invite-while-closed" },
      body: { email: "invited@example.com", role: "member" },
    });
    expect(invited.status).toBe(201);

    // The owner of another account (a stranger's, from open signup) may not change it.
    await s.bootstrap("other.owner@example.com", "Other");
    const [other] = await s.herald.db.select().from(users).where(eq(users.email, "other.owner@example.com"));
    await inTransaction(s.herald.db, (tx) =>
      tx.update(users).set({ passwordHash: hash }).where(eq(users.id, other!.id)),
    );
    const stranger = new TestBrowser(s);
    await stranger.signIn("other.owner@example.com", PASSWORD);
    const refused = await stranger.get("/dashboard/server");
    expect(refused.status).toBe(403);
    const overview = (await stranger.get("/dashboard")).text;
    expect(screenOf(overview).queryByRole("link", { name: "Server" })).toBeNull();
    const posted = await stranger.post("/dashboard/server/signup", {
      csrf_token: csrfTokenOf(overview),
      signup: "open",
    });
    expect(posted.status).toBe(403);
    await expectProblem(await signupIntent(s, "later@example.com"), 403, "public_signup_closed");
  });
});

describe("signup pages never promise an e-mail that is not sent (issue 26, item 3)", () => {
  test("without SMTP: no 'we will send a link'; with SMTP it is said and sent", async () => {
    const quiet = await startTestServer({ env: { HERALD_SIGNUP_REQUESTS_PER_HOUR: "1000" } });
    const sent: MailMessage[] = [];
    const mailing = await startTestServer({
      env: { HERALD_SIGNUP_REQUESTS_PER_HOUR: "1000" },
      mail: { send: async (message) => void sent.push(message) },
    });
    try {
      for (const [s, promised] of [
        [quiet, false],
        [mailing, true],
      ] as const) {
        const browser = new TestBrowser(s);
        const start = screenOf((await browser.get("/signup")).text).text();
        const next = await browser.submit("/signup", { email: "someone@example.com", workspace_name: "W" });
        const form = screenOf((await browser.get(next.location!)).text).text();
        for (const text of [start, form]) {
          expect({ promised, says: /we will send a link/i.test(text) }).toEqual({ promised, says: promised });
          expect(text).not.toMatch(/e-mailed you/i);
        }
      }
    } finally {
      await quiet.stop();
      await mailing.stop();
    }
  });
});

describe("/signup and the API share the per-address limit", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { HERALD_SIGNUP_REQUESTS_PER_HOUR: "2" } });
  });
  afterAll(async () => {
    await s.stop();
  });

  test("one start through the API and one through the page use it up; the page then says to wait", async () => {
    expect((await signupIntent(s, "api@example.com")).status).toBe(201);
    const browser = new TestBrowser(s);
    const first = await browser.submit("/signup", { email: "page@example.com", workspace_name: "W" });
    expect(first.status).toBe(303);
    const third = await browser.submit("/signup", { email: "third@example.com", workspace_name: "W" });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(headingOf(third.text)).toBe("Too many attempts");
    await expectProblem(await signupIntent(s, "api2@example.com"), 429, "public_rate_limited");
  });
});
