// Start-up benchmark: how long `herald serve` takes from being spawned to answering `GET /health`
// with 200, and how much memory it holds once it has answered and settled, as a user sees them: the
// server in its own process on a fresh, already bootstrapped data dir, polled from this process. Run
// from source (`bun src/main.ts serve`) and as the compiled binary, built here from the same sources
// with the flags of `npm run build`. Run through `npm run bench`, or alone: `bun bench/startup.ts`
// (SQLite), with HERALD_DATABASE_URL set for PostgreSQL.
import { spawn, spawnSync } from "bun";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatSummary, repeat, ROUNDS, summarize, type Summary, engineFromEnvironment } from "./method.ts";
import { recordTarget } from "./targets.ts";

const ROOT = join(import.meta.dir, "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const START_TARGET_MS = 100;
const RSS_TARGET_MIB = 60;
/** How long the server idles after its first answer before its memory is read. */
const SETTLE_MS = 2_000;
const POLL_MS = 2;
const GIVE_UP_MS = 30_000;

/** One start of the server. */
interface Run {
  /** Spawn to the first 200 from /health. */
  startMs: number;
  /** CPU time the server's threads used until then (less sensitive to a busy machine). */
  cpuMs: number;
  /** VmRSS after SETTLE_MS, and its anonymous and file-backed parts (the executable's code pages). */
  rssMiB: number;
  anonMiB: number;
  fileMiB: number;
}

/** This process's environment without HERALD_* settings: each run gets only the ones it is given. */
function baseEnv(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("HERALD_")));
}

function freePort(): number {
  const server = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = server.port!;
  void server.stop(true);
  return port;
}

/** Sum of the on-CPU time of every thread of `pid` (schedstat is in ns, per thread). */
function cpuTimeMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return ns / 1e6;
}

function memoryMiB(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rss: kib("VmRSS") / 1024, anon: kib("RssAnon") / 1024, file: kib("RssFile") / 1024 };
}

/** Spawns `command` on a copy of `template`, waits for /health, lets it settle, reads it, stops it. */
async function startOnce(command: string[], template: string, env: Record<string, string>): Promise<Run> {
  const dataDir = mkdtempSync(join(tmpdir(), "herald-bench-startup-run-"));
  cpSync(template, dataDir, { recursive: true });
  const port = freePort();
  const url = `http://127.0.0.1:${port}/health`;
  const startedAt = performance.now();
  const server = spawn(command, {
    cwd: ROOT,
    env: { ...baseEnv(), ...env, HERALD_DATA_DIR: dataDir, HERALD_PORT: String(port) },
    stdout: "ignore",
    stderr: "ignore",
  });
  try {
    let startMs = 0;
    while (startMs === 0) {
      const ok = await fetch(url).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ok) startMs = performance.now() - startedAt;
      else if (server.exitCode !== null) throw new Error(`${command.join(" ")} exited (${server.exitCode})`);
      else if (performance.now() - startedAt > GIVE_UP_MS) throw new Error(`${url} never answered`);
      else await Bun.sleep(POLL_MS);
    }
    const cpuMs = cpuTimeMs(server.pid);
    await Bun.sleep(SETTLE_MS);
    const memory = memoryMiB(server.pid);
    return { startMs, cpuMs, rssMiB: memory.rss, anonMiB: memory.anon, fileMiB: memory.file };
  } finally {
    server.kill("SIGTERM");
    const stopped = await Promise.race([server.exited.then(() => true), Bun.sleep(5_000).then(() => false)]);
    if (!stopped) server.kill("SIGKILL");
    await server.exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Builds the binary into `dir` with `npm run build`'s flags (only the output path differs). */
function buildBinary(dir: string): string {
  const scripts = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts as { build: string };
  const outfile = join(dir, "herald");
  const args = scripts.build.split(/\s+/).slice(1);
  const at = args.indexOf("--outfile");
  if (args[0] !== "build" || at < 0) throw new Error(`unexpected build script: ${scripts.build}`);
  args[at + 1] = outfile;
  const built = spawnSync([BUN, ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (built.exitCode !== 0) throw new Error(`build failed: ${built.stderr.toString()}`);
  return outfile;
}

/** A bootstrapped data dir (one account, workspace and key), copied for every run. */
function bootstrappedTemplate(env: Record<string, string>): string {
  const template = mkdtempSync(join(tmpdir(), "herald-bench-startup-"));
  const boot = spawnSync(
    [BUN, "src/main.ts", "admin", "bootstrap", "--email", "s@example.com", "--workspace-name", "S", "--json"],
    { cwd: ROOT, env: { ...baseEnv(), ...env, HERALD_DATA_DIR: template }, stdout: "pipe", stderr: "pipe" },
  );
  if (boot.exitCode !== 0) throw new Error(`bootstrap failed: ${boot.stderr.toString()}`);
  return template;
}

/** Warm-up, then ROUNDS starts of `command`; the summaries of each figure over the measured starts. */
async function measure(command: string[], template: string, env: Record<string, string>) {
  const runs: Run[] = [];
  await repeat(async () => {
    const run = await startOnce(command, template, env);
    runs.push(run);
    return run.startMs;
  });
  const measured = runs.slice(1);
  const of = (figure: keyof Run) => summarize(measured.map((run) => run[figure]));
  return {
    start: of("startMs"),
    cpu: of("cpuMs"),
    rss: of("rssMiB"),
    anon: of("anonMiB"),
    file: of("fileMiB"),
  };
}

const verdict = (s: Summary, target: number) => (s.median <= target ? "met" : "missed");

/** The start-up section of docs/benchmarks.md, with `label` naming the engine. */
export async function startupBenchmark(env: Record<string, string> = {}, label = "SQLite"): Promise<string> {
  const serverEnv = { HERALD_ACCESS_LOG: "0", ...env };
  const template = bootstrappedTemplate(serverEnv);
  const buildDir = mkdtempSync(join(tmpdir(), "herald-bench-startup-build-"));
  try {
    const variants = [
      {
        name: "from source (`bun src/main.ts serve`)",
        command: [BUN, "src/main.ts", "serve"],
        binary: false,
      },
      // What users run: its idle RSS is the target, recorded for the targets table.
      { name: "compiled binary", command: [buildBinary(buildDir), "serve"], binary: true },
    ];
    const rows: string[] = [];
    for (const variant of variants) {
      const m = await measure(variant.command, template, serverEnv);
      const rssVerdict = variant.binary
        ? recordTarget({
            measure: "Idle RSS of the binary",
            engine: label,
            figure: `${formatSummary(m.rss, 1)} MiB`,
            target: `≤ ${RSS_TARGET_MIB} MiB`,
            met: m.rss.median <= RSS_TARGET_MIB,
          })
        : verdict(m.rss, RSS_TARGET_MIB);
      rows.push(
        `| Start to \`/health\` answering, ${variant.name} | ${formatSummary(m.start)} ms | ≤ ${START_TARGET_MS} ms | ${verdict(m.start, START_TARGET_MS)} |`,
        `| CPU time of the server until then (all threads) | ${formatSummary(m.cpu)} ms | — | — |`,
        `| Idle RSS after start, ${variant.name} | ${formatSummary(m.rss, 1)} MiB | ≤ ${RSS_TARGET_MIB} MiB | ${rssVerdict} |`,
        `| of which anonymous / file-backed (Bun's own code pages) | ${formatSummary(m.anon, 1)} / ${formatSummary(m.file, 1)} MiB | — | — |`,
      );
    }
    return [
      `## Start-up and idle memory (${label})`,
      "",
      `\`herald serve\` spawned on a fresh copy of a bootstrapped data dir (access log off), from source and ` +
        `as the binary built with \`npm run build\`'s flags; this process polls \`GET /health\` every ` +
        `${POLL_MS} ms from the spawn until a 200, then reads VmRSS from /proc/<pid>/status after ` +
        `${SETTLE_MS / 1000} s of idling. A warm-up start thrown away, then ${ROUNDS} starts: median ` +
        `(lowest–highest). The CPU time (sum of the server's threads' schedstat) shows how much of the ` +
        `wall time is the server's own work on a busy machine.`,
      "",
      "| Figure | Measured | Target | Result |",
      "|---|---|---|---|",
      ...rows,
    ].join("\n");
  } finally {
    rmSync(template, { recursive: true, force: true });
    rmSync(buildDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { env, label } = engineFromEnvironment();
  console.log(await startupBenchmark(env, label));
}
