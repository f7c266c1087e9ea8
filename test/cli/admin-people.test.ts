// `herald admin reset-password` and `herald admin confirm-email` (issue 26): the real CLI as a process,
// on the data dir (and database) of a server that is running, as an operator uses them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootstrapAccount } from "../../src/modules/account/bootstrap.ts";
import { userAwaitsConfirmation } from "../../src/modules/signup/confirmation.ts";
import { findUserByEmail } from "../../src/modules/account/repo.ts";
import { pathOf, TestBrowser } from "../helpers/browser.ts";
import { STRONG_PASSWORD } from "../helpers/passwords.ts";
import { screenOf } from "../helpers/screen.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { herald } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({
    env: { HERALD_SIGNUP_CONFIRM_EMAIL: "on", HERALD_SIGNUP_REQUESTS_PER_HOUR: "1000" },
  });
});
afterAll(async () => {
  await s.stop();
});

/** The CLI's environment: this server's data dir, database and base URL. */
function env(): Record<string, string> {
  const { config } = s.herald;
  return {
    HERALD_DATA_DIR: s.dataDir,
    HERALD_BASE_URL: s.url,
    ...(config.databaseUrl ? { HERALD_DATABASE_URL: config.databaseUrl } : {}),
    ...(config.secretKey ? { HERALD_SECRET_KEY: config.secretKey } : {}),
  };
}

const NEW_PASSWORD = "copper lighthouse fern 28";

describe("admin reset-password", () => {
  test("--json prints a one-time link of an hour that sets a new password once and signs out everywhere", async () => {
    const email = "forgetful@example.com";
    const made = await bootstrapAccount(s.herald, {
      email,
      workspaceName: "Forgets",
      password: STRONG_PASSWORD,
    });
    const signedIn = new TestBrowser(s);
    await signedIn.signIn(email, STRONG_PASSWORD);

    const started = Date.now();
    const r = await herald(["admin", "reset-password", "--email", "Forgetful@Example.com", "--json"], env());
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout.trim().split("\n").length).toBe(1);
    const printed = JSON.parse(r.stdout);
    expect(Object.keys(printed).sort()).toEqual(["expires_at", "reset_url"]);
    expect(printed.reset_url).toMatch(new RegExp(`^${s.url}/password-reset/[A-Za-z0-9]{43}$`));
    const lifetime = Date.parse(printed.expires_at) - started;
    expect(lifetime).toBeGreaterThan(59 * 60 * 1000);
    expect(lifetime).toBeLessThanOrEqual(60 * 60 * 1000 + 60_000);

    const link = pathOf(printed.reset_url);
    const browser = new TestBrowser(s);
    const done = await browser.submit(link, { password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD });
    expect(done.status).toBe(200);
    expect(screenOf(done.text).text()).toContain("Your password is changed");
    expect((await signedIn.get("/dashboard")).status).toBe(303);
    await new TestBrowser(s).signIn(email, NEW_PASSWORD);
    expect((await s.request("GET", "/v1/account", { key: made.api_key })).status).toBe(200);
    expect((await browser.get(link)).status).toBe(410);
  });

  test("without --json it prints the link with what it does; an unknown address is an error", async () => {
    await bootstrapAccount(s.herald, {
      email: "human@example.com",
      workspaceName: "H",
      password: STRONG_PASSWORD,
    });
    const r = await herald(["admin", "reset-password", "--email", "human@example.com"], env());
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("One-time link to choose a new password for human@example.com");
    expect(r.stdout).toMatch(new RegExp(`\n  ${s.url}/password-reset/[A-Za-z0-9]{43}\n`));
    expect(r.stdout).toContain("signs the person out everywhere");

    const unknown = await herald(
      ["admin", "reset-password", "--email", "nobody@example.com", "--json"],
      env(),
    );
    expect(unknown.code).not.toBe(0);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr.trim()).toBe("herald: no person has the address nobody@example.com");
    const missing = await herald(["admin", "reset-password"], env());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--email is required");
  });
});

describe("admin confirm-email", () => {
  test("confirms a signup's address by hand: the CLI authorization waiting for it gets its key", async () => {
    const email = "no-mail-here@example.com";
    const intent = await s.request("POST", "/v1/signup-intents", {
      key: null,
      body: { email, workspace_name: "Unmailed", authorize_cli: true, device_name: "laptop" },
    });
    expect(intent.status).toBe(201);
    const signup = await new TestBrowser(s).submit(pathOf(intent.body.signup_url), {
      name: "Unmailed",
      password: STRONG_PASSWORD,
      password_confirmation: STRONG_PASSWORD,
    });
    expect(signup.status).toBe(303);
    const user = await findUserByEmail(s.herald.db, email);
    expect(await userAwaitsConfirmation(s.herald.db, user!.id)).toBe(true);

    const r = await herald(["admin", "confirm-email", "--email", email], env());
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toContain(`Confirmed ${email}`);
    expect(await userAwaitsConfirmation(s.herald.db, user!.id)).toBe(false);
    // The CLI's key was held back for the confirmation; now it is handed over.
    const token = await s.request("POST", "/v1/cli-authorizations/token", {
      key: null,
      body: { device_secret: intent.body.cli_authorization.device_secret },
    });
    expect(token.status).toBe(200);
    expect(token.body.api_key).toMatch(/^hk_live_/);

    const again = await herald(["admin", "confirm-email", "--email", email, "--json"], env());
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ email, already_confirmed: true });
  });

  test("an unknown address is an error with a non-zero exit", async () => {
    const r = await herald(["admin", "confirm-email", "--email", "ghost@example.com"], env());
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim()).toBe("herald: no person has the address ghost@example.com");
  });
});

describe("admin bootstrap --password", () => {
  test("a weak password is refused like on every page (exit 1, one line), nothing is created", async () => {
    const r = await herald(
      [
        "admin",
        "bootstrap",
        "--email",
        "weak@example.com",
        "--workspace-name",
        "W",
        "--password",
        "password1234",
      ],
      env(),
    );
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(/^herald: --password: This password is easy to guess\./);
    expect(await findUserByEmail(s.herald.db, "weak@example.com")).toBeUndefined();
  });
});
