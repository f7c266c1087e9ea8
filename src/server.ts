import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildApp } from "./app.ts";
import { createBlobStore } from "./blobs/index.ts";
import type { Config } from "./config.ts";
import { openDatabase } from "./db/open.ts";
import { HERALD_VERSION, type Herald } from "./herald.ts";
import { serverJobs } from "./jobs/index.ts";
import { PublishingEngine } from "./modules/publishing/engine.ts";
import { Scheduler } from "./jobs/scheduler.ts";
import { systemClock, type Clock } from "./lib/clock.ts";
import { randomBase62, SecretBox } from "./lib/crypto.ts";
import { createLogger, type Logger } from "./lib/logger.ts";
import { smtpTransport, type MailTransport } from "./modules/mail/transport.ts";
import { createProviderRegistry } from "./providers/registry.ts";

/**
 * The master secret: HERALD_SECRET_KEY, or `<dataDir>/secret.key`, created (mode 0600) on first
 * start so a fresh install needs no setup.
 */
export function resolveSecretKey(config: Config): string {
  if (config.secretKey) return config.secretKey;
  const path = join(config.dataDir, "secret.key");
  if (existsSync(path)) return readFileSync(path, "utf8").trim();
  const secret = randomBase62(64);
  try {
    writeFileSync(path, secret + "\n", { mode: 0o600, flag: "wx" });
    return secret;
  } catch {
    // Another process created it first: use theirs.
    return readFileSync(path, "utf8").trim();
  }
}

/** Opens the data dir and assembles the Herald value (used by `serve` and the admin commands). */
export function openHerald(config: Config, overrides: { clock?: Clock; logger?: Logger; mail?: MailTransport | null; fetch?: typeof fetch } = {}): Herald {
  const db = openDatabase(config.dataDir);
  const clock = overrides.clock ?? systemClock;
  return {
    config,
    db,
    clock,
    providers: createProviderRegistry({ fetch: overrides.fetch ?? fetch, clock, timeoutMs: config.engine.providerTimeoutMs }),
    logger: overrides.logger ?? createLogger(),
    secrets: new SecretBox(resolveSecretKey(config)),
    mail: overrides.mail !== undefined ? overrides.mail : config.smtpUrl ? smtpTransport(config.smtpUrl) : null,
    blobs: createBlobStore(config),
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

/** Starts HTTP and the schedules; `startJobs: false` leaves jobs to be run by hand (tests). */
export function startServer(herald: Herald, options: { startJobs?: boolean } = {}): RunningServer {
  const engine = new PublishingEngine(herald);
  const scheduler = new Scheduler(herald, serverJobs(engine));
  const app = buildApp(herald, { scheduler: () => scheduler, engine: () => engine });
  const server = Bun.serve({
    hostname: herald.config.host,
    port: herald.config.port,
    // Backstop only: JSON routes enforce 1 MiB themselves with a problem+json 413.
    maxRequestBodySize: 64 * 1024 * 1024,
    fetch: (request) => app.handle(request),
  });
  if (options.startJobs !== false) scheduler.start();
  return {
    herald,
    url: `http://${server.hostname?.includes(":") ? `[${server.hostname}]` : server.hostname}:${server.port}`,
    scheduler,
    engine,
    async stop() {
      await scheduler.stop();
      engine.stop();
      await engine.drain();
      // Lets in-flight requests finish; new connections are refused.
      await server.stop();
      herald.db.$client.close();
    },
  };
}
