import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { herald } from "./cli/helpers.ts";
import { spawnHerald } from "./helpers/process.ts";
import { CREDENTIAL_TTL_MS } from "../src/modules/keys/credential-cache.ts";

// The real CLI, run as a process the way a user runs it from a checkout.

/** stderr of a failed command: exactly one non-empty line. */
function oneLine(text: string): string {
  const lines = text.trim().split("\n");
  expect(lines.length).toBe(1);
  return lines[0]!;
}

async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}

const tempDirs: string[] = [];
function tempDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "herald-cli-"));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe("help and usage", () => {
  test("--help prints the usage and exits 0", async () => {
    const r = await herald(["--help"], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: herald <command>");
    for (const command of ["serve", "admin", "version"]) expect(r.stdout).toContain(command);
  });

  test("no command prints the usage and exits 0", async () => {
    const r = await herald([], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: herald <command>");
  });

  test("admin --help lists bootstrap and create-key with their options", async () => {
    const r = await herald(["admin", "--help"], {});
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: herald admin");
    const commands = ["bootstrap", "create-key", "list-keys", "revoke-key", "--key", "--account"];
    const options = ["--email", "--workspace-name", "--scopes", "--workspaces", "--expires-at", "--json"];
    for (const word of [...commands, ...options]) expect(r.stdout).toContain(word);
  });

  test("admin bootstrap --help and help admin print the admin usage", async () => {
    for (const args of [
      ["admin", "bootstrap", "--help"],
      ["help", "admin"],
    ]) {
      const r = await herald(args, {});
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Usage: herald admin");
    }
  });

  test("serve --help prints its usage and does not start a server", async () => {
    const r = await herald(["serve", "--help"], { HERALD_PORT: "abc" });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: herald serve");
    expect(r.stdout).toContain("HERALD_DATA_DIR");
  });

  test("version prints the version", async () => {
    const r = await herald(["version"], {});
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  test("an unknown command exits 2 and says so on stderr", async () => {
    const r = await herald(["frobnicate"], {});
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain('unknown command "frobnicate"');
  });

  test("an unknown admin command or option exits 2 with one line", async () => {
    const dataDir = tempDataDir();
    const unknownCommand = await herald(["admin", "explode"], { HERALD_DATA_DIR: dataDir });
    expect(unknownCommand.code).toBe(2);
    expect(oneLine(unknownCommand.stderr)).toContain('unknown admin command "explode"');
    const unknownOption = await herald(
      ["admin", "bootstrap", "--email", "a@example.com", "--workspace-name", "W", "--colour", "red"],
      { HERALD_DATA_DIR: dataDir },
    );
    expect(unknownOption.code).toBe(2);
    expect(oneLine(unknownOption.stderr)).toContain("--colour");
  });
});

describe("admin commands on a data dir", () => {
  let dataDir: string;
  let bootstrapped: { account_id: string; workspace_id: string; api_key: string };
  const env = () => ({ HERALD_DATA_DIR: dataDir });

  beforeAll(async () => {
    dataDir = tempDataDir();
  });

  test("bootstrap --json prints exactly one JSON object with the new ids and key", async () => {
    const r = await herald(
      ["admin", "bootstrap", "--email", "owner@example.com", "--workspace-name", "CLI workspace", "--json"],
      env(),
    );
    expect(r.code).toBe(0);
    expect(r.stdout.endsWith("\n")).toBe(true);
    expect(r.stdout.trim().split("\n").length).toBe(1);
    bootstrapped = JSON.parse(r.stdout);
    expect(Object.keys(bootstrapped).sort()).toEqual(["account_id", "api_key", "workspace_id"]);
    expect(bootstrapped.account_id).toMatch(/^acc_/);
    expect(bootstrapped.workspace_id).toMatch(/^ws_/);
    expect(bootstrapped.api_key).toMatch(/^hk_live_[0-9A-Za-z]{32,}$/);
    expect(r.stderr).toBe("");
  });

  test("a second bootstrap with the same address fails with exit 1 and one line", async () => {
    const r = await herald(
      ["admin", "bootstrap", "--email", "OWNER@example.com", "--workspace-name", "Again", "--json"],
      env(),
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const line = oneLine(r.stderr);
    expect(line).toStartWith("herald: ");
    expect(line).toContain("already exists");
  });

  test("bootstrap without --email (or --workspace-name) exits 2 naming the option", async () => {
    const noEmail = await herald(["admin", "bootstrap", "--workspace-name", "W", "--json"], env());
    expect(noEmail.code).toBe(2);
    expect(noEmail.stdout).toBe("");
    expect(oneLine(noEmail.stderr)).toContain("--email is required");
    const noName = await herald(["admin", "bootstrap", "--email", "x@example.com"], env());
    expect(noName.code).toBe(2);
    expect(oneLine(noName.stderr)).toContain("--workspace-name is required");
  });

  test("bootstrap with a bad address exits 1 with one line", async () => {
    const r = await herald(
      ["admin", "bootstrap", "--email", "not-an-address", "--workspace-name", "W"],
      env(),
    );
    expect(r.code).toBe(1);
    expect(oneLine(r.stderr)).toContain("not an e-mail address");
  });

  test("bootstrap without --json explains what was made and how to use the key", async () => {
    const r = await herald(
      ["admin", "bootstrap", "--email", "human@example.com", "--workspace-name", "Readable"],
      env(),
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Created account acc_\S+ with workspace ws_/);
    const key = r.stdout.match(/hk_live_[0-9A-Za-z]+/)![0];
    expect(r.stdout).toContain(`curl -H "Authorization: Bearer ${key}" http://127.0.0.1:8080/v1/account`);
  });

  test("create-key --json prints {credential_id, api_key} with a test key", async () => {
    const r = await herald(
      [
        "admin",
        "create-key",
        "--account",
        bootstrapped.account_id,
        "--name",
        "reader",
        "--env",
        "test",
        "--scopes",
        "posts:read,workspaces:read",
        "--workspaces",
        bootstrapped.workspace_id,
        "--json",
      ],
      env(),
    );
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n").length).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out).sort()).toEqual(["api_key", "credential_id"]);
    expect(out.credential_id).toMatch(/^key_/);
    expect(out.api_key).toMatch(/^hk_test_[0-9A-Za-z]{32,}$/);
  });

  test("create-key with defaults and an expiry", async () => {
    const r = await herald(
      [
        "admin",
        "create-key",
        "--account",
        bootstrapped.account_id,
        "--name",
        "ci",
        "--expires-at",
        "2030-01-01T00:00:00Z",
        "--json",
      ],
      env(),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).api_key).toMatch(/^hk_live_/);
  });

  const aMomentAgo = () => new Date(Date.now() - 1000).toISOString();
  const failures: { name: string; args: (a: typeof bootstrapped) => string[]; message: RegExp }[] = [
    {
      name: "unknown scope",
      args: (a) => ["--account", a.account_id, "--name", "n", "--scopes", "posts:read,posts:destroy"],
      message: /unknown scope.*posts:destroy/,
    },
    {
      name: "unknown workspace",
      args: (a) => ["--account", a.account_id, "--name", "n", "--workspaces", `${a.workspace_id},ws_nope`],
      message: /unknown workspace.*ws_nope/,
    },
    {
      name: "empty workspace list",
      args: (a) => ["--account", a.account_id, "--name", "n", "--workspaces", ","],
      message: /workspace/,
    },
    {
      name: "bad --expires-at",
      args: (a) => ["--account", a.account_id, "--name", "n", "--expires-at", "next tuesday"],
      message: /--expires-at/,
    },
    {
      name: "--expires-at without an offset",
      args: (a) => ["--account", a.account_id, "--name", "n", "--expires-at", "2030-01-01T00:00:00"],
      message: /--expires-at.*offset/,
    },
    {
      name: "--expires-at in the past",
      message: /--expires-at must be in the future/,
      args: (a) => ["--account", a.account_id, "--name", "n", "--expires-at", "2020-01-01T00:00:00Z"],
    },
    {
      name: "--expires-at a moment ago",
      message: /--expires-at must be in the future/,
      args: (a) => ["--account", a.account_id, "--name", "n", "--expires-at", aMomentAgo()],
    },
    {
      name: "bad --env",
      args: (a) => ["--account", a.account_id, "--name", "n", "--env", "prod"],
      message: /--env must be live or test/,
    },
    {
      name: "unknown account",
      args: () => ["--account", "acc_missing", "--name", "n"],
      message: /no account acc_missing/,
    },
    { name: "missing --account", args: () => ["--name", "n"], message: /--account is required/ },
    { name: "missing --name", args: (a) => ["--account", a.account_id], message: /--name is required/ },
  ];
  for (const f of failures) {
    test(`create-key: ${f.name} fails with a clear one-line message`, async () => {
      const r = await herald(["admin", "create-key", ...f.args(bootstrapped), "--json"], env());
      expect(r.code).not.toBe(0);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      const line = oneLine(r.stderr);
      expect(line).toStartWith("herald: ");
      expect(line).toMatch(f.message);
    });
  }

  test("create-key refused for its expiry stores no key", async () => {
    const r = await herald(["admin", "list-keys", "--account", bootstrapped.account_id, "--json"], env());
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).map((k: { name: string }) => k.name)).not.toContain("n");
  });

  test("list-keys --json lists every key of the account, newest first, without secrets", async () => {
    const r = await herald(["admin", "list-keys", "--account", bootstrapped.account_id, "--json"], env());
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim().split("\n").length).toBe(1);
    const keys = JSON.parse(r.stdout) as Record<string, any>[];
    expect(keys.map((k) => k.name)).toEqual(["ci", "reader", "bootstrap"]);
    for (const key of keys) {
      expect(Object.keys(key).sort()).toEqual([
        "created_at",
        "credential_id",
        "environment",
        "expires_at",
        "last_used_at",
        "name",
        "prefix",
        "revoked_at",
        "scopes",
        "workspace_access_mode",
        "workspace_ids",
      ]);
      expect(key.credential_id).toMatch(/^key_/);
      expect(key.prefix).toMatch(/^hk_(live|test)_[0-9A-Za-z]{4}$/);
      expect(Date.parse(key.created_at)).not.toBeNaN();
    }
    const reader = keys.find((k) => k.name === "reader")!;
    expect(reader).toMatchObject({
      environment: "test",
      workspace_access_mode: "selected",
      workspace_ids: [bootstrapped.workspace_id],
      expires_at: null,
      revoked_at: null,
      last_used_at: null,
    });
    expect([...reader.scopes].sort()).toEqual(["posts:read", "workspaces:read"]);
    const ci = keys.find((k) => k.name === "ci");
    expect(ci).toMatchObject({ expires_at: "2030-01-01T00:00:00.000Z", workspace_access_mode: "all" });
    const owner = keys.find((k) => k.prefix === bootstrapped.api_key.slice(0, 12))!;
    expect(owner.workspace_ids).toEqual([]);
    expect(r.stdout).not.toContain(bootstrapped.api_key);
    expect(r.stdout).not.toContain("secret");
    expect(r.stdout).not.toContain("hash");
  });

  test("list-keys without --json prints an aligned table with a header", async () => {
    const r = await herald(["admin", "list-keys", "--account", bootstrapped.account_id], env());
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    const columns = [
      "CREDENTIAL ID",
      "NAME",
      "PREFIX",
      "ENV",
      "SCOPES",
      "WORKSPACES",
      "CREATED",
      "LAST USED",
      "EXPIRES",
      "REVOKED",
    ];
    expect(lines[0]!.split(/ {2,}/)).toEqual(columns);
    expect(lines.length).toBe(4);
    const reader = lines.find((l) => l.includes(" reader "))!;
    expect(reader).toContain("posts:read,workspaces:read");
    expect(reader).toContain(bootstrapped.workspace_id);
    expect(lines.find((l) => l.includes(" ci "))).toContain("2030-01-01T00:00:00Z");
    expect(lines.find((l) => l.includes(bootstrapped.api_key.slice(0, 12)))).toMatch(/ all +all /);
    expect(r.stdout).not.toContain(bootstrapped.api_key);
  });

  test("list-keys: unknown or missing account exits 2 with one line", async () => {
    const unknown = await herald(["admin", "list-keys", "--account", "acc_missing"], env());
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe("");
    expect(oneLine(unknown.stderr)).toBe("herald: no account acc_missing");
    const missing = await herald(["admin", "list-keys"], env());
    expect(missing.code).toBe(2);
    expect(oneLine(missing.stderr)).toContain("--account is required");
  });

  test("revoke-key by credential id, then again: revoked once, idempotent after", async () => {
    const create = ["admin", "create-key", "--account", bootstrapped.account_id, "--name", "doom", "--json"];
    const created = JSON.parse((await herald(create, env())).stdout);
    const first = await herald(["admin", "revoke-key", "--key", created.credential_id], env());
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`Revoked API key ${created.credential_id}`);
    const again = await herald(["admin", "revoke-key", "--key", created.credential_id, "--json"], env());
    expect(again.code).toBe(0);
    const out = JSON.parse(again.stdout);
    expect(out).toMatchObject({ credential_id: created.credential_id, already_revoked: true });
    const human = await herald(["admin", "revoke-key", "--key", created.credential_id], env());
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`was already revoked at ${out.revoked_at}`);
    const list = await herald(["admin", "list-keys", "--account", bootstrapped.account_id, "--json"], env());
    const keys = JSON.parse(list.stdout);
    expect(
      keys.find((k: { credential_id: string }) => k.credential_id === created.credential_id).revoked_at,
    ).toBe(out.revoked_at);
    expect(keys.filter((k: { revoked_at: string | null }) => k.revoked_at !== null).length).toBe(1);
  });

  test("revoke-key by prefix --json", async () => {
    const create = ["admin", "create-key", "--account", bootstrapped.account_id, "--name", "pre", "--json"];
    const created = JSON.parse((await herald(create, env())).stdout);
    const r = await herald(["admin", "revoke-key", "--key", created.api_key.slice(0, 12), "--json"], env());
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n").length).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out).sort()).toEqual(["already_revoked", "credential_id", "revoked_at"]);
    expect(out).toMatchObject({ credential_id: created.credential_id, already_revoked: false });
    expect(Date.parse(out.revoked_at)).not.toBeNaN();
  });

  test("revoke-key: an unknown key or a missing --key exits 2 with one line", async () => {
    const unknown = await herald(["admin", "revoke-key", "--key", "key_nope"], env());
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe("");
    expect(oneLine(unknown.stderr)).toBe("herald: no API key with credential id or prefix key_nope");
    const missing = await herald(["admin", "revoke-key", "--json"], env());
    expect(missing.code).toBe(2);
    expect(oneLine(missing.stderr)).toContain("--key is required");
  });
});

describe("serve as a process", () => {
  test("on an empty data dir: the setup link and the CLI path, /health, then admin commands while it runs", async () => {
    const dataDir = join(tempDataDir(), "fresh"); // does not exist yet
    const server = await spawnHerald({ env: { HERALD_DATA_DIR: dataDir } });
    const origin = server.url;
    const env = { HERALD_DATA_DIR: dataDir, HERALD_PORT: String(server.port) };
    try {
      await waitFor("the first-start hint", () => {
        if (server.stdout().includes("admin bootstrap")) return true;
        if (!server.running()) throw new Error(`serve exited ${server.proc.exitCode}: ${server.stderr()}`);
        return undefined;
      });
      expect(server.stdout()).toContain(`listening on ${origin}`);
      expect(server.stdout()).toContain("No account exists yet");
      expect(server.stdout()).toContain(`admin bootstrap --email`);
      expect(server.stdout()).toContain(`HERALD_DATA_DIR=${JSON.stringify(dataDir)}`);
      // Where things are, and what mail means for new accounts (no SMTP here).
      expect(server.stdout()).toContain(`API     ${origin}/v1 (docs ${origin}/v1/docs)`);
      expect(server.stdout()).toContain("Mail    not configured (HERALD_SMTP_URL is not set)");
      // The one-time setup link opens the setup form; `admin setup-link` replaces it.
      const printed = /(http:\/\/\S+\/setup\?token=[A-Za-z0-9_-]+)/.exec(server.stdout())![1]!;
      expect(printed.startsWith(`${origin}/setup?token=`)).toBe(true);
      expect((await fetch(printed)).status).toBe(200);
      const relinked = await herald(["admin", "setup-link", "--json"], env);
      expect(relinked.code).toBe(0);
      const { setup_url } = JSON.parse(relinked.stdout);
      expect(setup_url).toStartWith(`${origin}/setup?token=`);
      expect((await fetch(setup_url)).status).toBe(200);
      expect((await fetch(printed)).status).toBe(404);

      const health = await waitFor("/health", async () => {
        try {
          const r = await fetch(`${origin}/health`);
          return r.ok ? ((await r.json()) as Record<string, unknown>) : undefined;
        } catch {
          return undefined;
        }
      });
      expect(health).toMatchObject({ status: "ok", database: "ok" });
      expect((await fetch(`${origin}/v1/account`)).status).toBe(401);

      // Bootstrap on the same data dir while the server holds it open.
      const boot = await herald(
        ["admin", "bootstrap", "--email", "live@example.com", "--workspace-name", "Running", "--json"],
        env,
      );
      expect(boot.code).toBe(0);
      const created = JSON.parse(boot.stdout);
      // Set up now: no more setup links, and the last one answers "already set up".
      const noLink = await herald(["admin", "setup-link"], env);
      expect(noLink.code).toBe(1);
      expect(oneLine(noLink.stderr)).toContain(
        `already has an account, so it has no setup page; sign in at ${origin}/login`,
      );
      expect((await fetch(setup_url)).status).toBe(410);
      const account = await fetch(`${origin}/v1/account`, {
        headers: { authorization: `Bearer ${created.api_key}` },
      });
      expect(account.status).toBe(200);
      const accountBody = (await account.json()) as any;
      expect(accountBody.id).toBe(created.account_id);
      expect(accountBody.name).toBe("Running");
      expect(accountBody.authentication).toMatchObject({
        environment: "live",
        workspace_access_mode: "all",
        prefix: created.api_key.slice(0, 12),
      });

      const key = await herald(
        [
          "admin",
          "create-key",
          "--account",
          created.account_id,
          "--name",
          "reader",
          "--env",
          "test",
          "--scopes",
          "posts:read,workspaces:read",
          "--workspaces",
          created.workspace_id,
          "--json",
        ],
        env,
      );
      expect(key.code).toBe(0);
      const { credential_id, api_key } = JSON.parse(key.stdout);
      const asReader = await fetch(`${origin}/v1/account`, {
        headers: { authorization: `Bearer ${api_key}` },
      });
      expect(asReader.status).toBe(200);
      const readerBody = (await asReader.json()) as any;
      expect(readerBody.id).toBe(created.account_id);
      expect(readerBody.authentication).toMatchObject({
        credential_id,
        name: "reader",
        environment: "test",
        workspace_access_mode: "selected",
        expires_at: null,
      });
      expect([...readerBody.authentication.scopes].sort()).toEqual(["posts:read", "workspaces:read"]);
      const workspaces = await fetch(`${origin}/v1/workspaces`, {
        headers: { authorization: `Bearer ${api_key}` },
      });
      expect(workspaces.status).toBe(200);
      expect(((await workspaces.json()) as any).data.map((w: { id: string }) => w.id)).toEqual([
        created.workspace_id,
      ]);
      // The reader key lacks team:write.
      const invite = await fetch(`${origin}/v1/account/invitations`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${api_key}`,
          "content-type": "application/json",
          "idempotency-key": "k1",
        },
        body: JSON.stringify({ email: "someone@example.com" }),
      });
      expect(invite.status).toBe(403);

      // Revoked from the command line while the server runs: once the server's credential window has
      // passed (the command is another process), requests are 401, and it is audited.
      const revoke = await herald(["admin", "revoke-key", "--key", credential_id, "--json"], env);
      expect(revoke.code).toBe(0);
      expect(JSON.parse(revoke.stdout)).toMatchObject({ credential_id, already_revoked: false });
      await Bun.sleep(CREDENTIAL_TTL_MS + 100);
      const asRevoked = { authorization: `Bearer ${api_key}` };
      const refused = await fetch(`${origin}/v1/account`, { headers: asRevoked });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toMatchObject({
        code: "public_authentication_required",
        detail: "The API key has been revoked.",
      });
      const owner = { authorization: `Bearer ${created.api_key}` };
      const audit = await fetch(`${origin}/v1/audit-records`, { headers: owner });
      const actions = ((await audit.json()) as any).data.map((r: any) => `${r.action} ${r.target.id}`);
      expect(actions).toContain(`api_key.revoked ${credential_id}`);
      expect(actions).toContain(`api_key.created ${credential_id}`);

      // Nothing secret reached the server's output.
      expect(server.log()).not.toContain(created.api_key);
      expect(server.log()).not.toContain(api_key);

      // SIGTERM stops it cleanly.
      expect(await server.stop()).toBe(0);
    } finally {
      await server.kill();
    }
  }, 60_000);

  test("serve on a data dir with an account prints no first-start hint", async () => {
    const dataDir = tempDataDir();
    const env = { HERALD_DATA_DIR: dataDir };
    expect(
      (
        await herald(
          ["admin", "bootstrap", "--email", "a@example.com", "--workspace-name", "W", "--json"],
          env,
        )
      ).code,
    ).toBe(0);
    const server = await spawnHerald({ env });
    try {
      await server.waitForHealth({ timeoutMs: 10_000, pollMs: 25 });
    } finally {
      await server.stop();
    }
    const stdout = server.stdout();
    expect(stdout).toContain("listening on");
    expect(stdout).not.toContain("No account exists yet");
    expect(stdout).not.toContain("/setup?token=");
    // Made by admin bootstrap without choosing: signup stays open; the banner says where to sign in.
    expect(stdout).toContain("Signup  anyone may sign up");
    expect(stdout).toContain(`Next    sign in at ${server.url}/login`);
  }, 60_000);

  test("a bad config value makes serve exit non-zero with one line naming it", async () => {
    const r = await herald(["serve"], { HERALD_DATA_DIR: tempDataDir(), HERALD_PORT: "abc" });
    expect(r.code).not.toBe(0);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const line = oneLine(r.stderr);
    expect(line).toContain("HERALD_PORT");
    expect(line).toStartWith("herald: ");
  });

  test("a bad config value makes admin commands fail the same way, and a secret in it is hidden", async () => {
    const r = await herald(["admin", "bootstrap", "--email", "a@example.com", "--workspace-name", "W"], {
      HERALD_DATA_DIR: tempDataDir(),
      HERALD_SMTP_URL: "smtp://user:hunter2-secret@mail example.com",
    });
    expect(r.code).toBe(1);
    const line = oneLine(r.stderr);
    expect(line).toContain("HERALD_SMTP_URL");
    expect(line).not.toContain("hunter2");
  });

  test("a port in use makes serve exit 1 with one line naming HERALD_PORT", async () => {
    const occupant = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("taken") });
    try {
      const r = await herald(["serve"], {
        HERALD_DATA_DIR: tempDataDir(),
        HERALD_PORT: String(occupant.port),
      });
      expect(r.code).toBe(1);
      const line = oneLine(r.stderr);
      expect(line).toStartWith("herald: ");
      expect(line).toContain("HERALD_PORT");
      expect(line).toContain(String(occupant.port));
    } finally {
      await occupant.stop(true);
    }
  });

  test("serve refuses arguments", async () => {
    const r = await herald(["serve", "--port", "1234"], { HERALD_DATA_DIR: tempDataDir() });
    expect(r.code).toBe(2);
    expect(oneLine(r.stderr)).toContain("serve takes no arguments");
  });
});
