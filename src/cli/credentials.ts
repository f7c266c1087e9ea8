// Where the client's login lives (one JSON file in the user's config directory, mode 0600) and how a
// command finds its server, key and workspace: HERALD_API_KEY first, else the stored login.
import { randomUUID } from "node:crypto";
import { chmod, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { ConfigError, loadClientConfig } from "../config.ts";
import { CommandError } from "./errors.ts";

type Env = Record<string, string | undefined>;

/** What `herald login` stores: the server, the key (a secret: the file is 0600) and its context. */
export interface StoredLogin {
  base_url: string;
  api_key: string;
  workspace_id: string;
  account_id: string;
}

/** Where a command sends its requests, with which key, and the workspace it acts on by default. */
export interface Connection {
  /** Origin of the server; the API is `<apiUrl>/v1`. */
  apiUrl: string;
  apiKey: string;
  /** --workspace's default: HERALD_WORKSPACE_ID, else the login's workspace; null = the key's only one. */
  workspaceId: string | null;
  /** Where the key came from (whoami says so). */
  source: "environment" | "login";
}

/**
 * The client's config directory: HERALD_CONFIG_DIR, else `$XDG_CONFIG_HOME/herald` (when absolute,
 * as the XDG spec asks), else `~/.config/herald`.
 */
export function configDir(env: Env = process.env): string {
  if (env.HERALD_CONFIG_DIR) return resolve(env.HERALD_CONFIG_DIR);
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, "herald");
  return join(env.HOME || homedir(), ".config", "herald");
}

/** The login file: `<configDir>/credentials.json`. */
export function credentialsPath(env: Env = process.env): string {
  return join(configDir(env), "credentials.json");
}

/** The origin of a server URL as the client uses it: no trailing slash, no `/v1`. */
export function normalizeBaseUrl(value: string, what: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(
      `${what} must be a URL like https://herald.example.com, got ${JSON.stringify(value)}`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigError(`${what} must use http: or https:`);
  return url.href.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/** The stored login, or null when there is none; a damaged file is a CommandError naming it. */
export async function readLogin(env: Env = process.env): Promise<StoredLogin | null> {
  const path = credentialsPath(env);
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new CommandError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let parsed: Partial<StoredLogin> | null = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  const valid =
    parsed !== null &&
    typeof parsed === "object" &&
    typeof parsed.base_url === "string" &&
    /^https?:\/\//.test(parsed.base_url) &&
    typeof parsed.api_key === "string" &&
    /^hk_(live|test)_[A-Za-z0-9]+$/.test(parsed.api_key) &&
    typeof parsed.workspace_id === "string" &&
    typeof parsed.account_id === "string";
  if (!valid) throw new CommandError(`${path} is not a Herald login; run herald login again`);
  return parsed as StoredLogin;
}

/**
 * Stores a login: the directory is created (or set) 0700, the file written 0600 under a temporary name
 * and renamed, so a reader never sees half a file and the key is never readable by others. Returns
 * the file's path.
 */
export async function writeLogin(login: StoredLogin, env: Env = process.env): Promise<string> {
  const dir = configDir(env);
  const path = credentialsPath(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const temporary = join(dir, `.credentials.${randomUUID()}.tmp`);
  const file = await open(temporary, "wx", 0o600);
  try {
    await file.writeFile(`${JSON.stringify(login, null, 2)}\n`);
    await file.chmod(0o600);
  } finally {
    await file.close();
  }
  await rename(temporary, path);
  return path;
}

/** Deletes the stored login; false when there was none. */
export async function deleteLogin(env: Env = process.env): Promise<boolean> {
  const path = credentialsPath(env);
  try {
    await rm(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw new CommandError(`cannot remove ${path}: ${(error as Error).message}`);
  }
}

/**
 * The connection a command uses. HERALD_API_KEY wins: with it the environment decides everything
 * (HERALD_API_URL, else HERALD_BASE_URL, else http://127.0.0.1:8080), as before logins existed.
 * Otherwise the stored login's key and server, HERALD_API_URL overriding the server and
 * HERALD_WORKSPACE_ID the workspace. `need` names the scopes, for the message when there is neither.
 */
export async function connect(need: string, env: Env = process.env): Promise<Connection> {
  const client = loadClientConfig(env);
  if (client.apiKey)
    return {
      apiUrl: client.apiUrl,
      apiKey: client.apiKey,
      workspaceId: client.workspaceId,
      source: "environment",
    };
  const login = await readLogin(env);
  if (!login)
    throw new ConfigError(
      `not logged in: run "herald login" first (without a login, HERALD_API_KEY is required: an API key with ${need})`,
    );
  return {
    apiUrl: env.HERALD_API_URL ? client.apiUrl : login.base_url,
    apiKey: login.api_key,
    workspaceId: client.workspaceId ?? login.workspace_id,
    source: "login",
  };
}
