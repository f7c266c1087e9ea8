// The first hour of a new installation, end to end in headless Chromium (issue 26, "The front door"):
// `herald serve` on an empty data dir with a real SMTP catcher → `/` → /setup with the link the server
// printed → the dashboard → sign out → a second person signs up from /login → confirms the address
// from the caught e-mail → `herald login` approved on /device, with a forgotten password renewed through
// /password-reset between. Each step is named in STEPS, so a step can be put between two others.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { startSmtpSink, type SmtpSink } from "../feedback/smtp-sink.ts";
import { herald } from "../cli/helpers.ts";
import { BUN, MAIN, ROOT, cleanEnv, type HeraldChild, readUntil, spawnHerald } from "../helpers/process.ts";
import { launchChromium, expectAccessible } from "./dashboard-kit.ts";

const OWNER = {
  email: "owner@example.com",
  name: "Ada Lovelace",
  password: "correct horse battery staple",
  newPassword: "the analytical engine weaves algebra",
};
const SECOND = {
  email: "grace@example.com",
  name: "Grace Hopper",
  password: "a compiler of 1952, nanoseconds",
};

/** What the steps share: the server, its mail, the browser page, and a temp dir for the CLI. */
interface Hour {
  server: HeraldChild;
  smtp: SmtpSink;
  page: Page;
  dir: string;
}

let server: HeraldChild;
let smtp: SmtpSink;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  browser = await launchChromium();
  dir = mkdtempSync(join(tmpdir(), "herald-first-hour-"));
  smtp = await startSmtpSink();
  server = await spawnHerald({
    baseUrl: true,
    env: { HERALD_DATA_DIR: join(dir, "data"), HERALD_SMTP_URL: smtp.url },
  });
  await server.waitForHealth();
});
afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await smtp?.close();
  if (dir && !process.env.HERALD_KEEP_E2E) rmSync(dir, { recursive: true, force: true });
});

/** Waits until `read` gives a value (polling), or fails naming what was awaited. */
async function eventually<T>(what: string, read: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

/** The first link to `path` in a caught e-mail to `to`. */
function linkInMail(smtp: SmtpSink, to: string, path: string): string | undefined {
  for (const message of smtp.messages) {
    const recipients = [message.to].flat().flatMap((a) => a?.value.map((v) => v.address) ?? []);
    if (!recipients.includes(to)) continue;
    const match = new RegExp(`https?://\\S+${path}\\S+`).exec(message.text ?? "");
    if (match) return match[0];
  }
  return undefined;
}

const heading = (page: Page) => page.getByRole("heading", { level: 1 }).innerText();

/** The first hour, step by step (a name each, for the failure message and the screenshots). */
const STEPS: { name: string; run: (hour: Hour) => Promise<void> }[] = [
  {
    name: "open / on the empty installation",
    async run({ server, page }) {
      await page.goto(`${server.url}/`);
      expect(new URL(page.url()).pathname).toBe("/setup");
      expect(await heading(page)).toBe("Open the setup link");
      // The banner said how mail is set up: here SMTP, so new addresses are confirmed by e-mail.
      expect(server.stdout()).toContain(
        "Mail    sent through HERALD_SMTP_URL; new accounts confirm their address",
      );
    },
  },
  {
    name: "set up with the printed link",
    async run({ server, page, dir }) {
      const link = /(http:\/\/\S+\/setup\?token=[A-Za-z0-9_-]+)/.exec(server.stdout())?.[1];
      expect(link).toBeDefined();
      await page.goto(link!);
      expect(await heading(page)).toBe("Set up Herald");
      await expectAccessible(page, "/setup");
      await page.screenshot({ path: join(dir, "setup-form.png"), fullPage: true });
      expect(await page.getByRole("radio", { name: "Only people I invite" }).isChecked()).toBe(true);
      await page.getByLabel("E-mail address").fill(OWNER.email);
      await page.getByLabel("Name", { exact: true }).fill(OWNER.name);
      await page.getByLabel("First workspace").fill("Launch");
      await page.getByLabel("Password", { exact: true }).fill(OWNER.password);
      await page.getByLabel("Password again").fill(OWNER.password);
      // A second person signs up below, so this server takes anyone.
      await page.getByRole("radio", { name: "Anyone" }).check();
      await page.getByRole("button", { name: "Set up Herald" }).click();
      await page.waitForURL("**/dashboard?welcome=setup");
      expect(await page.getByRole("status").first().innerText()).toContain("Herald is set up.");
      expect(await heading(page)).toBe(OWNER.name);
    },
  },
  {
    name: "sign out",
    async run({ page }) {
      await page.getByRole("button", { name: "Sign out", exact: true }).click();
      await page.waitForURL("**/login?signed_out=1");
      expect(await page.getByRole("status").innerText()).toBe("You are signed out.");
    },
  },
  {
    name: "forgot the password: a new one through the e-mailed link",
    async run({ smtp, page }) {
      await page.getByRole("link", { name: "Forgot your password?" }).click();
      expect(await heading(page)).toBe("Forgot your password?");
      await expectAccessible(page, "/password-reset");
      await page.getByLabel("E-mail address").fill(OWNER.email);
      await page.getByRole("button", { name: "Send the link" }).click();
      await page.waitForLoadState();
      expect(await heading(page)).toBe("Check your e-mail");
      const link = await eventually("the password reset e-mail", () =>
        linkInMail(smtp, OWNER.email, "/password-reset/"),
      );
      await page.goto(link);
      expect(await heading(page)).toBe("Choose a new password");
      await page.getByLabel("Password", { exact: true }).fill(OWNER.newPassword);
      await page.getByLabel("Password again").fill(OWNER.newPassword);
      await page.getByRole("button", { name: "Set the new password" }).click();
      await page.waitForLoadState();
      expect(await heading(page)).toBe("Your password is changed");
      // The old password no longer opens the dashboard; the new one does.
      await page.getByRole("link", { name: "Sign in" }).click();
      await page.getByLabel("E-mail address").fill(OWNER.email);
      await page.getByLabel("Password").fill(OWNER.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForLoadState();
      expect(new URL(page.url()).pathname).toBe("/login");
      await page.getByLabel("Password").fill(OWNER.newPassword);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL("**/dashboard");
      expect(await heading(page)).toBe(OWNER.name);
      await page.getByRole("button", { name: "Sign out", exact: true }).click();
      await page.waitForURL("**/login?signed_out=1");
    },
  },
  {
    name: "a second person signs up from /login",
    async run({ page }) {
      await page.getByRole("link", { name: "Create an account" }).click();
      expect(await heading(page)).toBe("Create a Herald account");
      await expectAccessible(page, "/signup");
      await page.getByLabel("E-mail address").fill(SECOND.email);
      await page.getByLabel("First workspace").fill("Compilers");
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(/\/signup\/[A-Za-z0-9_-]+$/);
      expect(await page.getByText(`We will send a link to ${SECOND.email}`).count()).toBe(1);
      await page.getByLabel("Name", { exact: true }).fill(SECOND.name);
      await page.getByLabel("Password", { exact: true }).fill(SECOND.password);
      await page.getByLabel("Password again").fill(SECOND.password);
      await page.getByRole("button", { name: "Create account" }).click();
      await page.waitForURL("**/dashboard?welcome=account");
      expect(await heading(page)).toBe(SECOND.name);
    },
  },
  {
    name: "confirm the address from the e-mail",
    async run({ smtp, page }) {
      const link = await eventually("the confirmation e-mail", () =>
        linkInMail(smtp, SECOND.email, "/confirm-email/"),
      );
      await page.goto(link);
      await page.getByRole("button", { name: `Confirm ${SECOND.email}` }).click();
      await page.waitForLoadState();
      expect(await heading(page)).toBe("Address confirmed");
    },
  },
  {
    name: "herald login, approved in the browser",
    async run({ server, page, dir }) {
      const env = { HERALD_CONFIG_DIR: join(dir, "cli"), HERALD_NO_BROWSER: "1" };
      const login = Bun.spawn([BUN, MAIN, "login", "--base-url", server.url], {
        cwd: ROOT,
        env: cleanEnv(env),
        stdout: "pipe",
        stderr: "pipe",
      });
      try {
        const [verification] = await readUntil(login.stderr, /http:\/\/\S+\/device\?user_code=[A-Z-]+/);
        await page.goto(verification);
        await page.getByRole("button", { name: "Approve" }).click();
        await page.waitForLoadState();
        expect(await heading(page)).toBe("Command line approved");
        expect(await login.exited).toBe(0);
      } finally {
        login.kill();
      }
      const whoami = await herald(["whoami", "--json"], env);
      expect(whoami.code).toBe(0);
      expect(JSON.parse(whoami.stdout)).toMatchObject({
        object: "account",
        name: SECOND.name,
        authentication: { environment: "live", name: hostname() },
      });
    },
  },
];

const TITLE =
  "the first hour: / → setup → dashboard → sign out → forgot password → a second signup → confirmation → CLI";

test(TITLE, async () => {
  const page = await browser.newPage();
  const hour: Hour = { server, smtp, page, dir };
  const done: string[] = [];
  try {
    for (const [i, step] of STEPS.entries()) {
      try {
        await step.run(hour);
      } finally {
        await page.screenshot({
          path: join(dir, `${i + 1}-${step.name.replace(/\W+/g, "-")}.png`),
          fullPage: true,
        });
      }
      done.push(step.name);
    }
  } catch (error) {
    const failed = STEPS[done.length]?.name;
    throw new Error(
      `step "${failed}" failed after ${JSON.stringify(done)}: ${(error as Error).message}\n` +
        `(screenshots in ${dir}; HERALD_KEEP_E2E=1 keeps them)\n${server.log()}`,
    );
  } finally {
    await page.close();
  }
}, 120_000);
