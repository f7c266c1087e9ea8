// PostgreSQL next to SQLite in one run: a `herald serve` on each engine, both up at once, and wrk
// runs of GET one post and Create Post (a draft, unique Idempotency-Key) interleaved across the two,
// so a busy moment of a shared machine touches both alike. Reports requests/s, the PostgreSQL ÷ SQLite
// ratio and CPU per request (Herald's process; on PostgreSQL also the cluster's), and records the two
// ratios for the targets table. `npm run bench` runs it once, after the per-engine benchmarks, on its
// own PostgreSQL cluster (`enginesBenchmark`); alone it is the quick paired check for engine work:
//   bun bench/engines.ts                       # 3 rounds of 10 s runs
//   BENCH_ROUNDS=1 BENCH_WRK_SECONDS=5 bun bench/engines.ts
//   BENCH_PG_STATEMENTS=1 bun bench/engines.ts # also PostgreSQL's statements per request
//   BENCH_CPU_PROF=<dir> bun bench/engines.ts  # Bun CPU profiles of both servers into <dir>
//   BENCH_CASES=create (or get)                # one of the two cases alone
import { spawn, spawnSync, type Subprocess } from "bun";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { formatSummary, ROUNDS, summarize } from "./method.ts";
import { startBenchPostgres } from "./postgres.ts";
import { benchServer, bootstrapAccount, waitForHealth } from "./reads.ts";
import { recordTarget } from "./targets.ts";

const ROOT = join(import.meta.dir, "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const SECONDS = Number(process.env.BENCH_WRK_SECONDS ?? 10);
const STATEMENTS = process.env.BENCH_PG_STATEMENTS === "1";
const CPU_PROF = process.env.BENCH_CPU_PROF;
const TICKS_PER_S = 100;

/** CPU time (s) of a process, with its reaped children. */
function cpuOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // utime, stime, cutime, cstime are fields 14–17 of stat; index 0 here is field 3.
    return [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) / TICKS_PER_S;
  } catch {
    return 0;
  }
}

/** CPU time (s) of a process and every live descendant. */
function treeCpu(pid: number): number {
  let total = cpuOf(pid);
  for (const task of safeList(`/proc/${pid}/task`)) {
    const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
    for (const child of children ? children.split(" ") : []) total += treeCpu(Number(child));
  }
  return total;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function freePort(): number {
  const server = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = server.port!;
  void server.stop(true);
  return port;
}

interface Server {
  label: string;
  process: Subprocess;
  origin: string;
  key: string;
  onePost: string;
  posts: string;
  /** CPU of the database outside Herald's process (PostgreSQL's cluster), if any. */
  databaseCpu: () => number;
  dataDir: string;
}

async function startServer(label: string, env: Record<string, string>, databaseCpu: () => number) {
  const { dataDir, port, serverEnv } = benchServer("herald-engines", env);
  const account = bootstrapAccount(serverEnv, "r@example.com");
  const profile = CPU_PROF
    ? ["--cpu-prof", `--cpu-prof-dir=${CPU_PROF}`, `--cpu-prof-name=${label}.cpuprofile`]
    : [];
  const child = spawn([BUN, ...profile, "src/main.ts", "serve"], {
    cwd: ROOT,
    env: serverEnv,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitForHealth(origin);
  const posts = `/v1/workspaces/${account.workspace_id}/posts`;
  const headers = { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" };
  let postId = "";
  for (let i = 0; i < 25; i++) {
    const body = { group: `g${i}`, when: "draft", posts: [{ channel: "mastodon", body: [`engines ${i}`] }] };
    const created = await fetch(origin + posts, { method: "POST", headers, body: JSON.stringify(body) });
    postId = ((await created.json()) as { posts: { id: string }[] }).posts[0]!.id;
  }
  return {
    label,
    process: child,
    origin,
    key: account.api_key,
    onePost: `${posts}/${postId}`,
    posts,
    databaseCpu,
    dataDir,
  } satisfies Server;
}

interface Run {
  rps: number;
  p99Ms: number;
  errors: number;
  /** CPU ms per request: Herald's process, and the database's outside it. */
  heraldMs: number;
  databaseMs: number;
}

function wrk(server: Server, url: string, script?: string): Run {
  const args = [
    "wrk",
    "-t2",
    "-c64",
    `-d${SECONDS}s`,
    "--latency",
    "-H",
    `Authorization: Bearer ${server.key}`,
  ];
  if (script) args.push("-s", script);
  const herald0 = cpuOf(server.process.pid);
  const database0 = server.databaseCpu();
  const out = spawnSync([...args, url], { stdout: "pipe", cwd: ROOT }).stdout.toString();
  const heraldS = cpuOf(server.process.pid) - herald0;
  const databaseS = server.databaseCpu() - database0;
  const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
  const unit = { us: 0.001, ms: 1, s: 1000 }[p99?.[2] as "us" | "ms" | "s"] ?? 1;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
  const requests = Math.max(1, rps * SECONDS);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps,
    p99Ms: Number(p99?.[1] ?? 0) * unit,
    errors:
      Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) +
      (socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0),
    heraldMs: (1000 * heraldS) / requests,
    databaseMs: (1000 * databaseS) / requests,
  };
}

/** A rate as the tables show it: 1,256. */
const whole = (n: number) => Math.round(n).toLocaleString("en-US");

/** What the issue asks of PostgreSQL beside SQLite, for both requests. */
const TARGET_RATIO = 0.8;

/**
 * The paired section: `pgEnv` points Herald at a fresh PostgreSQL database whose cluster's postmaster
 * is `clusterPid` (its CPU is counted apart); a SQLite server is started beside it. `label` names the
 * section. With `statements`, the cluster has pg_stat_statements loaded and the last round prints
 * PostgreSQL's statements per request.
 */
export async function enginesBenchmark(
  pgEnv: Record<string, string>,
  label = "PostgreSQL beside SQLite",
  options: { clusterPid?: number; statements?: boolean } = {},
): Promise<string> {
  if (spawnSync(["which", "wrk"]).exitCode !== 0) return `## ${label}\n\nSkipped: \`wrk\` is not installed.`;
  const clusterPid = options.clusterPid;
  const servers: Server[] = [];
  let statementsClient: SQL | null = null;
  try {
    servers.push(await startServer("SQLite", {}, () => 0));
    servers.push(await startServer("PostgreSQL", pgEnv, () => (clusterPid ? treeCpu(clusterPid) : 0)));
    const only = process.env.BENCH_CASES; // "get" or "create": one case alone (for a profile of it)
    const cases = [
      { name: "GET one post", url: (s: Server) => s.origin + s.onePost },
      {
        name: "Create Post (draft)",
        url: (s: Server) => s.origin + s.posts,
        script: "bench/wrk/create-draft.lua",
      },
    ];
    if (only === "get") cases.pop();
    if (only === "create") cases.shift();
    const runs = new Map<string, Run[]>();
    for (const c of cases) for (const s of servers) wrk({ ...s }, c.url(s), c.script); // warm-up
    if (options.statements) {
      statementsClient = new SQL(pgEnv.HERALD_DATABASE_URL!, { max: 1 });
      await statementsClient.unsafe("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    }
    for (let round = 0; round < ROUNDS; round++)
      for (const c of cases)
        for (const s of round % 2 === 0 ? servers : [...servers].reverse()) {
          if (statementsClient && s.label === "PostgreSQL")
            await statementsClient`SELECT pg_stat_statements_reset()`;
          const run = wrk(s, c.url(s), c.script);
          const key = `${c.name}|${s.label}`;
          runs.set(key, [...(runs.get(key) ?? []), run]);
          console.error(`${key}: ${run.rps.toFixed(0)} req/s, herald ${run.heraldMs.toFixed(3)} ms CPU/req`);
          if (statementsClient && s.label === "PostgreSQL" && round === ROUNDS - 1)
            await printStatements(statementsClient, c.name, run);
        }
    const header = [
      "Request",
      "SQLite req/s",
      "PostgreSQL req/s",
      "PG ÷ SQLite",
      "Herald CPU/req SQLite · PG",
    ];
    header.push("PG cluster CPU/req", "p99 SQLite · PG", "Target", "");
    const lines = [
      `## ${label}`,
      "",
      "A `herald serve` on SQLite and one on PostgreSQL (default durability) up at once, wrk -t2 -c64 runs of " +
        `each request interleaved across the two (a ${SECONDS} s warm-up each, then ${ROUNDS} rounds of ` +
        `${SECONDS} s), all on the same cores. The ratio is taken within each round; median (lowest–highest). ` +
        "CPU per request is Herald's process, and PostgreSQL's cluster apart.",
      "",
      `| ${header.join(" | ")} |`,
      `${"|---".repeat(header.length)}|`,
    ];
    const median = (xs: number[]) => summarize(xs).median;
    const pair = (a: Run[], b: Run[], f: (r: Run) => number, digits: number) =>
      `${median(a.map(f)).toFixed(digits)} · ${median(b.map(f)).toFixed(digits)} ms`;
    for (const c of cases) {
      const sqlite = runs.get(`${c.name}|SQLite`)!;
      const pg = runs.get(`${c.name}|PostgreSQL`)!;
      const ratios = summarize(pg.map((r, i) => r.rps / sqlite[i]!.rps));
      const measure = `${c.name === "GET one post" ? "GET one post" : "Create Post"}, PostgreSQL ÷ SQLite`;
      const sqliteRps = median(sqlite.map((r) => r.rps));
      const pgRps = median(pg.map((r) => r.rps));
      const verdict = recordTarget({
        measure,
        engine: "both",
        figure: `${ratios.median.toFixed(2)} × (${whole(pgRps)} ÷ ${whole(sqliteRps)} req/s)`,
        target: `≥ ${TARGET_RATIO} ×`,
        met: ratios.median >= TARGET_RATIO,
      });
      const errors = sqlite.concat(pg).reduce((sum, r) => sum + r.errors, 0);
      const cells = [
        c.name + (errors ? ` (${errors} errors)` : ""),
        formatSummary(summarize(sqlite.map((r) => r.rps))),
        formatSummary(summarize(pg.map((r) => r.rps))),
        formatSummary(ratios, 2),
        pair(sqlite, pg, (r) => r.heraldMs, 3),
        clusterPid ? `${median(pg.map((r) => r.databaseMs)).toFixed(3)} ms` : "—",
        pair(sqlite, pg, (r) => r.p99Ms, 1),
        `≥ ${TARGET_RATIO} ×`,
        verdict,
      ];
      lines.push(`| ${cells.join(" | ")} |`);
    }
    return lines.join("\n");
  } finally {
    await statementsClient?.close();
    for (const s of servers) s.process.kill("SIGINT");
    await Promise.all(servers.map((s) => s.process.exited));
    for (const s of servers) rmSync(s.dataDir, { recursive: true, force: true });
  }
}

/** PostgreSQL's statements per request during one run (pg_stat_statements since its reset). */
async function printStatements(client: SQL, name: string, run: Run): Promise<void> {
  const rows = (await client.unsafe(
    "SELECT calls, round(total_exec_time::numeric, 1) AS ms, round(mean_exec_time::numeric, 3) AS mean, " +
      "left(regexp_replace(query, '\\s+', ' ', 'g'), 140) AS query FROM pg_stat_statements " +
      "WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC LIMIT 25",
  )) as { calls: string; ms: string; mean: string; query: string }[];
  const requests = Math.max(1, run.rps * SECONDS);
  console.error(`\nStatements during ${name} on PostgreSQL (${requests.toFixed(0)} requests):`);
  for (const r of rows)
    console.error(
      `${(Number(r.calls) / requests).toFixed(2)}/req  ${r.mean} ms  ${r.calls} calls  ${r.query}`,
    );
}

if (import.meta.main) {
  const postgres = await startBenchPostgres(
    STATEMENTS ? ["shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all"] : [],
  );
  if (!postgres) throw new Error("PostgreSQL's server binaries are not installed");
  try {
    const env = await postgres.freshDatabase();
    console.log(await enginesBenchmark(env, undefined, { clusterPid: postgres.pid, statements: STATEMENTS }));
  } finally {
    await postgres.stop();
  }
}
