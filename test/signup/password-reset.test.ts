// Password reset (issue 26): /password-reset answers every address alike, the e-mailed link (caught
// by a real SMTP server) sets a new password once within an hour, and a new password signs the person
// out everywhere while their API keys keep working.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { sha256Hex } from "../../src/lib/crypto.ts";
import { bootstrapAccount } from "../../src/modules/account/bootstrap.ts";
import { smtpTransport } from "../../src/modules/mail/transport.ts";
import { startSmtpSink, type SmtpSink } from "../feedback/smtp-sink.ts";
import { csrfTokenOf, pathOf, TestBrowser } from "../helpers/browser.ts";
import { expectPasswordFieldError, STRONG_PASSWORD, weakPasswords } from "../helpers/passwords.ts";
import { attributeOf, screenOf } from "../helpers/screen.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tables } from "../helpers/tables.ts";

const { mailOutbox, passwordResets, users } = tables;
const HOUR = 60 * 60 * 1000;
const NEW_PASSWORD = "quartz meadow violin 93";

let counter = 0;

/** A person with a password and a live API key. */
async function person(s: TestServer, email = `reset-${++counter}@example.com`) {
  const made = await bootstrapAccount(s.herald, {
    email,
    workspaceName: "Resets",
    password: STRONG_PASSWORD,
  });
  return { email, apiKey: made.api_key };
}

/** Asks for a reset link on the page, as a person does. */
async function askForLink(s: TestServer, email: string, browser = new TestBrowser(s)) {
  return browser.submit("/password-reset", { email }, "/password-reset");
}

/** The reset links e-mailed to `email` so far (after the mail job ran), as paths. */
async function linksMailedTo(s: TestServer, sink: SmtpSink, email: string): Promise<string[]> {
  await s.server.scheduler.runNow("mail-outbox");
  return sink.messages
    .filter((m) => JSON.stringify(m.to ?? "").includes(email))
    .map((m) => {
      expect(m.subject).toBe("Choose a new Herald password");
      const url = new RegExp(`${s.url}/password-reset/[A-Za-z0-9]{43}`).exec(m.text ?? "")?.[0];
      expect(url).toBeDefined();
      return pathOf(url!);
    });
}

/** The text a person reads in the page's main part. */
const mainText = (page: string) => screenOf(page).within(screenOf(page).getByRole("main")).text();

const setPassword = (browser: TestBrowser, link: string, password = NEW_PASSWORD, again = password) =>
  browser.submit(link, { password, password_confirmation: again });

describe("with mail", () => {
  let s: TestServer;
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
    s = await startTestServer({ env: { HERALD_SMTP_URL: sink.url }, mail: smtpTransport(sink.url) });
  });
  afterAll(async () => {
    await s.stop();
    await sink.close();
  });
  // Each test asks from the same address (127.0.0.1): a new hour starts the limits' windows afresh.
  const nextHour = () => s.clock.advance(HOUR);

  test("the request page asks for the address; known and unknown addresses get the same answer", async () => {
    nextHour();
    const { email } = await person(s);
    const browser = new TestBrowser(s);
    const page = screenOf((await browser.get("/password-reset")).text);
    expect(page.nameOf(page.getByRole("heading", { level: 1 }))).toBe("Forgot your password?");
    expect(attributeOf(page.getByLabelText("E-mail address"), "type")).toBe("email");
    page.getByRole("button", { name: "Send the link" });

    const known = await askForLink(s, email, browser);
    const unknown = await askForLink(s, "nobody-here@example.com", browser);
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(mainText(known.text)).toContain(`If an account uses ${email}, a link to choose a new password`);
    expect(mainText(known.text).replace(email, "ADDRESS")).toBe(
      mainText(unknown.text).replace("nobody-here@example.com", "ADDRESS"),
    );
    // Something that is no address is sent back with the reason next to the field.
    for (const typed of ["", "not an address"]) {
      const r = await askForLink(s, typed, browser);
      expect(r.status).toBe(400);
      const form = screenOf(r.text);
      const field = form.getByLabelText("E-mail address");
      expect(attributeOf(field, "aria-invalid")).toBe("true");
      expect(form.descriptionOf(field)).toMatch(/address/);
    }
    // Only the person's address gets mail, and only the token's hash is stored.
    expect(await linksMailedTo(s, sink, "nobody-here@example.com")).toEqual([]);
    const [link] = await linksMailedTo(s, sink, email);
    const token = link!.split("/").at(-1)!;
    const rows = await s.herald.db.select().from(passwordResets);
    expect(rows.some((r) => r.tokenHash === sha256Hex(token))).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(s.logs.join("\n")).not.toContain(token);
  });

  test("the link sets a new password once; every session ends, API keys keep working", async () => {
    nextHour();
    const { email, apiKey } = await person(s);
    const elsewhere = new TestBrowser(s);
    await elsewhere.signIn(email, STRONG_PASSWORD);
    expect((await elsewhere.get("/dashboard")).status).toBe(200);
    await askForLink(s, email);
    const [link] = await linksMailedTo(s, sink, email);

    const visitor = new TestBrowser(s);
    const form = screenOf((await visitor.get(link!)).text);
    expect(form.nameOf(form.getByRole("heading", { level: 1 }))).toBe("Choose a new password");
    expect(form.text()).toContain(email);
    expect(attributeOf(form.getByLabelText("Password"), "autocomplete")).toBe("new-password");
    expect(form.descriptionOf(form.getByLabelText("Password"))).toBe(
      "At least 10 characters, and hard to guess: a few unrelated words work well.",
    );
    expect(attributeOf(form.getByLabelText("Password again"), "type")).toBe("password");
    form.getByRole("button", { name: "Set the new password" });

    const done = await setPassword(visitor, link!);
    expect(done.status).toBe(200);
    const screen = screenOf(done.text);
    expect(screen.nameOf(screen.getByRole("heading", { level: 1 }))).toBe("Your password is changed");
    screen.getByRole("link", { name: "Sign in" });

    // The browser signed in before is signed out; the old password no longer works, the new one does.
    const after = await elsewhere.get("/dashboard");
    expect(after.status).toBe(303);
    expect(after.location).toStartWith("/login");
    const old = await new TestBrowser(s).submit("/login", { email, password: STRONG_PASSWORD }, "/login");
    expect(old.status).toBe(400);
    await new TestBrowser(s).signIn(email, NEW_PASSWORD);
    const api = await s.request("GET", "/v1/account", { key: apiKey });
    expect(api.status).toBe(200);

    // Once only.
    const again = await new TestBrowser(s).get(link!);
    expect(again.status).toBe(410);
    expect(mainText(again.text)).toContain("already used");
    const audit = await s.request("GET", "/v1/audit-records", { key: apiKey });
    expect(audit.body.data.some((a: { action: string }) => a.action === "user.password_reset")).toBe(true);
  });

  test("a new password ends the person's other open links too", async () => {
    nextHour();
    const { email } = await person(s);
    await askForLink(s, email);
    await askForLink(s, email);
    const [first, second] = await linksMailedTo(s, sink, email);
    expect(first).not.toBe(second);
    expect((await setPassword(new TestBrowser(s), second!)).status).toBe(200);
    const stale = await new TestBrowser(s).get(first!);
    expect(stale.status).toBe(410);
  });

  test("a link expires after one hour, its form too", async () => {
    nextHour();
    const { email } = await person(s);
    await askForLink(s, email);
    const [link] = await linksMailedTo(s, sink, email);
    const browser = new TestBrowser(s);
    const opened = await browser.get(link!);
    expect(opened.status).toBe(200);
    s.clock.advance(HOUR - 1000);
    expect((await browser.get(link!)).status).toBe(200);
    s.clock.advance(1000);
    const expired = await browser.get(link!);
    expect(expired.status).toBe(410);
    expect(mainText(expired.text)).toContain("has expired");
    const posted = await browser.post(link!, {
      csrf_token: csrfTokenOf(opened.text),
      password: NEW_PASSWORD,
      password_confirmation: NEW_PASSWORD,
    });
    expect(posted.status).toBe(410);
    const [user] = await s.herald.db.select().from(users).where(eq(users.email, email));
    expect(await Bun.password.verify(STRONG_PASSWORD, user!.passwordHash!)).toBe(true);
  });

  test("both forms need this browser's CSRF token", async () => {
    nextHour();
    const { email } = await person(s);
    const before = (await s.herald.db.select().from(mailOutbox)).length;
    const stranger = new TestBrowser(s);
    const strangersToken = csrfTokenOf((await stranger.get("/password-reset")).text);
    const browser = new TestBrowser(s);
    await browser.get("/password-reset");
    for (const token of ["", "forged", strangersToken]) {
      const r = await browser.post("/password-reset", { csrf_token: token, email });
      expect(r.status).toBe(403);
    }
    expect((await s.herald.db.select().from(mailOutbox)).length).toBe(before);

    await askForLink(s, email);
    const [link] = await linksMailedTo(s, sink, email);
    const linkToken = csrfTokenOf((await stranger.get(link!)).text);
    await browser.get(link!);
    const forged = await browser.post(link!, {
      csrf_token: linkToken,
      password: NEW_PASSWORD,
      password_confirmation: NEW_PASSWORD,
    });
    expect(forged.status).toBe(403);
    expect((await browser.get(link!)).status).toBe(200); // still open
  });

  test("weak passwords are refused next to the field and the link stays open", async () => {
    nextHour();
    const { email } = await person(s);
    await askForLink(s, email);
    const [link] = await linksMailedTo(s, sink, email);
    const browser = new TestBrowser(s);
    for (const { what, password, message } of weakPasswords(email)) {
      const r = await setPassword(browser, link!, password);
      expect({ what, status: r.status }).toEqual({ what, status: 400 });
      expectPasswordFieldError(r.text, message);
    }
    const differ = await setPassword(browser, link!, NEW_PASSWORD, `${NEW_PASSWORD}!`);
    expect(differ.status).toBe(400);
    expect(screenOf(differ.text).descriptionOf(screenOf(differ.text).getByLabelText("Password again"))).toBe(
      "The two passwords differ.",
    );
    expect((await setPassword(browser, link!)).status).toBe(200);
  });

  test("an address gets at most 3 mails an hour, answered alike; a client at most 10 requests (429)", async () => {
    nextHour();
    const { email } = await person(s);
    const answers = new Set<string>();
    for (let i = 0; i < 4; i++) {
      const r = await askForLink(s, email);
      expect(r.status).toBe(200);
      answers.add(mainText(r.text));
    }
    expect(answers.size).toBe(1);
    expect((await linksMailedTo(s, sink, email)).length).toBe(3);
    for (let i = 4; i < 10; i++) expect((await askForLink(s, `other-${i}@example.com`)).status).toBe(200);
    const refused = await askForLink(s, email);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const screen = screenOf(refused.text);
    expect(screen.nameOf(screen.getByRole("heading", { level: 1 }))).toBe("Too many requests");
    nextHour();
    expect((await askForLink(s, email)).status).toBe(200);
  });
});

describe("without mail", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s.stop();
  });

  test("the page promises no e-mail: it names the operator's command, and nothing is stored", async () => {
    const { email } = await person(s);
    const browser = new TestBrowser(s);
    const page = await browser.get("/password-reset");
    expect(page.status).toBe(200);
    const text = mainText(page.text);
    expect(text).toContain("This server does not send e-mail");
    expect(text).toContain("herald admin reset-password");
    expect(text).not.toMatch(/we will e-mail|check your e-mail/i);
    expect(screenOf(page.text).queryByLabelText("E-mail address")).toBeNull();
    // A form posted anyway (with this browser's token from another page) answers the same, stores nothing.
    const token = csrfTokenOf((await browser.get("/login")).text);
    for (const address of [email, "nobody@example.com"]) {
      const r = await browser.post("/password-reset", { csrf_token: token, email: address });
      expect(r.status).toBe(200);
      expect(mainText(r.text)).toBe(text);
    }
    expect(await s.herald.db.select().from(passwordResets)).toEqual([]);
    expect(await s.herald.db.select().from(mailOutbox)).toEqual([]);
  });
});
