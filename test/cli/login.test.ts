// `herald login`, `logout` and the stored login. First against a fake that plays the contract's CLI
// authorization script exactly (fast and deterministic: the polling pace, retry_after, slow-down,
// refusals, the browser), then against the real server, approved on its /device page like a person.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { HERALD_VERSION } from "../../src/herald.ts";
import { bootstrapAccount } from "../../src/modules/account/bootstrap.ts";
import { BUN, MAIN, ROOT, cleanEnv } from "../helpers/process.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { TestBrowser, pathOf } from "../helpers/browser.ts";
import {
  HAS_TERMINAL,
  cells,
  closedPort,
  failed,
  herald,
  heraldOnTerminal,
  removeTempDirs,
  succeeded,
  tempDir,
} from "./helpers.ts";

afterAll(() => removeTempDirs());

const KEY = `hk_live_${"A1b2C3d4".repeat(4)}`;
const SECRET = `hcd_${"s".repeat(43)}`;

/** One scripted answer of the fake token endpoint. */
type TokenStep =
  | { pending: number }
  | { slowDown: number }
  | { problem: number; code: string; detail: string }
  | "credential";

/** A server that speaks the contract's CLI authorization and /me operations from a script. */
function startFake(script: TokenStep[], revoke: "ok" | "refused" = "ok") {
  const started: any[] = [];
  const polls: { at: number; body: any }[] = [];
  const revoked: string[] = [];
  const steps = [...script];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const origin = url.origin;
      const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
        Response.json(body, { status, headers });
      const problem = (status: number, code: string, detail: string, headers: Record<string, string> = {}) =>
        new Response(JSON.stringify({ status, code, detail, request_id: "req_fake1" }), {
          status,
          headers: { "content-type": "application/problem+json", ...headers },
        });
      if (request.method === "POST" && url.pathname === "/v1/cli-authorizations") {
        started.push(await request.json());
        return json(
          {
            object: "cli_authorization",
            sensitive: true,
            device_secret: SECRET,
            verification_uri: `${origin}/device`,
            verification_uri_complete: `${origin}/device?user_code=WDJB-MJHT`,
            expires_at: "2030-01-01T00:30:00.000Z",
            interval: 1,
          },
          201,
        );
      }
      if (request.method === "POST" && url.pathname === "/v1/cli-authorizations/token") {
        polls.push({ at: performance.now(), body: await request.json() });
        const step = steps.shift() ?? "credential";
        if (step === "credential")
          return json({
            object: "cli_credential",
            status: "authorized",
            api_key: KEY,
            workspace_id: "ws_fake1",
            workspace_name: "Fake workspace",
            account_id: "acct_fake1",
          });
        if ("pending" in step)
          return json(
            {
              object: "cli_authorization",
              status: "pending",
              retry_after: step.pending,
              expires_at: "2030-01-01T00:30:00.000Z",
            },
            202,
            { "retry-after": String(step.pending) },
          );
        if ("slowDown" in step)
          return problem(429, "public_rate_limited", "Polled sooner than the interval.", {
            "retry-after": String(step.slowDown),
          });
        return problem(step.problem, step.code, step.detail);
      }
      const key = request.headers.get("authorization")?.replace(/^Bearer /, "");
      if (request.method === "GET" && url.pathname === "/v1/me" && key === KEY)
        return json({
          id: "acc_fake1",
          object: "account",
          name: "Fake account",
          authentication: {
            credential_id: "key_fake1",
            prefix: KEY.slice(0, 12),
            name: "laptop",
            environment: "live",
            workspace_access_mode: "all",
            scopes: ["posts:read"],
            expires_at: null,
          },
          created_at: "2026-03-01T12:00:00.000Z",
          updated_at: "2026-03-01T12:00:00.000Z",
        });
      if (request.method === "POST" && url.pathname === "/v1/me/revoke" && key) {
        revoked.push(key);
        return revoke === "ok"
          ? json({ id: "key_fake1", object: "api_key", revoked: true })
          : problem(401, "public_authentication_required", "The API key is not valid.");
      }
      return problem(404, "public_not_found", "Not found.");
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, started, polls, revoked, stop: () => server.stop(true) };
}

let fakes: ReturnType<typeof startFake>[] = [];
afterEach(async () => {
  for (const f of fakes.splice(0)) await f.stop();
});
function fake(script: TokenStep[], revoke: "ok" | "refused" = "ok") {
  const f = startFake(script, revoke);
  fakes.push(f);
  return f;
}

/** A fresh config dir path (not created yet: login creates it 0700). */
function configDir(): string {
  return join(tempDir(), "herald");
}

describe("herald login against the contract", () => {
  test("polls at the interval, then each retry_after; a 429 waits its Retry-After; stores the login 0600", async () => {
    const f = fake([{ pending: 1 }, { slowDown: 2 }, { pending: 1 }, "credential"]);
    const config = configDir();
    const r = await herald(["login", "--base-url", `${f.url}/v1/`], { HERALD_CONFIG_DIR: config });
    const out = succeeded(r);

    expect(f.started).toEqual([{ device_name: hostname(), cli_version: HERALD_VERSION }]);
    expect(f.polls.map((p) => p.body)).toEqual(Array(4).fill({ device_secret: SECRET }));
    const gaps = f.polls.slice(1).map((p, i) => p.at - f.polls[i]!.at);
    // After a pending answer: its retry_after (1 s); after the 429: its Retry-After (2 s).
    expect(gaps[0]).toBeGreaterThanOrEqual(950);
    expect(gaps[1]).toBeGreaterThanOrEqual(1950);
    expect(gaps[2]).toBeGreaterThanOrEqual(950);
    expect(gaps[1]).toBeLessThan(3500);

    expect(r.stderr).toContain(`To sign in, open:\n  ${f.url}/device?user_code=WDJB-MJHT\n`);
    expect(r.stderr).toContain(`the code WDJB-MJHT (or enter it at ${f.url}/device)`);
    const lines = cells(out);
    expect(lines[0]).toEqual([`Logged in to ${f.url} as Fake account.`]);
    expect(Object.fromEntries(lines.slice(1))).toEqual({
      account: "acct_fake1",
      workspace: "Fake workspace (ws_fake1)",
      key: `laptop (${KEY.slice(0, 12)}…, live)`,
      "stored in": `${join(config, "credentials.json")} (mode 0600)`,
    });
    for (const text of [r.stdout, r.stderr]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(SECRET);
    }

    const path = join(config, "credentials.json");
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({
      base_url: f.url,
      api_key: KEY,
      workspace_id: "ws_fake1",
      account_id: "acct_fake1",
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(config).mode & 0o777).toBe(0o700);
  }, 20_000);

  test("--json prints the login without the key; an existing open directory is closed to 0700", async () => {
    const f = fake([]);
    const config = configDir();
    mkdirSync(config, { recursive: true });
    chmodSync(config, 0o755);
    writeFileSync(join(config, "credentials.json"), "old", { mode: 0o644 });
    const out = JSON.parse(
      succeeded(await herald(["login", "--base-url", f.url, "--json"], { HERALD_CONFIG_DIR: config })),
    );
    expect(out).toEqual({
      base_url: f.url,
      account_id: "acct_fake1",
      workspace_id: "ws_fake1",
      workspace_name: "Fake workspace",
      credentials_path: join(config, "credentials.json"),
    });
    expect(statSync(config).mode & 0o777).toBe(0o700);
    expect(statSync(join(config, "credentials.json")).mode & 0o777).toBe(0o600);
  }, 20_000);

  test("the server comes from HERALD_API_URL when there is no --base-url", async () => {
    const f = fake([]);
    const config = configDir();
    succeeded(await herald(["login"], { HERALD_CONFIG_DIR: config, HERALD_API_URL: f.url }));
    expect(JSON.parse(readFileSync(join(config, "credentials.json"), "utf8")).base_url).toBe(f.url);
  }, 20_000);

  const refusals: { name: string; step: TokenStep; message: string }[] = [
    {
      name: "denied in the browser",
      step: { problem: 403, code: "public_cli_authorization_denied", detail: "The person denied it." },
      message: "The person denied it. [public_cli_authorization_denied, request_id req_fake1]",
    },
    {
      name: "expired",
      step: { problem: 409, code: "public_cli_authorization_expired", detail: "It expired." },
      message: "It expired. [public_cli_authorization_expired, request_id req_fake1]",
    },
  ];
  for (const c of refusals)
    test(`${c.name}: exit 1 with the problem, nothing stored`, async () => {
      const f = fake([{ pending: 1 }, c.step]);
      const config = configDir();
      const r = await herald(["login", "--base-url", f.url], { HERALD_CONFIG_DIR: config });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim().split("\n").at(-1)).toBe(`herald: ${c.message}`);
      expect(existsSync(join(config, "credentials.json"))).toBe(false);
    }, 20_000);

  test("no server at the address: exit 3; a bad --base-url: exit 1 naming it", async () => {
    const port = await closedPort();
    const config = configDir();
    expect(
      failed(
        await herald(["login", "--base-url", `http://127.0.0.1:${port}`], { HERALD_CONFIG_DIR: config }),
        3,
      ),
    ).toContain("cannot reach Herald");
    expect(
      failed(await herald(["login", "--base-url", "ftp://x"], { HERALD_CONFIG_DIR: config }), 1),
    ).toContain("--base-url must use http: or https:");
  });
});

describe("the browser", () => {
  /** A directory with an `xdg-open` (and `open`) that records the address it was given. */
  function recordingOpener(): { bin: string; marker: string } {
    const bin = tempDir();
    const marker = join(bin, "opened.txt");
    for (const name of ["xdg-open", "open"]) {
      writeFileSync(join(bin, name), `#!/bin/sh\nprintf '%s' "$1" > '${marker}'\n`, { mode: 0o755 });
    }
    return { bin, marker };
  }

  const loginOnTerminal = async (env: Record<string, string>) =>
    (await heraldOnTerminal(["login"], env)).code;
  const terminal = HAS_TERMINAL ? test : test.skip;

  terminal(
    "at a terminal with an opener, the approval page opens in the browser",
    async () => {
      const f = fake([]);
      const { bin, marker } = recordingOpener();
      const env = {
        HERALD_CONFIG_DIR: configDir(),
        HERALD_API_URL: f.url,
        PATH: `${bin}:${process.env.PATH}`,
      };
      expect(await loginOnTerminal(env)).toBe(0);
      await Bun.sleep(200); // the opener runs detached
      expect(readFileSync(marker, "utf8")).toBe(`${f.url}/device?user_code=WDJB-MJHT`);
    },
    20_000,
  );

  terminal(
    "never with HERALD_NO_BROWSER=1, even at a terminal",
    async () => {
      const f = fake([]);
      const { bin, marker } = recordingOpener();
      const env = {
        HERALD_CONFIG_DIR: configDir(),
        HERALD_API_URL: f.url,
        HERALD_NO_BROWSER: "1",
        PATH: `${bin}:${process.env.PATH}`,
      };
      expect(await loginOnTerminal(env)).toBe(0);
      await Bun.sleep(200);
      expect(existsSync(marker)).toBe(false);
    },
    20_000,
  );

  test("never without a terminal, even with an opener on PATH", async () => {
    const f = fake([]);
    const { bin, marker } = recordingOpener();
    const proc = Bun.spawn([BUN, MAIN, "login", "--base-url", f.url], {
      cwd: ROOT,
      env: cleanEnv({ HERALD_CONFIG_DIR: configDir(), PATH: `${bin}:${process.env.PATH}` }),
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(0);
    await Bun.sleep(200);
    expect(existsSync(marker)).toBe(false);
    expect(stderr).toStartWith("To sign in, open:");
  }, 20_000);
});

describe("herald logout", () => {
  /** A config dir holding a login for `url`. */
  function stored(url: string, key = KEY): string {
    const config = configDir();
    mkdirSync(config, { recursive: true, mode: 0o700 });
    const login = { base_url: url, api_key: key, workspace_id: "ws_fake1", account_id: "acct_fake1" };
    writeFileSync(join(config, "credentials.json"), JSON.stringify(login), { mode: 0o600 });
    return config;
  }

  test("revokes the key on the server with the key itself, then deletes the login", async () => {
    const f = fake([]);
    const config = stored(f.url);
    const out = succeeded(await herald(["logout"], { HERALD_CONFIG_DIR: config }));
    expect(out.trim()).toBe(
      `Logged out: revoked the key on ${f.url}; removed ${join(config, "credentials.json")}.`,
    );
    expect(f.revoked).toEqual([KEY]);
    expect(existsSync(join(config, "credentials.json"))).toBe(false);
    const again = JSON.parse(succeeded(await herald(["logout", "--json"], { HERALD_CONFIG_DIR: config })));
    expect(again).toEqual({
      logged_out: false,
      revoked: false,
      credentials_path: join(config, "credentials.json"),
    });
  });

  test("a key the server already refuses still logs out here", async () => {
    const f = fake([], "refused");
    const config = stored(f.url);
    const out = JSON.parse(succeeded(await herald(["logout", "--json"], { HERALD_CONFIG_DIR: config })));
    expect(out).toMatchObject({ logged_out: true, revoked: false });
    expect(existsSync(join(config, "credentials.json"))).toBe(false);
  });

  test("no server: exit 3 and the login is kept; --local forgets it without the server", async () => {
    const config = stored(`http://127.0.0.1:${await closedPort()}`);
    const line = failed(await herald(["logout"], { HERALD_CONFIG_DIR: config }), 3);
    expect(line).toContain("the key is not revoked and the login is kept (herald logout --local");
    expect(existsSync(join(config, "credentials.json"))).toBe(true);
    const out = succeeded(await herald(["logout", "--local"], { HERALD_CONFIG_DIR: config }));
    expect(out.trim()).toBe(`Logged out: removed ${join(config, "credentials.json")}.`);
    expect(existsSync(join(config, "credentials.json"))).toBe(false);
  }, 20_000);
});

describe("login, whoami and logout against the real server", () => {
  const PASSWORD = "correct horse battery";
  let s: TestServer;
  let person: { email: string; accountId: string; workspaceId: string };
  beforeAll(async () => {
    s = await startTestServer();
    const email = "cli-person@example.com";
    const made = await bootstrapAccount(s.herald, { email, workspaceName: "CLI home", password: PASSWORD });
    person = { email, accountId: made.account_id, workspaceId: made.workspace_id };
  });
  afterAll(async () => {
    await s.stop();
  });

  test("the person approves on /device; the CLI stores the key, whoami uses it, logout revokes it", async () => {
    const config = configDir();
    const env = { HERALD_CONFIG_DIR: config };
    const proc = Bun.spawn([BUN, MAIN, "login", "--base-url", s.url], {
      cwd: ROOT,
      env: cleanEnv({ HERALD_NO_BROWSER: "1", ...env }),
      stdout: "pipe",
      stderr: "pipe",
      stdin: "ignore",
    });
    const stdout = new Response(proc.stdout).text();
    // The server's clock is manual: keep it ahead of the CLI's real-time polling, so no poll is early.
    const ticking = setInterval(() => s.clock.advance(2000), 200);
    try {
      let stderr = "";
      const decoder = new TextDecoder();
      const reader = proc.stderr.getReader();
      let address: string | undefined;
      while (!address) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`login ended before printing the address: ${stderr}`);
        stderr += decoder.decode(value);
        address = /^ {2}(http\S+\/device\?user_code=\S+)$/m.exec(stderr)?.[1];
      }
      reader.releaseLock();
      const browser = new TestBrowser(s);
      await browser.signIn(person.email, PASSWORD);
      const approved = await browser.submit(pathOf(address), { decision: "approve" }, "/device");
      expect(approved.status).toBe(200);
      expect(await proc.exited).toBe(0);
    } finally {
      clearInterval(ticking);
    }
    expect(await stdout).toStartWith(`Logged in to ${s.url} as `);

    const login = JSON.parse(readFileSync(join(config, "credentials.json"), "utf8"));
    expect(login).toMatchObject({ base_url: s.url, workspace_id: person.workspaceId });
    expect(login.api_key).toMatch(/^hk_live_/);
    expect(statSync(join(config, "credentials.json")).mode & 0o777).toBe(0o600);

    const me = JSON.parse(succeeded(await herald(["whoami", "--json"], env)));
    expect(me).toMatchObject({
      object: "account",
      id: person.accountId,
      authentication: { name: hostname() },
    });
    const shown = Object.fromEntries(cells(succeeded(await herald(["whoami"], env))));
    expect(shown).toMatchObject({
      from: join(config, "credentials.json"),
      workspace: `CLI home (${person.workspaceId})`,
    });

    const out = succeeded(await herald(["logout"], env));
    expect(out).toContain(`revoked the key on ${s.url}`);
    expect((await s.request("GET", "/v1/me", { key: login.api_key })).status).toBe(401);
    expect(existsSync(join(config, "credentials.json"))).toBe(false);
    expect(failed(await herald(["whoami"], env), 1)).toContain("not logged in");
  }, 30_000);
});
