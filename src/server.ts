import { existsSync, linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildApp } from "./app.ts";
import { LocalBlobStore } from "./blobs/local.ts";
import type { BlobStore } from "./blobs/store.ts";
import { ConfigError, type Config } from "./config.ts";
import { engineOf } from "./db/engine.ts";
import { openDatabase } from "./db/open.ts";
import { inTransaction } from "./db/transaction.ts";
import { HERALD_VERSION, type Herald } from "./herald.ts";
import { logAccess } from "./http/access-log.ts";
import { routeOf } from "./http/plugin.ts";
import { observeRequest } from "./modules/metrics/metrics.ts";
import { NATIVE_HEADER_LIMIT_BYTES } from "./http/request-head.ts";
import { serverJobs } from "./jobs/index.ts";
import { PublishingEngine } from "./modules/publishing/engine.ts";
import { Scheduler } from "./jobs/scheduler.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import { randomBase62, SecretBox } from "./lib/crypto.ts";
import { createLogger, type Logger } from "./lib/logger.ts";
import type { MailTransport } from "./modules/mail/transport.ts";
import { createProviderRegistry, type NetworkDefinition } from "./providers/registry.ts";
import { createGuardedFetch } from "./lib/guarded-fetch.ts";
import { armWebhookWake } from "./modules/webhooks/wake.ts";
import { parseCidrList, TrustedProxies } from "./lib/client-address.ts";

/**
 * The master secret: HERALD_SECRET_KEY, or `<dataDir>/secret.key`, created (mode 0600) on first
 * start so a fresh install needs no setup.
 */
export function resolveSecretKey(config: Config): string {
  if (config.secretKey) return config.secretKey;
  const path = join(config.dataDir, "secret.key");
  if (!existsSync(path)) {
    // Written whole to a temporary file, then linked into place: another process starting at the same
    // time either wins the link or reads a complete key, never an empty file.
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, randomBase62(64) + "\n", { mode: 0o600 });
    try {
      linkSync(temporary, path);
    } catch (error) {
      if ((error as { code?: string }).code !== "EEXIST") throw error;
    } finally {
      rmSync(temporary, { force: true });
    }
  }
  const secret = readFileSync(path, "utf8").trim();
  if (secret.length < 32)
    throw new ConfigError(
      `${path} holds a key shorter than 32 characters; restore it from a backup (or remove it on a fresh install)`,
    );
  return secret;
}

// The S3 client (minio) and the SMTP client (nodemailer) are large; each is loaded only when configured.

/** The SMTP transport when HERALD_SMTP_URL is set; null (mail waits in the outbox) otherwise. */
async function mailTransport(config: Config): Promise<MailTransport | null> {
  if (!config.smtpUrl) return null;
  const { smtpTransport } = await import("./modules/mail/transport.ts");
  return smtpTransport(config.smtpUrl);
}

/** The blob store createBlobStore picks, without loading the S3 one for local storage. */
async function openBlobStore(config: Config): Promise<BlobStore> {
  if (config.storage === "s3") return (await import("./blobs/index.ts")).createBlobStore(config);
  return new LocalBlobStore(join(config.dataDir, "blobs"));
}

/**
 * Called by `herald serve` before it starts: notes the installation's first start in a processor mode,
 * from which accounts made before billing was switched on count their trial (docs/billing.md). The
 * admin commands do not (an import must find the target empty). Failing to write it does not stop the
 * server: trials then count from the accounts' creation.
 */
export async function markBillingStart(h: Herald): Promise<void> {
  if (h.config.billingMode === "disabled") return;
  const { markProcessorSince } = await import("./modules/billing/repo.ts");
  try {
    await inTransaction(h.db, (tx) => markProcessorSince(tx, h.clock.now()));
  } catch (error) {
    h.logger.warn("could not record when billing started", { error: (error as Error).message });
  }
}

/** Opens the data dir and assembles the Herald value (used by `serve` and the admin commands). */
export async function openHerald(
  config: Config,
  overrides: {
    clock?: Clock;
    logger?: Logger;
    mail?: MailTransport | null;
    fetch?: typeof fetch;
    /** Pause between status polls inside one provider call (tests: a few ms instead of a second). */
    providerPollIntervalMs?: number;
    /**
     * The networks Herald publishes to (default: the contract's nine). The seam for a network that
     * lives outside src/providers, e.g. a test's example network: docs/networks.md.
     */
    networks?: readonly NetworkDefinition[];
  } = {},
): Promise<Herald> {
  const clock = overrides.clock ?? systemClock;
  // Built before the database opens: a network setting it refuses (HERALD_<CH>_API_VERSION) stops the
  // start with one line. Provider origins are user-chosen: every call is re-checked and pinned.
  const providers = createProviderRegistry(
    {
      fetch: (overrides.fetch ??
        createGuardedFetch({ allowPrivateNetwork: config.devAllowPrivateNetwork })) as typeof fetch,
      clock,
      timeoutMs: config.engine.providerTimeoutMs,
      settings: config.networks,
      pollIntervalMs: overrides.providerPollIntervalMs,
      mediaPollIntervalMs: overrides.providerPollIntervalMs,
    },
    overrides.networks,
  );
  const db = await openDatabase(config);
  const logger = overrides.logger ?? createLogger();
  if (!config.databaseUrl && config.sqliteSync === "normal")
    logger.warn(
      "HERALD_SQLITE_SYNC=normal: SQLite syncs only at checkpoints; acknowledged writes may be lost on power loss",
    );
  return {
    config,
    db,
    clock,
    providers,
    logger,
    secrets: new SecretBox(resolveSecretKey(config)),
    mail: overrides.mail !== undefined ? overrides.mail : await mailTransport(config),
    blobs: await openBlobStore(config),
    version: HERALD_VERSION,
  };
}

/** A running server. */
export interface RunningServer {
  herald: Herald;
  url: string;
  scheduler: Scheduler;
  engine: PublishingEngine;
  stop(): Promise<void>;
}

/**
 * Bun's request URL is `http://<Host header><target>`, or the bare target when the Host header is
 * missing or not a host name; the app reads paths after `http://`, so the bare form gets an origin.
 * The original request is remembered for its peer address.
 */
function withAbsoluteUrl(request: Request, originals: WeakMap<Request, Request>): Request {
  if (request.url.startsWith("http://")) return request;
  const target = request.url.startsWith("/") ? request.url : `/${request.url}`;
  const absolute = new Request(`http://unknown${target}`, request);
  originals.set(absolute, request);
  return absolute;
}

/** The request-head limit the runtime was started with (`--max-http-header-size`), 0 when none. */
function headerLimitFlag(): number {
  const args = process.execArgv;
  let limit = 0;
  for (let i = 0; i < args.length; i++) {
    const flag = /^--max-http-header-size(?:=(\d+))?$/.exec(args[i]!);
    if (flag) limit = Number(flag[1] ?? args[i + 1]) || 0;
  }
  return limit;
}

/**
 * Raises Bun's request-head limit, past which it answers a bare 431 before any JS runs, above the app's
 * own, lower limit that answers with a problem (request-head.ts). It is process-wide (Bun has no
 * per-server knob) and node:http is the only way to set it at run time; loading that module costs
 * ~15 ms of start-up, so it is skipped when the runtime was started with a high enough
 * --max-http-header-size (the compiled binary can carry one from its build: --compile-exec-argv).
 */
function raiseNativeHeaderLimit(): void {
  if (headerLimitFlag() >= NATIVE_HEADER_LIMIT_BYTES) return;
  const http: { maxHeaderSize: number } = require("node:http");
  if (http.maxHeaderSize < NATIVE_HEADER_LIMIT_BYTES) http.maxHeaderSize = NATIVE_HEADER_LIMIT_BYTES;
}

/** Starts HTTP and the schedules; `startJobs: false` leaves jobs to be run by hand (tests). */
export function startServer(herald: Herald, options: { startJobs?: boolean } = {}): RunningServer {
  const engine = new PublishingEngine(herald);
  const scheduler = new Scheduler(herald, serverJobs(engine));
  const originals = new WeakMap<Request, Request>();
  // X-Forwarded-For is believed only from the operator's proxies (docs/operations.md).
  const proxies = new TrustedProxies(parseCidrList(herald.config.trustedProxies.join(",")));
  const app = buildApp(herald, {
    scheduler: () => scheduler,
    engine: () => engine,
    clientAddress: (request) =>
      proxies.clientOf(
        server.requestIP(originals.get(request) ?? request)?.address ?? "unknown",
        proxies.empty ? null : request.headers.get("x-forwarded-for"),
      ),
  });
  raiseNativeHeaderLimit();
  const accessLog = herald.config.accessLog;
  /** Requests whose handler has not returned yet (stop waits for them before closing the database). */
  let handling = 0;
  const server = Bun.serve({
    hostname: herald.config.host,
    port: herald.config.port,
    // Backstop only: JSON routes enforce 1 MiB themselves with a problem+json 413.
    maxRequestBodySize: 64 * 1024 * 1024,
    fetch: async (incoming) => {
      const startedAt = performance.now();
      const request = withAbsoluteUrl(incoming, originals);
      handling += 1;
      try {
        const response = await app.handle(request);
        if (accessLog) logAccess(herald.logger, request, response.status, startedAt);
        observeRequest(herald, request, routeOf(request), response.status, startedAt);
        return response;
      } finally {
        handling -= 1;
      }
    },
  });
  let disarmWebhookWake = () => {};
  if (options.startJobs !== false) {
    scheduler.start();
    // Events this process commits are sent at once; the one-second tick finds other processes' events.
    disarmWebhookWake = armWebhookWake(herald.db, () => scheduler.runNow("webhook-deliveries"));
  }
  return {
    herald,
    url: `http://${server.hostname?.includes(":") ? `[${server.hostname}]` : server.hostname}:${server.port}`,
    scheduler,
    engine,
    async stop() {
      disarmWebhookWake();
      await scheduler.stop();
      engine.stop();
      await engine.drain();
      // Lets in-flight requests finish; new connections are refused.
      await server.stop();
      // A client that hung up closes its connection while its handler still runs (stop() has then
      // resolved): the database stays open until those handlers end, or 30 s have passed.
      for (let waited = 0; handling > 0 && waited < 30_000; waited += 10) await Bun.sleep(10);
      await engineOf(herald.db).close();
    },
  };
}
