import { parseArgs } from "node:util";
import { loadConfig } from "../config.ts";
import { engineOf } from "../db/engine.ts";
import type { Db } from "../db/open.ts";
import type { Herald } from "../herald.ts";
import { inTransaction } from "../db/transaction.ts";
import { ALL_SCOPES, isScope, type Scope } from "../core/scopes.ts";
import { findAccount } from "../modules/account/repo.ts";
import { BootstrapError, bootstrapAccount } from "../modules/account/bootstrap.ts";
import { issueSetupToken, setupUrl } from "../modules/installation/service.ts";
import { recordAudit } from "../modules/audit/repo.ts";
import { listApiKeys } from "../modules/keys/repo.ts";
import { createAdminResetLink } from "../modules/password-reset/service.ts";
import { confirmAddressByHand } from "../modules/signup/confirmation.ts";
import {
  createApiKey,
  KeyReferenceError,
  type NewKeyInput,
  revokeApiKey,
  UnknownWorkspacesError,
} from "../modules/keys/service.ts";
import { iso } from "../lib/clock.ts";
import { openHerald } from "../server.ts";
import { createLogger } from "../lib/logger.ts";
import { UsageError } from "./errors.ts";

// UsageError lives with the client's errors (a light module); re-exported for the operator commands.
export { UsageError };

export const ADMIN_HELP = `Usage: herald admin <command> [options]

Commands:
  bootstrap    Create an account, its owner, a first workspace and a live API key with every scope.
               --email E            owner's e-mail address (required)
               --workspace-name W   name of the first workspace, 1-200 characters (required)
               --password P         owner's password for the web pages (optional)
               --json               print {"account_id","workspace_id","api_key"} only

  create-key   Create another API key for an account.
               --account A          account id, acc_... (required)
               --name N             a name for the key (required)
               --env live|test      environment (default live; only live keys publish)
               --scopes all|s1,s2   scopes (default all): ${ALL_SCOPES.join(", ")}
               --workspaces all|ws_a,ws_b   workspaces the key may use (default all)
               --expires-at T       ISO 8601 expiry with a UTC offset (optional)
               --json               print {"credential_id","api_key"} only

  list-keys    List every API key of an account (never the key itself): id, name, prefix, environment,
               scopes, workspaces, created, last used, expires, revoked.
               --account A          account id, acc_... (required)
               --json               print a JSON array instead of a table

  setup-link   Print a new one-time link to /setup, where the first account is made in a browser (only
               while no account exists; the link herald serve printed stops working).
               --json               print {"setup_url"} only

  revoke-key   Revoke an API key: the API refuses it (401) from then on. Revoking it again changes nothing.
               --key K              credential id (key_...) or prefix (hk_live_Ab3d) of the key (required)
               --json               print {"credential_id","revoked_at","already_revoked"} only

  reset-password
               Print a one-time link (it works for an hour) where a person chooses a new password;
               setting it signs them out everywhere (API keys keep working). Needs no mail.
               --email E            the person's e-mail address (required)
               --json               print {"reset_url","expires_at"} only

  confirm-email
               Confirm a person's address by hand, as the link of its confirmation e-mail would.
               --email E            the person's e-mail address (required)
               --json               print {"email","already_confirmed"} only

All work on HERALD_DATA_DIR (default ./storage), also while the server is running there.
The API key is shown once; Herald keeps only its hash.`;

function parse(args: string[], options: Record<string, { type: "string" | "boolean" }>) {
  try {
    return parseArgs({
      args,
      options: { ...options, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: false,
    }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value === "")
    throw new UsageError(`--${name} is required (see herald admin --help)`);
  return value;
}

/** The admin commands by name; each parses its own options and returns the text to print. */
const ADMIN_COMMANDS: Record<string, (args: string[]) => Promise<string>> = {
  bootstrap: bootstrapCommand,
  "create-key": createKeyCommand,
  "list-keys": listKeysCommand,
  "revoke-key": revokeKeyCommand,
  "reset-password": resetPasswordCommand,
  "confirm-email": confirmEmailCommand,
  "setup-link": setupLinkCommand,
};

/** Runs `herald admin …`; returns the text to print on stdout. */
export async function runAdmin(args: string[]): Promise<string> {
  const [command, ...rest] = args;
  if (!command || command === "--help" || command === "-h" || command === "help") return ADMIN_HELP;
  const run = Object.hasOwn(ADMIN_COMMANDS, command) ? ADMIN_COMMANDS[command] : undefined;
  if (!run) throw new UsageError(`unknown admin command "${command}" (see herald admin --help)`);
  return run(rest);
}

/** `herald admin bootstrap`: the account, its owner, a first workspace and a live key. */
async function bootstrapCommand(args: string[]): Promise<string> {
  const v = parse(args, {
    email: { type: "string" },
    "workspace-name": { type: "string" },
    password: { type: "string" },
  });
  if (v.help) return ADMIN_HELP;
  const email = required(v, "email");
  const workspaceName = required(v, "workspace-name");
  return withHerald(async (h) => {
    const out = await bootstrapAccount(h, {
      email,
      workspaceName,
      password: typeof v.password === "string" ? v.password : undefined,
    });
    const json = { account_id: out.account_id, workspace_id: out.workspace_id, api_key: out.api_key };
    return v.json
      ? JSON.stringify(json)
      : `Created account ${out.account_id} with workspace ${out.workspace_id}.\nAPI key (shown once, ` +
          `store it now):\n  ${out.api_key}\nTry it: curl -H "Authorization: Bearer ${out.api_key}" ` +
          `${h.config.baseUrl}/v1/account`;
  });
}

/** `create-key`'s options as the key to create, checked before the database is opened (a wrong value is
 * a usage error naming the option). */
function newKeyRequest(v: Record<string, string | boolean | undefined>): NewKeyInput {
  const accountId = required(v, "account");
  const name = required(v, "name");
  if (name.length > 200) throw new UsageError("--name must be at most 200 characters");
  const environment = (v.env ?? "live") as string;
  if (environment !== "live" && environment !== "test") throw new UsageError("--env must be live or test");
  const scopesArg = (v.scopes ?? "all") as string;
  const scopes = scopesArg === "all" ? [...ALL_SCOPES] : scopesArg.split(",").map((s) => s.trim());
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) throw new UsageError(`unknown scope(s): ${unknown.join(", ")}`);
  const workspacesArg = (v.workspaces ?? "all") as string;
  const workspaceIds =
    workspacesArg === "all"
      ? []
      : workspacesArg
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean);
  return {
    accountId,
    name,
    environment,
    scopes: scopes as Scope[],
    workspaceAccessMode: workspacesArg === "all" ? "all" : "selected",
    workspaceIds,
    expiresAt: expiryOf(v["expires-at"]),
  };
}

/** `--expires-at`: an ISO 8601 time with an explicit offset (no guessing the zone), in the future. */
function expiryOf(value: string | boolean | undefined): number | null {
  if (typeof value !== "string") return null;
  if (!/(Z|[+-]\d\d:\d\d)$/.test(value) || Number.isNaN(Date.parse(value)))
    throw new UsageError(
      "--expires-at must be an ISO 8601 time with a UTC offset, e.g. 2027-01-01T00:00:00Z",
    );
  const expiresAt = Date.parse(value);
  if (expiresAt <= Date.now()) {
    throw new UsageError(`--expires-at must be in the future (got ${value})`);
  }
  return expiresAt;
}

/** `herald admin create-key`: another key for an account, audited like one made through the API. */
async function createKeyCommand(args: string[]): Promise<string> {
  const v = parse(args, {
    account: { type: "string" },
    name: { type: "string" },
    env: { type: "string" },
    scopes: { type: "string" },
    workspaces: { type: "string" },
    "expires-at": { type: "string" },
  });
  if (v.help) return ADMIN_HELP;
  const request = newKeyRequest(v);
  const { accountId } = request;
  return withHerald(async (h) => {
    const now = h.clock.now();
    const out = await inTransaction(h.db, async (tx) => {
      if (!(await findAccount(tx, accountId))) throw new UsageError(`no account ${accountId}`);
      const key = await createApiKey(tx, request, now);
      await recordAudit(
        tx,
        { accountId, credentialId: null, requestId: null },
        { action: "api_key.created", targetType: "api_key", targetId: key.credentialId },
        now,
      );
      return key;
    });
    const json = { credential_id: out.credentialId, api_key: out.apiKey };
    return v.json
      ? JSON.stringify(json)
      : `Created API key ${out.credentialId} (shown once, store it now):\n  ${out.apiKey}`;
  }).catch((error: unknown) => {
    if (error instanceof UnknownWorkspacesError) throw new UsageError(error.message);
    throw error;
  });
}

/** `herald admin list-keys`: every key of an account, as a table or JSON. */
async function listKeysCommand(args: string[]): Promise<string> {
  const v = parse(args, { account: { type: "string" } });
  if (v.help) return ADMIN_HELP;
  const accountId = required(v, "account");
  return withHerald(async (h) => {
    if (!(await findAccount(h.db, accountId))) throw new UsageError(`no account ${accountId}`);
    const keys = (await listApiKeys(h.db, accountId)).map(presentKey);
    return v.json ? JSON.stringify(keys) : keyTable(accountId, keys);
  });
}

/** `herald admin revoke-key`: revokes a key by id or prefix; audited only when it changed something. */
async function revokeKeyCommand(args: string[]): Promise<string> {
  const v = parse(args, { key: { type: "string" } });
  if (v.help) return ADMIN_HELP;
  const ref = required(v, "key");
  return withHerald(async (h) => {
    const now = h.clock.now();
    const { key, alreadyRevoked } = await inTransaction(h.db, async (tx) => {
      const out = await revokeKeyOrExplain(tx, ref, now);
      if (!out.alreadyRevoked) {
        const actor = { accountId: out.key.accountId, credentialId: null, requestId: null };
        const entry = { action: "api_key.revoked", targetType: "api_key", targetId: out.key.id };
        await recordAudit(tx, actor, entry, now);
      }
      return out;
    });
    const revokedAt = iso(key.revokedAt!);
    const json = { credential_id: key.id, revoked_at: revokedAt, already_revoked: alreadyRevoked };
    if (v.json) return JSON.stringify(json);
    return alreadyRevoked
      ? `API key ${key.id} (${key.prefix}) was already revoked at ${revokedAt}; nothing changed.`
      : `Revoked API key ${key.id} (${key.prefix}, "${key.name}"); the API refuses it from now on.`;
  });
}

/** `herald admin reset-password`: a one-time link to choose a new password (the e-mailed kind). */
async function resetPasswordCommand(args: string[]): Promise<string> {
  const v = parse(args, { email: { type: "string" } });
  if (v.help) return ADMIN_HELP;
  const email = required(v, "email");
  return withHerald(async (h) => {
    const link = await createAdminResetLink(h, email);
    if (!link) throw new UsageError(`no person has the address ${email}`);
    const expiresAt = iso(link.expiresAt);
    if (v.json) return JSON.stringify({ reset_url: link.url, expires_at: expiresAt });
    return (
      `One-time link to choose a new password for ${email.trim().toLowerCase()} (works once, until ` +
      `${expiresAt}):\n  ${link.url}\nPass it on privately: whoever opens it can set the password.\n` +
      `Setting it signs the person out everywhere; API keys keep working.`
    );
  });
}

/** `herald admin confirm-email`: confirms an address by hand. */
async function confirmEmailCommand(args: string[]): Promise<string> {
  const v = parse(args, { email: { type: "string" } });
  if (v.help) return ADMIN_HELP;
  const email = required(v, "email");
  return withHerald(async (h) => {
    const done = await confirmAddressByHand(h, email);
    if (!done) throw new UsageError(`no person has the address ${email}`);
    if (v.json) return JSON.stringify({ email: done.email, already_confirmed: done.alreadyConfirmed });
    return done.alreadyConfirmed
      ? `${done.email} was already confirmed; nothing changed.`
      : `Confirmed ${done.email}: the account no longer waits for its confirmation e-mail.`;
  });
}

/** `herald admin setup-link`: a new one-time /setup link for an installation without any account. */
async function setupLinkCommand(args: string[]): Promise<string> {
  const v = parse(args, {});
  if (v.help) return ADMIN_HELP;
  return withHerald(async (h) => {
    const token = await issueSetupToken(h);
    if (token === null)
      throw new BootstrapError(
        `this installation already has an account, so it has no setup page; sign in at ${h.config.baseUrl}/login`,
      );
    const url = setupUrl(h, token);
    return v.json
      ? JSON.stringify({ setup_url: url })
      : `Open this one-time link in a browser to set Herald up (earlier links no longer work):\n  ${url}`;
  });
}

/** Opens the database quietly, runs `work` and closes it again. */
async function withHerald<T>(work: (h: Herald) => Promise<T>): Promise<T> {
  const h = await openHerald(loadConfig(), { logger: createLogger({ silent: true }), mail: null });
  try {
    return await work(h);
  } finally {
    await engineOf(h.db).close();
  }
}

/** `revokeApiKey`, with an unknown or ambiguous reference turned into a one-line usage error. */
async function revokeKeyOrExplain(db: Db, ref: string, now: number) {
  try {
    return await revokeApiKey(db, ref, now);
  } catch (error) {
    if (error instanceof KeyReferenceError) throw new UsageError(error.message);
    throw error;
  }
}

/** One key as `list-keys --json` prints it: everything but the secret and its hash. */
interface KeyListing {
  credential_id: string;
  name: string;
  prefix: string;
  environment: "live" | "test";
  scopes: string[];
  workspace_access_mode: "all" | "selected";
  /** The selected workspaces; empty when the mode is `all`. */
  workspace_ids: string[];
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

function presentKey(row: Awaited<ReturnType<typeof listApiKeys>>[number]): KeyListing {
  return {
    credential_id: row.id,
    name: row.name,
    prefix: row.prefix,
    environment: row.environment,
    scopes: row.scopes,
    workspace_access_mode: row.workspaceAccessMode,
    workspace_ids: row.workspaceIds,
    created_at: iso(row.createdAt),
    last_used_at: iso(row.lastUsedAt),
    expires_at: iso(row.expiresAt),
    revoked_at: iso(row.revokedAt),
  };
}

/** The human form of `list-keys`: one aligned row per key, `-` for "never" / "not set". */
function keyTable(accountId: string, keys: KeyListing[]): string {
  if (keys.length === 0) return `Account ${accountId} has no API keys.`;
  const time = (value: string | null) => (value === null ? "-" : value.replace(/\.\d{3}Z$/, "Z"));
  const scopes = (list: string[]) =>
    list.length === 0 ? "none" : ALL_SCOPES.every((s) => list.includes(s)) ? "all" : list.join(",");
  const header = [
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
  const rows = keys.map((k) => [
    k.credential_id,
    k.name.replace(/[\u0000-\u001f\u007f]/g, " "),
    k.prefix,
    k.environment,
    scopes(k.scopes),
    k.workspace_access_mode === "all" ? "all" : k.workspace_ids.join(","),
    time(k.created_at),
    time(k.last_used_at),
    time(k.expires_at),
    time(k.revoked_at),
  ]);
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [header, ...rows].map(line).join("\n");
}
