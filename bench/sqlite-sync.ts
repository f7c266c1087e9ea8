// Create Post (drafts) with each SQLite sync setting side by side: two `herald serve` processes, one
// with HERALD_SQLITE_SYNC=full (the default: the WAL synced before every acknowledged commit) and one
// with `normal` (synced at checkpoints only), driven by wrk in interleaved rounds (ABBA order), so a
// slow moment of a shared VM touches both alike. Besides requests/s it reports the server's CPU time
// per request (user + system from /proc), steadier than throughput when other work shares the cores.
// Run: `bun bench/sqlite-sync.ts` (BENCH_ROUNDS, BENCH_WRK_SECONDS as for the other benchmarks).
import { spawn, spawnSync, type Subprocess } from "bun";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { formatSummary, percent, ROUNDS, summarize } from "./method.ts";
import { recordTarget } from "./targets.ts";
import { benchServer, bootstrapAccount, waitForHealth } from "./reads.ts";

const ROOT = join(import.meta.dir, "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const DURATION_S = Number(process.env.BENCH_WRK_SECONDS ?? 10);
const WARM_UP_S = 5;
const SETTINGS = ["full", "normal"] as const;
/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS = 100;

function freePort(): number {
  const server = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = server.port!;
  void server.stop(true);
  return port;
}

/** User plus system CPU seconds of a process so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

interface Server {
  setting: (typeof SETTINGS)[number];
  proc: Subprocess;
  url: string;
  key: string;
  dataDir: string;
  rps: number[];
  cpuMsPerRequest: number[];
  errors: number;
}

async function start(setting: Server["setting"]): Promise<Server> {
  const {
    dataDir,
    port,
    serverEnv: env,
  } = benchServer(`herald-sync-${setting}`, { HERALD_SQLITE_SYNC: setting });
  const account = bootstrapAccount(env, "s@example.com");
  const proc = spawn([BUN, "src/main.ts", "serve"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "ignore", "ignore"],
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitForHealth(origin);
  return {
    setting,
    proc,
    url: `${origin}/v1/workspaces/${account.workspace_id}/posts`,
    key: account.api_key,
    dataDir,
    rps: [],
    cpuMsPerRequest: [],
    errors: 0,
  };
}

/** One wrk run of Create Post (-t2 -c64, as bench/reads.ts): requests/s, requests, errors. */
function wrk(server: Server, seconds: number) {
  const args = ["wrk", "-t2", "-c64", `-d${seconds}s`, "-H", `Authorization: Bearer ${server.key}`];
  const out = spawnSync([...args, "-s", "bench/wrk/create-draft.lua", server.url], {
    stdout: "pipe",
    cwd: ROOT,
  }).stdout.toString();
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? 0),
    errors:
      Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) +
      (socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0),
  };
}

function measure(server: Server): void {
  const before = cpuSeconds(server.proc.pid);
  const run = wrk(server, DURATION_S);
  const cpu = cpuSeconds(server.proc.pid) - before;
  server.rps.push(run.rps);
  server.cpuMsPerRequest.push(run.requests > 0 ? (1000 * cpu) / run.requests : 0);
  server.errors += run.errors;
}

export async function sqliteSyncBenchmark(): Promise<string> {
  if (spawnSync(["which", "wrk"]).exitCode !== 0)
    return "## SQLite sync settings\n\nSkipped: `wrk` is not installed.";
  const servers: Server[] = [];
  try {
    for (const setting of SETTINGS) servers.push(await start(setting));
    for (const server of servers) wrk(server, WARM_UP_S);
    for (let round = 0; round < ROUNDS; round++)
      for (const server of round % 2 === 0 ? servers : [...servers].reverse()) measure(server);
    const [full, normal] = servers.map((s) => ({
      ...s,
      r: summarize(s.rps),
      c: summarize(s.cpuMsPerRequest),
    }));
    const kept = full!.r.median / normal!.r.median;
    recordTarget({
      measure: "Create Post with every commit synced ÷ HERALD_SQLITE_SYNC=normal",
      engine: "SQLite",
      figure: percent(full!.r.median, normal!.r.median),
      target: "≥ 90%",
      met: kept >= 0.9,
    });
    const row = (s: typeof full) =>
      `| ${s!.setting} | ${formatSummary(s!.r)} req/s | ${formatSummary(s!.c, 3)} ms | ${s!.errors} |`;
    return [
      "## SQLite sync settings: Create Post (drafts)",
      "",
      `Two \`herald serve\` processes, HERALD_SQLITE_SYNC=full and =normal, each on its own data directory; ` +
        `wrk -t2 -c64 with bench/wrk/create-draft.lua, a ${WARM_UP_S} s warm-up each, then ${ROUNDS} rounds of ` +
        `${DURATION_S} s runs in ABBA order; median (lowest–highest). CPU is the server's user + system time ` +
        "per request.",
      "",
      "| HERALD_SQLITE_SYNC | Throughput | Server CPU per request | Errors |",
      "|---|---|---|---|",
      row(full),
      row(normal),
      "",
      `full / normal: ${percent(full!.r.median, normal!.r.median)} of the throughput (target ≥ 90%), ` +
        `${percent(full!.c.median, normal!.c.median)} of the CPU per request.`,
    ].join("\n");
  } finally {
    for (const s of servers) s.proc.kill();
    await Promise.all(servers.map((s) => s.proc.exited));
    for (const s of servers) rmSync(s.dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(await sqliteSyncBenchmark());
