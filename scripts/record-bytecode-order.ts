// Records scripts/serve.bytecode-order (SQLite), or scripts/serve-postgres.bytecode-order when
// HERALD_DATABASE_URL names an empty PostgreSQL database: the profiles `npm run build` lays the binary's
// bytecode out by (`--bytecode-order`, SQLite's first, PostgreSQL's code after it). The binary is built without it, started with `herald serve` on a fresh,
// bootstrapped data dir, asked for /health, left idle for a few seconds (its jobs tick), and stopped;
// Bun writes the hashes of the functions that ran. Those are placed together at the front, so the
// server reads fewer pages of itself (~5 MiB less resident). Functions are matched by a hash of their
// syntax: an older profile still applies, new code is placed after it. Rerun after large changes:
// `bun scripts/record-bytecode-order.ts`.
import { spawn, spawnSync } from "bun";
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const PROFILE = join(
  ROOT,
  "scripts",
  process.env.HERALD_DATABASE_URL ? "serve-postgres.bytecode-order" : "serve.bytecode-order",
);
const IDLE_MS = 5_000;

function run(command: string[], env: Record<string, string | undefined> = process.env): string {
  const done = spawnSync(command, { cwd: ROOT, env, stdout: "pipe", stderr: "pipe" });
  if (done.exitCode !== 0) throw new Error(`${command.join(" ")} failed: ${done.stderr.toString()}`);
  return done.stdout.toString();
}

const work = mkdtempSync(join(tmpdir(), "herald-bytecode-order-"));
try {
  const build = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.build as string)
    .split(/\s+/)
    .slice(1)
    .filter((arg) => !arg.startsWith("--bytecode-order"));
  const binary = join(work, "herald");
  build[build.indexOf("--outfile") + 1] = binary;
  run([BUN, ...build]);

  const env = { ...process.env, HERALD_DATA_DIR: join(work, "data"), HERALD_ACCESS_LOG: "0" };
  run(
    [binary, "admin", "bootstrap", "--email", "order@example.com", "--workspace-name", "Order", "--json"],
    env,
  );
  const port = Bun.serve({ port: 0, fetch: () => new Response() });
  const origin = `http://127.0.0.1:${port.port}`;
  await port.stop(true);
  const recorded = join(work, "serve.order");
  const server = spawn([binary, "serve"], {
    env: { ...env, HERALD_PORT: String(new URL(origin).port), BUN_BYTECODE_ORDER_OUT: recorded },
    stdout: "ignore",
    stderr: "inherit",
  });
  let healthy = false;
  for (let i = 0; i < 500 && !healthy; i++) {
    healthy = await fetch(`${origin}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (!healthy) await Bun.sleep(20);
  }
  if (!healthy) throw new Error("herald serve never answered /health");
  await Bun.sleep(IDLE_MS);
  server.kill("SIGTERM");
  if ((await server.exited) !== 0) throw new Error(`herald serve exited with ${server.exitCode}`);
  copyFileSync(recorded, PROFILE);
  chmodSync(PROFILE, 0o644);
  console.log(`wrote ${PROFILE}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
