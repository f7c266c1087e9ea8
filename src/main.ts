#!/usr/bin/env bun
import { ConfigError, loadConfig, type Config } from "./config.ts";
import { HERALD_VERSION } from "./herald.ts";

// Start-up code runs once: compiling it with the JIT costs time and memory that never pay back, so the
// JIT tiers up less eagerly until the command's code is loaded (for `serve`, until it listens). So each
// command imports its modules when it runs, after this line; the two static imports above are small.
// (Optional calls: a Bun without the knob runs the same, with its normal policy.)
Bun.unsafe.setJITPolicy?.(8);
const startedUp = () => Bun.unsafe.setJITPolicy?.(1);

const HELP = `Herald ${HERALD_VERSION}: self-hosted social publishing.

Usage: herald <command> [options]

Commands:
  serve          Start the API server and its schedules (HERALD_HOST:HERALD_PORT, default 127.0.0.1:8080).
  migrate        Apply pending database migrations (serve does this at start, too).
  admin          Operator commands: bootstrap, create-key, list-keys, revoke-key (herald admin --help).
  assets upload  Upload a media file (multipart, checksummed, parallel, with a progress bar; herald assets --help).
  analytics      A published post group's totals (herald analytics GROUP [--json]; herald analytics --help).
  export         Write the whole installation (database and local blobs) to a file (herald export --help).
  import         Load an export into an empty installation, e.g. SQLite to PostgreSQL (herald import --help).
  version        Print the version.
  help           Show this help.

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

function firstStartHint(config: Config): string {
  const dataDirEnv = process.env.HERALD_DATA_DIR ? `HERALD_DATA_DIR=${JSON.stringify(config.dataDir)} ` : "";
  return [
    "No account exists yet. Create the first account and its API key with:",
    "",
    `  ${dataDirEnv}${selfCommand()} admin bootstrap --email you@example.com --workspace-name "My workspace" --json`,
    "",
    "It prints the API key once; then try:",
    `  curl -H "Authorization: Bearer <api_key>" ${config.baseUrl}/v1/account`,
  ].join("\n");
}

async function serve(args: string[]): Promise<void> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(SERVE_HELP);
    return;
  }
  if (args.length > 0) {
    const { UsageError } = await import("./cli/admin.ts");
    throw new UsageError(
      `serve takes no arguments (got ${args.join(" ")}); configure it with HERALD_* variables`,
    );
  }
  const config = loadConfig();
  const { openHerald, startServer } = await import("./server.ts");
  const herald = await openHerald(config);
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
  startedUp();
  console.log(
    `Herald ${HERALD_VERSION} listening on ${config.baseUrl} (API ${config.baseUrl}/v1, docs ${config.baseUrl}/v1/docs, data ${config.dataDir})`,
  );
  if (!config.smtpUrl)
    console.log("HERALD_SMTP_URL is not set: invitation e-mails wait in the outbox until it is.");
  const { hasAnyAccount } = await import("./modules/account/repo.ts");
  if (!(await hasAnyAccount(herald.db))) console.log("\n" + firstStartHint(config) + "\n");
  const shutdown = async () => {
    await server.stop();
    process.exit(0);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}

/** `herald migrate`: applies pending migrations once, under a lock, and says what it did. */
async function migrate(args: string[]): Promise<string> {
  if (args.length > 0) {
    const { UsageError } = await import("./cli/admin.ts");
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

/** The help text `herald help [command]` prints. */
async function helpFor(command: string | undefined): Promise<string> {
  if (command === "admin") return (await import("./cli/admin.ts")).ADMIN_HELP;
  if (command === "assets") return (await import("./cli/assets.ts")).ASSETS_HELP;
  if (command === "analytics") return (await import("./cli/analytics.ts")).ANALYTICS_HELP;
  return command === "serve" ? SERVE_HELP : HELP;
}

/**
 * The exit code of an error that is the user's mistake (printed as one line, no stack trace), or null.
 * The modules defining these errors are loaded here, on this path only, when they are not already.
 */
async function userErrorExitCode(error: unknown): Promise<number | null> {
  if (error instanceof ConfigError) return 1;
  const [{ UsageError }, { BootstrapError }, { ApiError }] = await Promise.all([
    import("./cli/admin.ts"),
    import("./modules/account/bootstrap.ts"),
    import("./cli/assets.ts"),
  ]);
  if (error instanceof UsageError) return 2;
  return error instanceof BootstrapError || error instanceof ApiError ? 1 : null;
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
      case "assets": {
        const { runAssets } = await import("./cli/assets.ts");
        startedUp();
        console.log(await runAssets(rest));
        return 0;
      }
      case "analytics": {
        const { runAnalytics } = await import("./cli/analytics.ts");
        startedUp();
        console.log(await runAnalytics(rest));
        return 0;
      }
      case "export":
      case "import": {
        const { runTransfer } = await import("./cli/transfer.ts");
        startedUp();
        return await runTransfer(command, rest);
      }
      case "version":
      case "--version":
        console.log(HERALD_VERSION);
        return 0;
      case undefined:
      case "help":
      case "--help":
      case "-h":
        console.log(await helpFor(rest[0]));
        return 0;
      default:
        console.error(`herald: unknown command "${command}"\n\n${HELP}`);
        return 2;
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
