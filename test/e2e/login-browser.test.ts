// End to end in headless Chromium (Debian `chromium`, driven by playwright-core): `herald login` runs
// as a subprocess, a new person signs up on the hosted signup page, approves the terminal on
// /device, and the CLI then answers `whoami` with the new account. Screenshots of each page are
// saved in the test's temp directory (printed when the test fails).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { BUN, MAIN, ROOT, cleanEnv, readUntil } from "../helpers/process.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { herald } from "../cli/helpers.ts";
import { launchChromium } from "./dashboard-kit.ts";

let s: TestServer;
let browser: Browser;
let dir: string;

beforeAll(async () => {
  browser = await launchChromium();
  dir = mkdtempSync(join(tmpdir(), "herald-e2e-"));
  s = await startTestServer({ env: { HERALD_SIGNUP_CONFIRM_EMAIL: "off" } });
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  // Screenshots stay for a look when HERALD_KEEP_E2E is set.
  if (dir && !process.env.HERALD_KEEP_E2E) rmSync(dir, { recursive: true, force: true });
});

test("herald login: sign up in the browser, approve the terminal on /device, whoami shows the account", async () => {
  const config = join(dir, "config");
  const env = { HERALD_CONFIG_DIR: config, HERALD_NO_BROWSER: "1" };
  const login = Bun.spawn([BUN, MAIN, "login", "--base-url", s.url], {
    cwd: ROOT,
    env: cleanEnv(env),
    stdout: "pipe",
    stderr: "pipe",
  });
  const shots: string[] = [];
  const page = await browser.newPage();
  try {
    const [verification] = await readUntil(login.stderr, /http:\/\/\S+\/device\?user_code=[A-Z-]+/);

    // A new person signs up on the hosted page.
    const intent = await fetch(`${s.url}/v1/signup-intents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "new.person@example.com", workspace_name: "Launch team" }),
    });
    expect(intent.status).toBe(201);
    const { signup_url } = (await intent.json()) as { signup_url: string };
    await page.goto(signup_url);
    await page.getByLabel("Name", { exact: true }).fill("New Person");
    await page.getByLabel("Password", { exact: true }).fill("correct horse battery");
    await page.getByLabel("Password again").fill("correct horse battery");
    await page.screenshot({ path: join(dir, "1-signup.png"), fullPage: true });
    shots.push("1-signup.png");
    await page.getByRole("button", { name: "Create account" }).click();
    await page.waitForLoadState();
    await page.screenshot({ path: join(dir, "2-signed-up.png"), fullPage: true });
    shots.push("2-signed-up.png");

    // Signed in: the device page shows the terminal's request; approve it.
    await page.goto(verification);
    await page.screenshot({ path: join(dir, "3-device.png"), fullPage: true });
    shots.push("3-device.png");
    const code = new URL(verification).searchParams.get("user_code")!;
    expect(await page.content()).toContain(code);
    await page.getByRole("button", { name: "Approve" }).click();
    await page.waitForLoadState();
    await page.screenshot({ path: join(dir, "4-approved.png"), fullPage: true });
    shots.push("4-approved.png");

    expect(await login.exited).toBe(0);
    const whoami = await herald(["whoami", "--json"], env);
    expect(whoami.code).toBe(0);
    const me = JSON.parse(whoami.stdout);
    // The new account, through the key the approval made for this terminal (named after the host).
    expect(me).toMatchObject({ object: "account", name: "New Person" });
    expect(me.id).not.toBe(s.owner.accountId);
    expect(me.authentication).toMatchObject({ environment: "live", name: hostname() });
  } catch (error) {
    login.kill();
    throw new Error(`${(error as Error).message}\n(screenshots in ${dir}: ${shots.join(", ")})`);
  } finally {
    await page.close();
  }
}, 60_000);
