#!/usr/bin/env bun
import { ConfigError, loadConfig } from "./config.ts";
import { HERALD_VERSION } from "./herald.ts";
import type { CommandOutput } from "./cli/format.ts";

// Start-up code runs once: compiling it with the JIT costs time and memory that never pay back, so the
// JIT tiers up reluctantly until the command's code is loaded (for `serve`, until it is busy). So each
// command imports its modules when it runs, after this line; the two static imports above are small.
// (Optional calls: a Bun without the knob runs the same, with its normal policy.)
/** The JIT's tier-up thresholds are multiplied by this at start (and while `serve` idles). */
const RELUCTANT_JIT_POLICY = 1000;
Bun.unsafe.setJITPolicy?.(RELUCTANT_JIT_POLICY);
const startedUp = () => Bun.unsafe.setJITPolicy?.(1);

/** How often `serve` looks whether it is busy, and the share of a core's time that counts as busy. */
const BUSY_CHECK_MS = 250;
const BUSY_CPU_SHARE = 0.2;
/** While idle, a full garbage collection every this many checks (10 s). */
const IDLE_GC_CHECKS = 40;

/**
 * Once `serve` listens: the JIT stays reluctant until the process does real work (requests or
 * publishing using a fifth of a core), then compiles as usual; optimizing the idle server's
 * once-a-second jobs and health checks never pays back and keeps ~5 MiB resident (the compiler's code
 * pages and its output). And while it idles, a full garbage collection on its first quiet quarter
 * second (start-up's or a burst's garbage) and every 10 s after: the jobs' ticks otherwise pile up
 * ~5 MiB of garbage a minute before the collector's own schedule frees it. docs/decisions.md,
 * "Issue 28: memory".
 */
function settleWhileIdle(): void {
  let before = process.cpuUsage();
  let busy = false;
  let quietChecks = 0;
  const check = setInterval(() => {
    const used = process.cpuUsage(before);
    before = process.cpuUsage();
    if ((used.user + used.system) / 1000 >= BUSY_CHECK_MS * BUSY_CPU_SHARE) {
      quietChecks = 0;
      if (!busy) startedUp();
      busy = true;
    } else if (quietChecks++ % IDLE_GC_CHECKS === 0) Bun.gc(true);
  }, BUSY_CHECK_MS);
  check.unref();
}

const HELP = `Herald ${HERALD_VERSION}: self-hosted social publishing.

Usage: herald <command> [options]        (herald <command> --help for each command)

Client (talks to a Herald server; herald login first, or set HERALD_API_KEY):
  login                Sign this computer in through the browser and store its key (--base-url URL).
  logout               Revoke the stored key on the server and forget it here.
  whoami               The server, account, key and default workspace in use.
  workspaces list      The workspaces the key can use.
  destinations list    The workspace's connected social accounts.
  destinations connect Connect an account (OAuth networks in the browser; Bluesky with an app password).
  posts create         Publish, schedule, queue or draft a post or thread (media uploaded first).
  posts list|get       Follow posts; posts cancel|retry|reschedule|validate (herald posts --help).
  posts import FILE    Import posts from a CSV file: a table of rows, all stored or none (--dry-run).
  assets upload FILE   Upload a media file (multipart, checksummed, parallel, with a progress bar).
  assets list          The workspace's assets.
  webhooks list|test   Webhook endpoints; send one a test event.
  analytics GROUP      A published post group's totals.
  mcp                  Serve Herald's MCP tools over stdio to an assistant on this computer (docs/mcp.md).

Server and operator (work on HERALD_DATA_DIR or HERALD_DATABASE_URL):
  serve                Start the API server and its schedules (HERALD_HOST:HERALD_PORT, default 127.0.0.1:8080).
  migrate              Apply pending database migrations (serve does this at start, too).
  admin                Operator commands: bootstrap, setup-link, create-key, list-keys, revoke-key (herald admin --help).
  export               Write the whole installation (database and local blobs) to a file.
  import               Load an export into an empty installation, e.g. SQLite to PostgreSQL.
  backup               Write a consistent online backup (database and local blobs) to a file.
  restore              Restore a backup into an empty data directory.

  version              Print the version.
  help [COMMAND]       Show this help, or a command's.

Every client command takes --json (the API's objects). Exit codes: 0 done, 1 refused by the API
(its detail and request_id are printed) or another failure, 2 usage error, 3 server not reachable.
Configuration comes from HERALD_* environment variables; see README.md.`;

const SERVE_HELP = `Usage: herald serve

Starts the HTTP API (<HERALD_BASE_URL>/v1), the docs (/v1/docs) and the schedules.
Data lives in HERALD_DATA_DIR (default ./storage): herald.db (SQLite) and blobs/, or in
PostgreSQL when HERALD_DATABASE_URL is set. Pending migrations are applied first.
Stop it with Ctrl-C (SIGINT) or SIGTERM; in-flight requests finish first.`;

/** How the user runs this program, so printed hints can be pasted as they are. */
function selfCommand(): string {
  return Bun.main.startsWith("/$bunfs/") ? process.execPath : "npm run herald --";
}

async function serve(args: string[]): Promise<void> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(SERVE_HELP);
    return;
  }
  if (args.length > 0) {
    const { UsageError } = await import("./cli/errors.ts");
    throw new UsageError(
      `serve takes no arguments (got ${args.join(" ")}); configure it with HERALD_* variables`,
    );
  }
  const config = loadConfig();
  const { markBillingStart, openHerald, startServer } = await import("./server.ts");
  const herald = await openHerald(config);
  await markBillingStart(herald);
  // The banner is made before listening: once /health answers, it is printed and SIGTERM is handled.
  const { serveBanner } = await import("./cli/banner.ts");
  const dataDirEnv = process.env.HERALD_DATA_DIR ? `HERALD_DATA_DIR=${JSON.stringify(config.dataDir)} ` : "";
  const banner = await serveBanner(herald, { self: selfCommand(), dataDirEnv });
  let server: ReturnType<typeof startServer>;
  try {
    server = startServer(herald);
  } catch (error) {
    // A port in use or not allowed is an operator mistake: one line, not a stack trace.
    const code = (error as { code?: string }).code;
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
      const { engineOf } = await import("./db/engine.ts");
      await engineOf(herald.db).close();
      throw new ConfigError(
        `cannot listen on ${config.host}:${config.port} (${code}); choose another HERALD_PORT or HERALD_HOST`,
      );
    }
    throw error;
  }
  const shutdown = async () => {
    await server.stop();
    process.exit(0);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  console.log(banner);
  settleWhileIdle();
}

/** `herald migrate`: applies pending migrations once, under a lock, and says what it did. */
async function migrate(args: string[]): Promise<string> {
  if (args.length > 0) {
    const { UsageError } = await import("./cli/errors.ts");
    throw new UsageError(`migrate takes no arguments (got ${args.join(" ")})`);
  }
  const config = loadConfig();
  const [{ openDatabase }, { engineOf }] = await Promise.all([
    import("./db/open.ts"),
    import("./db/engine.ts"),
  ]);
  startedUp();
  const engine = engineOf(await openDatabase(config));
  await engine.close();
  const where = config.databaseUrl ? "PostgreSQL" : `${config.dataDir}/herald.db`;
  if (engine.migrated.length === 0) return `${where}: up to date`;
  return `${where}: applied ${engine.migrated.join(", ")}`;
}

/** The help text `herald help [command] [subcommand]` prints. */
async function helpFor(command: string | undefined, sub: string | undefined): Promise<string> {
  switch (command) {
    case "admin":
      return (await import("./cli/admin.ts")).ADMIN_HELP;
    case "assets":
      return (await import("./cli/assets.ts")).ASSETS_HELP;
    case "analytics":
      return (await import("./cli/analytics.ts")).ANALYTICS_HELP;
    case "login":
      return (await import("./cli/login.ts")).LOGIN_HELP;
    case "mcp":
      return (await import("./cli/mcp.ts")).MCP_HELP;
    case "logout":
      return (await import("./cli/login.ts")).LOGOUT_HELP;
    case "whoami":
      return (await import("./cli/login.ts")).WHOAMI_HELP;
    case "posts":
      return (await import("./cli/posts.ts")).postsHelp(sub);
    case "workspaces":
      return (await import("./cli/resources.ts")).WORKSPACES_HELP;
    case "destinations":
      return (await import("./cli/resources.ts")).DESTINATIONS_HELP;
    case "webhooks":
      return (await import("./cli/resources.ts")).WEBHOOKS_HELP;
    case "export":
      return (await import("./cli/transfer.ts")).EXPORT_HELP;
    case "import":
      return (await import("./cli/transfer.ts")).IMPORT_HELP;
    case "backup":
      return (await import("./cli/backup.ts")).BACKUP_HELP;
    case "restore":
      return (await import("./cli/backup.ts")).RESTORE_HELP;
    case "serve":
      return SERVE_HELP;
    default:
      return HELP;
  }
}

/**
 * The exit code of an error that is the user's mistake or the API's refusal (printed as one line, no
 * stack trace), or null: usage 2, network 3, API and configuration 1. The operator commands' error
 * module is loaded here, on this path only.
 */
async function userErrorExitCode(error: unknown): Promise<number | null> {
  if (error instanceof ConfigError) return 1;
  const { clientExitCode } = await import("./cli/errors.ts");
  const code = clientExitCode(error);
  if (code !== null) return code;
  const { BootstrapError } = await import("./modules/account/bootstrap.ts");
  return error instanceof BootstrapError ? 1 : null;
}

/** The client's commands: each module's runner, loaded when it runs. */
const CLIENT: Record<string, () => Promise<(args: string[]) => Promise<CommandOutput>>> = {
  login: async () => (await import("./cli/login.ts")).runLogin,
  logout: async () => (await import("./cli/login.ts")).runLogout,
  whoami: async () => (await import("./cli/login.ts")).runWhoami,
  workspaces: async () => (await import("./cli/resources.ts")).runWorkspaces,
  destinations: async () => (await import("./cli/resources.ts")).runDestinations,
  webhooks: async () => (await import("./cli/resources.ts")).runWebhooks,
  posts: async () => {
    const { runPosts } = await import("./cli/posts.ts");
    return (args) => runPosts(args);
  },
  assets: async () => {
    const { runAssets } = await import("./cli/assets.ts");
    return (args) => runAssets(args);
  },
  analytics: async () => (await import("./cli/analytics.ts")).runAnalytics,
};

/** Prints a command's output and gives its exit code. */
function emit(output: CommandOutput): number {
  const { stdout, exitCode } = typeof output === "string" ? { stdout: output, exitCode: 0 } : output;
  if (stdout !== "") console.log(stdout);
  return exitCode;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "serve":
        await serve(rest);
        return -1;
      case "migrate":
        console.log(await migrate(rest));
        return 0;
      case "admin": {
        const { runAdmin } = await import("./cli/admin.ts");
        startedUp();
        console.log(await runAdmin(rest));
        return 0;
      }
      case "export":
      case "import": {
        const { runTransfer } = await import("./cli/transfer.ts");
        startedUp();
        return await runTransfer(command, rest);
      }
      case "backup":
      case "restore": {
        const { runBackupCommand } = await import("./cli/backup.ts");
        startedUp();
        return await runBackupCommand(command, rest);
      }
      case "mcp": {
        // The protocol owns stdout: help is printed only when asked for; the server runs until stdin closes.
        const { MCP_HELP, runMcp } = await import("./cli/mcp.ts");
        if (rest.includes("--help") || rest.includes("-h")) {
          console.log(MCP_HELP);
          return 0;
        }
        startedUp();
        await runMcp(rest);
        return -1;
      }
      case "version":
      case "--version":
        console.log(HERALD_VERSION);
        return 0;
      case undefined:
      case "help":
      case "--help":
      case "-h":
        console.log(await helpFor(rest[0], rest[1]));
        return 0;
      default: {
        const load = CLIENT[command];
        if (load) {
          const run = await load();
          startedUp();
          return emit(await run(rest));
        }
        console.error(`herald: unknown command "${command}"\n\n${HELP}`);
        return 2;
      }
    }
  } catch (error) {
    const code = await userErrorExitCode(error);
    if (code === null) throw error;
    console.error(`herald: ${(error as Error).message}`);
    return code;
  }
}

const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);
