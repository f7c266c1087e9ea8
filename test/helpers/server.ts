import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { freshDatabase } from "./database.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import type { Herald } from "../../src/herald.ts";
import type { NetworkDefinition } from "../../src/providers/registry.ts";
import { ALL_SCOPES, type Scope } from "../../src/core/scopes.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { createMemoryLogger } from "../../src/lib/logger.ts";
import { bootstrapAccount } from "../../src/modules/account/bootstrap.ts";
import { createApiKey } from "../../src/modules/keys/service.ts";
import type { MailTransport } from "../../src/modules/mail/transport.ts";
import { markBillingStart, openHerald, startServer, type RunningServer } from "../../src/server.ts";

/** What a test request returned, with the body parsed when it is JSON. */
export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** Options of one request sent by `TestServer.request`. */
export interface RequestOptions {
  /** API key to send as Bearer; `null` sends none. Defaults to the owner's key. */
  key?: string | null;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string is sent as it is. */
  body?: unknown;
}

/** An account made by `bootstrap`: its ids and its all-scopes live key. */
export interface TestAccount {
  accountId: string;
  workspaceId: string;
  apiKey: string;
  credentialId: string;
}

/** A real Herald server on 127.0.0.1 (random port) over a fresh SQLite file in a temp dir. */
export interface TestServer {
  url: string;
  herald: Herald;
  server: RunningServer;
  clock: ManualClock;
  logs: string[];
  dataDir: string;
  owner: TestAccount;
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** Another account with its own owner key. */
  bootstrap(email?: string, workspaceName?: string): Promise<TestAccount>;
  /** A key of an account with chosen scopes, environment, workspaces and expiry. */
  createKey(options: {
    accountId?: string;
    scopes?: Scope[];
    environment?: "live" | "test";
    workspaceIds?: string[] | "all";
    expiresAt?: number | null;
  }): Promise<string>;
  stop(): Promise<void>;
}

let counter = 0;

/** What starting a test server takes. */
export interface TestServerOptions {
  env?: Record<string, string>;
  mail?: MailTransport | null;
  clock?: ManualClock;
  /** The networks' HTTP client (the contract fuzzer admits loopback only). */
  fetch?: typeof fetch;
  /** The networks Herald publishes to (default the contract's nine; a test may add its own). */
  networks?: readonly NetworkDefinition[];
}

/** A test server over an installation without any account (what `herald serve` finds on a fresh install). */
export type EmptyTestServer = Omit<TestServer, "owner" | "request" | "createKey">;

/** Starts a test server; jobs are not scheduled (tests run them with `server.scheduler.runNow`). */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const empty = await startEmptyTestServer(options);
  const { herald, server, clock, bootstrap } = empty;
  const owner = await bootstrap();
  const request = async (method: string, path: string, opts: RequestOptions = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? owner.apiKey : opts.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await fetch(server.url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = undefined;
    if (/json/.test(response.headers.get("content-type") ?? "")) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, text, body: parsed };
  };

  const createKey: TestServer["createKey"] = (o) =>
    inTransaction(herald.db, async (tx) =>
      createApiKey(
        tx,
        {
          accountId: o.accountId ?? owner.accountId,
          name: "test key",
          environment: o.environment ?? "live",
          scopes: o.scopes ?? [...ALL_SCOPES],
          workspaceAccessMode: o.workspaceIds === undefined || o.workspaceIds === "all" ? "all" : "selected",
          workspaceIds: o.workspaceIds === undefined || o.workspaceIds === "all" ? [] : o.workspaceIds,
          expiresAt: o.expiresAt ?? null,
        },
        clock.now(),
      ),
    ).then((created) => created.apiKey);

  return { ...empty, owner, request, createKey };
}

/** Starts a test server whose installation has no account yet (setup, the front door). */
export async function startEmptyTestServer(options: TestServerOptions = {}): Promise<EmptyTestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "herald-test-"));
  const database = await freshDatabase();
  const config = loadConfig({
    HERALD_DATA_DIR: dataDir,
    HERALD_PORT: "0",
    HERALD_BASE_URL: "http://127.0.0.1:9",
    ...database.env,
    ...options.env,
  });
  const clock = options.clock ?? new ManualClock(Date.parse("2026-03-01T12:00:00.000Z"));
  const logger = createMemoryLogger();
  // Networks' status polls inside one call pause 5 ms (a second in production).
  const herald = await openHerald(config, {
    clock,
    logger,
    mail: options.mail ?? null,
    providerPollIntervalMs: 5,
    fetch: options.fetch,
    networks: options.networks,
  });
  // As `herald serve` does before it starts.
  await markBillingStart(herald);
  const server = startServer(herald, { startJobs: false });
  // Links and problem types use the base URL; point it at the real port now that it is known.
  herald.config.baseUrl = server.url;

  const bootstrap = async (
    email = `owner${++counter}@example.com`,
    workspaceName = "Test workspace",
  ): Promise<TestAccount> => {
    const out = await bootstrapAccount(herald, { email, workspaceName });
    return {
      accountId: out.account_id,
      workspaceId: out.workspace_id,
      apiKey: out.api_key,
      credentialId: out.credential_id,
    };
  };
  return {
    url: server.url,
    herald,
    server,
    clock,
    logs: logger.lines,
    dataDir,
    bootstrap,
    async stop() {
      await server.stop();
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
