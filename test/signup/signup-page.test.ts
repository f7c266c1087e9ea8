import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { tables } from "../helpers/tables.ts";
import type { MailMessage } from "../../src/modules/mail/transport.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { TestBrowser, pathOf } from "../helpers/browser.ts";
import { expectPasswordFieldError, STRONG_PASSWORD, weakPasswords } from "../helpers/passwords.ts";

const { accounts, emailConfirmations, mailOutbox, users, workspaces } = tables;

const PASSWORD = "a long enough password";
const DAY_MS = 24 * 60 * 60 * 1000;

let counter = 0;
/** A signup intent through the API: its page path and, with `cli`, its CLI authorization. */
async function startSignup(s: TestServer, options: { cli?: boolean; email?: string } = {}) {
  const email = options.email ?? `signup-${++counter}@example.com`;
  const body: Record<string, unknown> = { email, workspace_name: "Launch" };
  if (options.cli)
    Object.assign(body, { authorize_cli: true, device_name: "my laptop", cli_version: "0.9.0" });
  const r = await s.request("POST", "/v1/signup-intents", { key: null, body });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
  return { email, page: pathOf(r.body.signup_url), cli: r.body.cli_authorization };
}

const poll = (s: TestServer, deviceSecret: string) =>
  s.request("POST", "/v1/cli-authorizations/token", { key: null, body: { device_secret: deviceSecret } });

const form = (name = "Ada Lovelace", password = PASSWORD, confirmation = password) => ({
  name,
  password,
  password_confirmation: confirmation,
});

describe("the signup page (no mail, HERALD_SIGNUP_CONFIRM_EMAIL=off)", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({
      env: { HERALD_SIGNUP_CONFIRM_EMAIL: "off", HERALD_SIGNUP_REQUESTS_PER_HOUR: "1000" },
    });
  });
  afterAll(async () => {
    await s.stop();
  });

  test("GET shows the address, the workspace and the form; an unknown link is 404", async () => {
    const { page, email } = await startSignup(s);
    const browser = new TestBrowser(s);
    const r = await browser.get(page);
    expect(r.status).toBe(200);
    expect(r.text).toContain(email);
    expect(r.text).toContain("Launch");
    for (const name of ["name", "password", "password_confirmation"])
      expect(r.text).toContain(`<label for="${name}">`);
    expect(r.text).toContain('autocomplete="new-password"');
    expect(r.text).not.toContain("We will send a link");
    const unknown = await browser.get(`/signup/${"x".repeat(43)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain("This signup link is not valid");
  });

  test("a signup creates the account, its owner (Argon2id), the workspace, and signs the person in", async () => {
    const { page, email } = await startSignup(s);
    const browser = new TestBrowser(s);
    const r = await browser.submit(page, form("Ada & Co"));
    expect(r.status).toBe(303);
    expect(r.location).toBe("/dashboard?welcome=account");
    expect(
      r.setCookies.some((c) => /^herald_session=[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Lax;/.test(c)),
    ).toBe(true);
    const [user] = await s.herald.db.select().from(users).where(eq(users.email, email));
    expect(user).toMatchObject({ role: "owner" });
    expect(user!.passwordHash).toStartWith("$argon2id$");
    expect(await Bun.password.verify(PASSWORD, user!.passwordHash!)).toBe(true);
    const [account] = await s.herald.db.select().from(accounts).where(eq(accounts.id, user!.accountId));
    expect(account!.name).toBe("Ada & Co");
    const [workspace] = await s.herald.db
      .select()
      .from(workspaces)
      .where(eq(workspaces.accountId, user!.accountId));
    expect(workspace).toMatchObject({ name: "Launch", timeZone: "UTC" });

    const dashboard = await browser.get(r.location!);
    expect(dashboard.status).toBe(200);
    expect(dashboard.text).toContain("Your account is ready.");
    expect(dashboard.text).toContain("Ada &#38; Co");
    expect(dashboard.text).toContain(workspace!.id);
    // The link worked once; the person can sign in with the password.
    const again = await browser.get(page);
    expect(again.status).toBe(410);
    expect(again.text).toContain("already used");
    await new TestBrowser(s).signIn(email, PASSWORD);
  });

  const invalid: [string, Record<string, string>, string[]][] = [
    ["an empty name", form("  "), ["Enter a name."]],
    ["a name of 201 characters", form("n".repeat(201)), ["Use at most 200 characters."]],
    ["a short password", form("Ada", "short"), ["Use at least 10 characters."]],
    ["passwords that differ", form("Ada", PASSWORD, `${PASSWORD}!`), ["The two passwords differ."]],
    ["a password of 201 characters", form("Ada", "p".repeat(201)), ["Use at most 200 characters."]],
    [
      "an empty name and a short password",
      form("", "short"),
      ["Enter a name.", "Use at least 10 characters."],
    ],
  ];
  for (const [name, fields, messages] of invalid) {
    test(`400 with the form again for ${name}; nothing is created`, async () => {
      const { page, email } = await startSignup(s);
      const browser = new TestBrowser(s);
      const r = await browser.submit(page, fields);
      expect(r.status).toBe(400);
      for (const message of messages) expect(r.text).toContain(message);
      expect(r.text).toContain('role="alert"');
      expect(r.text).toContain('aria-invalid="true"');
      expect(r.text).not.toContain(fields.password!); // passwords are never sent back
      expect(await s.herald.db.select().from(users).where(eq(users.email, email))).toEqual([]);
      expect((await browser.get(page)).status).toBe(200);
    });
  }

  describe("weak passwords are refused next to the field (zxcvbn, score 3 or more)", () => {
    for (const { what, password, message } of weakPasswords("weak-signup@example.com")) {
      test(`${what}: 400, the field says why, nothing is created`, async () => {
        const { page, email } = await startSignup(s, {
          email: `weak-signup-${++counter}@example.com`,
        });
        const typed = password === "weak-signup@example.com" ? email : password;
        const r = await new TestBrowser(s).submit(page, form("Ada", typed));
        expect(r.status).toBe(400);
        expectPasswordFieldError(r.text, message);
        expect(await s.herald.db.select().from(users).where(eq(users.email, email))).toEqual([]);
      });
    }

    test("a repeated workspace name is refused too; a strong password passes", async () => {
      const { page } = await startSignup(s);
      const browser = new TestBrowser(s);
      const named = await browser.submit(page, form("Ada", "Launch Launch Launch"));
      expect(named.status).toBe(400);
      expectPasswordFieldError(named.text, /easy to guess/);
      const r = await browser.submit(page, form("Ada", STRONG_PASSWORD));
      expect(r.status).toBe(303);
    });
  });

  test("an expired link is 410, and so is its form", async () => {
    const { page } = await startSignup(s);
    const browser = new TestBrowser(s);
    const opened = await browser.get(page);
    expect(opened.status).toBe(200);
    s.clock.advance(60 * 60 * 1000);
    const r = await browser.get(page);
    expect(r.status).toBe(410);
    expect(r.text).toContain("expired");
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(opened.text)![1]!;
    expect((await browser.post(page, { csrf_token: csrf, ...form() })).status).toBe(410);
  });

  test("an address that got an account meanwhile is 409 and the link stays unused", async () => {
    const { page, email } = await startSignup(s);
    await s.bootstrap(email, "Elsewhere");
    const r = await new TestBrowser(s).submit(page, form());
    expect(r.status).toBe(409);
    expect(r.text).toContain("already has an account");
  });

  test("with an attached CLI authorization the page approves it: the CLI receives its key at once", async () => {
    const { page, cli } = await startSignup(s, { cli: true });
    expect((await poll(s, cli.device_secret)).status).toBe(202);
    const browser = new TestBrowser(s);
    const opened = await browser.get(page);
    expect(opened.text).toContain(
      "also signs in the Herald command line on\n<strong>my laptop</strong> (version 0.9.0)",
    );
    const r = await browser.submit(page, form());
    expect(r.location).toBe("/dashboard?welcome=cli");
    expect((await browser.get(r.location!)).text).toContain("return to your terminal");
    s.clock.advance(5000);
    const credential = await poll(s, cli.device_secret);
    expect(credential.status).toBe(200);
    const account = await s.request("GET", "/v1/account", { key: credential.body.api_key });
    expect(account.body.name).toBe("Ada Lovelace");
    expect(credential.body.account_id).toBe(account.body.id.replace(/^acc_/, "acct_"));
    expect(credential.body.workspace_name).toBe("Launch");
    expect(account.body.authentication.name).toBe("my laptop");
    // The attached authorization's code now shows as answered.
    const code = pathOf(cli.verification_uri_complete);
    expect((await browser.get(code)).status).toBe(409);
  });

  test("an attached CLI authorization that was denied elsewhere stays denied", async () => {
    // Another signed-in person denies the code first (they saw it, it was not theirs).
    const { page, cli } = await startSignup(s, { cli: true });
    const owner = await startSignup(s);
    const other = new TestBrowser(s);
    await other.submit(owner.page, form());
    const denied = await other.submit(pathOf(cli.verification_uri_complete), { decision: "deny" }, "/device");
    expect(denied.status).toBe(200);
    const r = await new TestBrowser(s).submit(page, form());
    expect(r.location).toBe("/dashboard?welcome=account");
    expectProblem(await poll(s, cli.device_secret), 403, "public_cli_authorization_denied");
  });
});

describe("e-mail confirmation", () => {
  let s: TestServer;
  const sent: MailMessage[] = [];
  beforeAll(async () => {
    s = await startTestServer({
      env: { HERALD_SIGNUP_REQUESTS_PER_HOUR: "1000" },
      mail: { send: async (message) => void sent.push(message) },
    });
  });
  afterAll(async () => {
    await s.stop();
  });

  /** The confirmation link of the newest e-mail to `to`, after the mail job ran. */
  async function linkFor(to: string): Promise<string> {
    await s.server.scheduler.runNow("mail-outbox");
    const message = sent.filter((m) => m.to === to).at(-1);
    expect(message).toBeDefined();
    expect(message!.subject).toBe("Confirm your address for Herald");
    const link = new RegExp(`${s.url}/confirm-email/[A-Za-z0-9]{43}`).exec(message!.text)?.[0];
    expect(link).toBeDefined();
    return link!;
  }

  test("the CLI's key waits until the address is confirmed through the e-mailed link", async () => {
    const { page, cli, email } = await startSignup(s, { cli: true });
    const browser = new TestBrowser(s);
    expect((await browser.get(page)).text).toContain(`We will send a link to ${email}`);
    const r = await browser.submit(page, form());
    expect(r.location).toBe("/dashboard?welcome=cli");
    const dashboard = await browser.get(r.location!);
    expect(dashboard.text).toContain("once your address is confirmed");
    expect(dashboard.text).toContain("Send the link again");

    // Approved, but held back: still pending (and the interval still applies).
    const pending = await poll(s, cli.device_secret);
    expect(pending.status).toBe(202);
    expect(pending.body.status).toBe("pending");

    const link = await linkFor(email);
    // Anyone with the link confirms (it proves the mailbox); a fresh browser, no session.
    const visitor = new TestBrowser(s);
    const confirmPage = await visitor.get(pathOf(link));
    expect(confirmPage.status).toBe(200);
    expect(confirmPage.text).toContain(`Confirm ${email}`);
    // Fetching the link alone confirms nothing (mail scanners fetch links).
    s.clock.advance(5000);
    expect((await poll(s, cli.device_secret)).status).toBe(202);
    const confirmed = await visitor.submit(pathOf(link), {});
    expect(confirmed.status).toBe(200);
    expect(confirmed.text).toContain("Address confirmed");

    s.clock.advance(5000);
    const credential = await poll(s, cli.device_secret);
    expect(credential.status).toBe(200);
    expect(credential.body.api_key).toMatch(/^hk_live_/);
    expect((await browser.get("/dashboard")).text).not.toContain("Send the link again");
    const reused = await visitor.get(pathOf(link));
    expect(reused.status).toBe(200);
    expect(reused.text).toContain("Address already confirmed");
  });

  test("a device approved on /device also waits for the confirmation", async () => {
    const { page, email } = await startSignup(s);
    const browser = new TestBrowser(s);
    await browser.submit(page, form());
    const started = (
      await s.request("POST", "/v1/cli-authorizations", { key: null, body: { device_name: "pc" } })
    ).body;
    const question = await browser.get(pathOf(started.verification_uri_complete));
    expect(question.text).toContain(`once ${email} is confirmed`);
    const approved = await browser.submit(
      pathOf(started.verification_uri_complete),
      { decision: "approve" },
      "/device",
    );
    expect(approved.text).toContain(`once ${email} is confirmed with the link we e-mailed you`);
    expect((await poll(s, started.device_secret)).status).toBe(202);
    await new TestBrowser(s).submit(pathOf(await linkFor(email)), {});
    s.clock.advance(5000);
    expect((await poll(s, started.device_secret)).status).toBe(200);
  });

  test("a new link can be sent; either link confirms; an expired one is 410", async () => {
    const { page, email } = await startSignup(s);
    const browser = new TestBrowser(s);
    await browser.submit(page, form());
    const first = await linkFor(email);
    const resent = await browser.submit("/dashboard", {}, "/dashboard/resend-confirmation");
    expect(resent.status).toBe(303);
    expect(resent.location).toBe("/dashboard?resent=1");
    expect((await browser.get(resent.location!)).text).toContain("A new link is on its way.");
    const second = await linkFor(email);
    expect(second).not.toBe(first);
    s.clock.advance(7 * DAY_MS);
    const expired = await new TestBrowser(s).get(pathOf(first));
    expect(expired.status).toBe(410);
    s.clock.set(s.clock.now() - 7 * DAY_MS + 1000);
    const confirmed = await new TestBrowser(s).submit(pathOf(first), {});
    expect(confirmed.status).toBe(200);
    // The second link now reports the address as confirmed.
    expect((await new TestBrowser(s).get(pathOf(second))).text).toContain("Address already confirmed");
    expect((await new TestBrowser(s).get(`/confirm-email/${"y".repeat(43)}`)).status).toBe(404);
  });

  test("the confirmation form needs the browser's CSRF token", async () => {
    const { page, email } = await startSignup(s);
    await new TestBrowser(s).submit(page, form());
    const link = pathOf(await linkFor(email));
    const visitor = new TestBrowser(s);
    await visitor.get(link);
    expect((await visitor.post(link, {})).status).toBe(403);
    const [row] = await s.herald.db
      .select()
      .from(emailConfirmations)
      .where(eq(emailConfirmations.email, email));
    expect(row!.confirmedAt).toBeNull();
  });
});

describe("without SMTP, HERALD_SIGNUP_CONFIRM_EMAIL=on", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { HERALD_SIGNUP_CONFIRM_EMAIL: "on" } });
  });
  afterAll(async () => {
    await s.stop();
  });

  test("the confirmation e-mail waits in the outbox, a warning is logged, and the CLI's key waits", async () => {
    const { page, cli, email } = await startSignup(s, { cli: true });
    await new TestBrowser(s).submit(page, form());
    const queued = await s.herald.db.select().from(mailOutbox).where(eq(mailOutbox.toAddress, email));
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ status: "pending", subject: "Confirm your address for Herald" });
    // The link is only in the sealed text (test/mail/at-rest.test.ts).
    expect(s.herald.secrets.decrypt(queued[0]!.sealedBody!)).toContain(`${s.url}/confirm-email/`);
    const warnings = s.logs
      .map((l) => JSON.parse(l))
      .filter((l) => l.message.startsWith("confirmation e-mail stored but not sent"));
    expect(warnings.length).toBeGreaterThan(0);
    expect(JSON.stringify(warnings)).not.toContain("/confirm-email/");
    expect((await poll(s, cli.device_secret)).status).toBe(202);
  });
});
