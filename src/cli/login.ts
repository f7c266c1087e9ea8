// `herald login`, `logout` and `whoami`: the contract's browser handoff (start a CLI authorization,
// let the person approve it in the browser, poll for the key), the stored login, and who it is.
import { hostname } from "node:os";
import { HERALD_VERSION } from "../herald.ts";
import { loadClientConfig } from "../config.ts";
import { call, request } from "./api.ts";
import { flag, parseCommand, str } from "./args.ts";
import {
  connect,
  credentialsPath,
  deleteLogin,
  normalizeBaseUrl,
  readLogin,
  writeLogin,
} from "./credentials.ts";
import { ApiError, CommandError, NetworkError } from "./errors.ts";
import { fields, json, time } from "./format.ts";

type Env = Record<string, string | undefined>;

/** `herald login --help`. */
export const LOGIN_HELP = `Usage: herald login [--base-url URL] [--no-browser] [--json]

Signs this computer in to Herald through the browser: starts a CLI authorization, opens the
approval page (or prints its address and code), waits while you approve it there, and stores the
API key it receives in ${"$"}XDG_CONFIG_HOME/herald/credentials.json (else ~/.config/herald/;
HERALD_CONFIG_DIR overrides), readable by you only (mode 0600). The key is a live key named after
this computer, with the scopes the CLI needs; herald logout revokes it.

Options:
  --base-url URL   the Herald server (default: HERALD_API_URL, else the current login's server,
                   else HERALD_BASE_URL, else http://127.0.0.1:8080)
  --no-browser     only print the address (also HERALD_NO_BROWSER=1; never opened without a terminal)
  --json           print {base_url, account_id, workspace_id, workspace_name, credentials_path}`;

/** `herald logout --help`. */
export const LOGOUT_HELP = `Usage: herald logout [--local] [--json]

Revokes the stored login's API key on the server (POST /v1/me/revoke) and deletes the stored
login. A key the server already refuses (revoked elsewhere) still logs out here.

Options:
  --local   only delete the stored login (when the server cannot be reached; the key stays valid
            until revoked, e.g. with herald admin revoke-key or in the dashboard)
  --json    print {logged_out, revoked, credentials_path}`;

/** `herald whoami --help`. */
export const WHOAMI_HELP = `Usage: herald whoami [--json]

Shows the server, account, API key (name, prefix, environment, scopes) and default workspace the
client uses, and where the key comes from: HERALD_API_KEY when it is set, else the stored login.
--json prints the API's account object (GET /v1/me).`;

/** Longest wait for an approval; the server's expiry (30 minutes) normally ends it first. */
const MAX_WAIT_MS = 60 * 60 * 1000;
/** Consecutive failed polls (network, 5xx) tolerated before giving up. */
const MAX_POLL_FAILURES = 5;

/** The CLI authorization start response of the contract. */
interface Started {
  device_secret: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_at: string;
  interval: number;
}

/** The CLI credential exchange response of the contract. */
interface Credential {
  api_key: string;
  workspace_id: string;
  workspace_name: string;
  account_id: string;
}

/** This computer's name for the key, as the contract allows it (1–200 characters, no controls). */
function deviceName(): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed.
  const name = hostname()
    .replace(/[\u0000-\u001f\u007f]/g, "")
    .trim();
  return (name || "herald-cli").slice(0, 200);
}

/**
 * Opens `url` in the browser when a person is at a terminal and an opener exists (`open` on macOS,
 * `xdg-open` elsewhere); never with HERALD_NO_BROWSER=1 or --no-browser. True when one was started.
 */
/** Opens `url` in the browser when a person is at a terminal with an opener (never with HERALD_NO_BROWSER=1). */
export function openBrowser(url: string, env: Env, refused: boolean): boolean {
  if (refused || env.HERALD_NO_BROWSER === "1") return false;
  if (!process.stdin.isTTY || !process.stderr.isTTY) return false;
  const opener = Bun.which(process.platform === "darwin" ? "open" : "xdg-open");
  if (!opener) return false;
  try {
    Bun.spawn([opener, url], { stdio: ["ignore", "ignore", "ignore"] }).unref();
    return true;
  } catch {
    return false;
  }
}

/**
 * Polls the token exchange until the credential comes: every `interval` seconds, then every
 * `retry_after` the pending answers give; a 429 (polled too early: RFC 8628 slow_down) waits its
 * Retry-After, else 5 s more. A few network or server failures in a row are waited out.
 */
async function waitForCredential(target: { apiUrl: string }, started: Started): Promise<Credential> {
  let wait = Math.max(1, started.interval) * 1000;
  let failures = 0;
  const giveUpAt = Date.now() + MAX_WAIT_MS;
  for (;;) {
    if (Date.now() + wait > giveUpAt)
      throw new CommandError("gave up waiting for the approval; run herald login again");
    await Bun.sleep(wait);
    let body: any;
    try {
      body = (
        await request(
          { apiUrl: target.apiUrl, apiKey: null },
          "POST",
          "/cli-authorizations/token",
          { device_secret: started.device_secret },
          { tries: 1 },
        )
      ).body;
    } catch (error) {
      if (error instanceof ApiError && error.status === 429) {
        wait = error.retryAfterMs ?? wait + 5000;
        continue;
      }
      const passing = error instanceof NetworkError || (error instanceof ApiError && error.status >= 500);
      if (passing && ++failures < MAX_POLL_FAILURES) continue;
      throw error;
    }
    failures = 0;
    if (body?.status === "authorized" && typeof body.api_key === "string") return body as Credential;
    const retryAfter = Number(body?.retry_after);
    wait = (Number.isFinite(retryAfter) && retryAfter >= 1 ? retryAfter : started.interval) * 1000;
  }
}

/** Runs `herald login`; the instructions go to stderr while it waits, the result to stdout. */
export async function runLogin(args: string[], env: Env = process.env): Promise<string> {
  const p = parseCommand(
    args,
    { "base-url": { type: "string" }, "no-browser": { type: "boolean" } },
    [0, 0],
    "herald login --help",
  );
  if (flag(p, "help")) return LOGIN_HELP;
  const flagUrl = str(p, "base-url");
  const previous = flagUrl || env.HERALD_API_URL ? null : await readLogin(env).catch(() => null);
  const baseUrl = flagUrl
    ? normalizeBaseUrl(flagUrl, "--base-url")
    : env.HERALD_API_URL || !previous
      ? loadClientConfig(env).apiUrl
      : previous.base_url;
  const server = { apiUrl: baseUrl, apiKey: null };

  const started: Started = await call(server, "POST", "/cli-authorizations", {
    device_name: deviceName(),
    cli_version: HERALD_VERSION,
  });
  const code = new URL(started.verification_uri_complete).searchParams.get("user_code");
  const opened = openBrowser(started.verification_uri_complete, env, flag(p, "no-browser"));
  const lines = [
    opened ? "Opened your browser to approve this computer. If it did not open, visit:" : "To sign in, open:",
    `  ${started.verification_uri_complete}`,
    ...(code
      ? [`and check that the page shows the code ${code} (or enter it at ${started.verification_uri}).`]
      : []),
    `Waiting for the approval (until ${time(started.expires_at)}; Ctrl-C stops)...`,
  ];
  process.stderr.write(`${lines.join("\n")}\n`);

  const credential = await waitForCredential(server, started);
  const path = await writeLogin(
    {
      base_url: baseUrl,
      api_key: credential.api_key,
      workspace_id: credential.workspace_id,
      account_id: credential.account_id,
    },
    env,
  );
  const me = await call({ apiUrl: baseUrl, apiKey: credential.api_key }, "GET", "/me").catch(() => null);
  const result = {
    base_url: baseUrl,
    account_id: credential.account_id,
    workspace_id: credential.workspace_id,
    workspace_name: credential.workspace_name,
    credentials_path: path,
  };
  if (env.HERALD_API_KEY)
    process.stderr.write(
      "Note: HERALD_API_KEY is set; commands use it, not this login, until it is unset.\n",
    );
  if (flag(p, "json")) return json(result);
  return [
    `Logged in to ${baseUrl}${me ? ` as ${me.name}` : ""}.`,
    fields([
      ["account", credential.account_id],
      ["workspace", `${credential.workspace_name} (${credential.workspace_id})`],
      [
        "key",
        me
          ? `${me.authentication.name} (${me.authentication.prefix}…, ${me.authentication.environment})`
          : null,
      ],
      ["stored in", `${path} (mode 0600)`],
    ]),
  ].join("\n");
}

/** Runs `herald logout`. */
export async function runLogout(args: string[], env: Env = process.env): Promise<string> {
  const p = parseCommand(args, { local: { type: "boolean" } }, [0, 0], "herald logout --help");
  if (flag(p, "help")) return LOGOUT_HELP;
  const path = credentialsPath(env);
  const login = await readLogin(env).catch((error) => {
    // A damaged file is still ours to remove.
    if (flag(p, "local")) return null;
    throw error;
  });
  const answer = (outcome: { logged_out: boolean; revoked: boolean }, text: string) =>
    flag(p, "json") ? json({ ...outcome, credentials_path: path }) : text;
  if (!login && !flag(p, "local"))
    return answer({ logged_out: false, revoked: false }, `Not logged in (no ${path}).`);
  let revoked = false;
  let note = "";
  if (login && !flag(p, "local")) {
    const apiUrl = env.HERALD_API_URL ? loadClientConfig(env).apiUrl : login.base_url;
    try {
      await call({ apiUrl, apiKey: login.api_key }, "POST", "/me/revoke", { confirmed: true }, { tries: 3 });
      revoked = true;
      note = `revoked the key on ${apiUrl}; `;
    } catch (error) {
      if (error instanceof NetworkError)
        throw new NetworkError(
          `${error.message}; the key is not revoked and the login is kept (herald logout --local forgets it here only)`,
        );
      // The server refuses the key already (revoked elsewhere, expired): nothing left to revoke.
      if (!(error instanceof ApiError && error.status === 401)) throw error;
      note = "the server already refused the key; ";
    }
  }
  const removed = await deleteLogin(env);
  return answer(
    { logged_out: removed, revoked },
    removed ? `Logged out: ${note}removed ${path}.` : `Not logged in (no ${path}).`,
  );
}

/** Runs `herald whoami`. */
export async function runWhoami(args: string[], env: Env = process.env): Promise<string> {
  const p = parseCommand(args, {}, [0, 0], "herald whoami --help");
  if (flag(p, "help")) return WHOAMI_HELP;
  const connection = await connect("any scope", env);
  const me = await call(connection, "GET", "/me");
  if (flag(p, "json")) return json(me);
  let workspace = connection.workspaceId;
  const listing = await call(connection, "GET", "/workspaces?limit=100").catch(() => null);
  const known: { id: string; name: string }[] = listing?.data ?? [];
  if (!workspace && known.length === 1) workspace = known[0]!.id;
  const name = known.find((w) => w.id === workspace)?.name;
  const auth = me.authentication;
  return fields([
    ["server", connection.apiUrl],
    ["account", `${me.name} (${me.id})`],
    ["key", `${auth.name} (${auth.prefix}…, ${auth.environment})`],
    ["from", connection.source === "login" ? credentialsPath(env) : "HERALD_API_KEY"],
    ["scopes", auth.scopes.join(", ")],
    ["workspaces", auth.workspace_access_mode === "all" ? "all of the account's" : "selected"],
    [
      "workspace",
      workspace
        ? name
          ? `${name} (${workspace})`
          : workspace
        : `none by default (${known.length} available; choose with --workspace)`,
    ],
    ["expires", time(auth.expires_at) ?? "never"],
  ]);
}
