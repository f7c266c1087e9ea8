// HTTP benchmark: an authenticated `GET /v1/workspaces/{ws}/posts/{id}` next to the bare baseline
// server (bench/baseline-server.ts) doing the same lookups in its own process, a page of 20 posts, and
// Create Post making drafts (Idempotency-Key, audit and outbox in one transaction, unique keys),
// each against a `herald serve` process and driven by wrk (Debian's `wrk`) from another process.
// It uses only the CLI and HTTP, so the same file measures any version of Herald.
import { spawn, spawnSync, type Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatSummary, percent, ROUNDS, summarize, type Summary } from "./method.ts";
import { recordTarget } from "./targets.ts";

const ROOT = join(import.meta.dir, "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const DURATION_S = Number(process.env.BENCH_WRK_SECONDS ?? 10);
const WARM_UP_S = 5;

export function freePort(): number {
  const server = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = server.port!;
  void server.stop(true);
  return port;
}

/**
 * A data directory and a free port for a `herald serve` child, and its environment: this process's,
 * with the access log off and the rate limit out of the way, then `env` (the engine, extra settings).
 */
export function benchServer(prefix: string, env: Record<string, string | undefined> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const port = freePort();
  const origin = `http://127.0.0.1:${port}`;
  const serverEnv: Record<string, string | undefined> = {
    ...process.env,
    HERALD_DATA_DIR: dataDir,
    HERALD_PORT: String(port),
    HERALD_ACCESS_LOG: "0",
    HERALD_RATE_LIMIT_PER_MINUTE: "1000000",
    ...env,
  };
  return { dataDir, port, origin, serverEnv };
}

export interface WrkRun {
  rps: number;
  p99Ms: number;
  /** Non-2xx answers and connect, read or write errors. */
  errors: number;
  /** Requests wrk gave up on after its 2 s timeout (slow, not failed). */
  timeouts: number;
}

/** Runs wrk once (-t2 -c64): requests/s, p99 latency (ms) and non-2xx or socket errors. */
export function wrk(url: string, key: string, seconds: number, script?: string): WrkRun {
  const args = ["wrk", "-t2", "-c64", `-d${seconds}s`, "--latency", "-H", `Authorization: Bearer ${key}`];
  if (script) args.push("-s", script);
  const out = spawnSync([...args, url], { stdout: "pipe", cwd: ROOT }).stdout.toString();
  const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
  const unit = { us: 0.001, ms: 1, s: 1000 }[p99?.[2] as "us" | "ms" | "s"] ?? 1;
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors =
    Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) +
    (socket ? socket.slice(1, 4).reduce((sum, n) => sum + Number(n), 0) : 0);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0),
    p99Ms: Number(p99?.[1] ?? 0) * unit,
    timeouts: Number(socket?.[4] ?? 0),
    errors,
  };
}

/** A bench account made with `herald admin bootstrap` on the server's data (env): its key and workspace. */
export function bootstrapAccount(
  env: Record<string, string | undefined>,
  email: string,
): { api_key: string; workspace_id: string } {
  const bootstrap = [BUN, "src/main.ts", "admin", "bootstrap", "--email", email];
  const boot = spawnSync([...bootstrap, "--workspace-name", "Bench", "--json"], {
    cwd: ROOT,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (boot.exitCode !== 0) throw new Error(`bootstrap failed: ${boot.stderr.toString()}`);
  return JSON.parse(boot.stdout.toString()) as { api_key: string; workspace_id: string };
}

export async function waitForHealth(origin: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (
      await fetch(`${origin}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return;
    await Bun.sleep(50);
  }
  throw new Error(`${origin} did not answer /health`);
}

/** A rate as the tables show it: 1,256. */
const whole = (n: number) => Math.round(n).toLocaleString("en-US");

interface Measure {
  name: string;
  rps: number[];
  p99: number[];
  errors: number;
  timeouts: number;
}

/** The HTTP section of docs/benchmarks.md; `env` selects the storage engine, `label` names it. */
export async function readsBenchmark(env: Record<string, string> = {}, label = "SQLite"): Promise<string> {
  if (spawnSync(["which", "wrk"]).exitCode !== 0)
    return `## HTTP (${label})\n\nSkipped: \`wrk\` is not installed.`;
  const { dataDir, origin, serverEnv } = benchServer("herald-reads", env);
  const basePort = freePort();
  const processes: Subprocess[] = [];
  try {
    const account = bootstrapAccount(serverEnv, "r@example.com");
    processes.push(
      spawn([BUN, "src/main.ts", "serve"], {
        cwd: ROOT,
        env: serverEnv,
        stdio: ["ignore", "ignore", "ignore"],
      }),
    );
    const database = env.HERALD_DATABASE_URL ?? join(dataDir, "herald.db");
    processes.push(
      spawn([BUN, "bench/baseline-server.ts", database, String(basePort)], {
        cwd: ROOT,
        stdio: ["ignore", "ignore", "inherit"],
      }),
    );
    await waitForHealth(origin);
    const posts = `/v1/workspaces/${account.workspace_id}/posts`;
    const headers = { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" };
    let postId = "";
    for (let i = 0; i < 25; i++) {
      const body = {
        group: `g${i}`,
        when: "draft",
        posts: [{ channel: "mastodon", body: [`read bench ${i}`] }],
      };
      const created = await fetch(origin + posts, { method: "POST", headers, body: JSON.stringify(body) });
      postId = ((await created.json()) as { posts: { id: string }[] }).posts[0]!.id;
    }
    const one = `${posts}/${postId}`;
    const baselineProbe = await fetch(`http://127.0.0.1:${basePort}${one}`, { headers });
    if (!baselineProbe.ok) throw new Error(`baseline server answered ${baselineProbe.status}`);
    const cases = [
      { name: "Baseline: bare Bun.serve, same lookups", url: `http://127.0.0.1:${basePort}${one}` },
      { name: "GET one post", url: origin + one },
      { name: "GET a page of 20 posts", url: `${origin}${posts}?limit=20` },
      {
        name: "Create Post (a draft, unique Idempotency-Key)",
        url: origin + posts,
        script: "bench/wrk/create-draft.lua",
      },
    ];
    const measures: Measure[] = cases.map((c) => ({
      name: c.name,
      rps: [],
      p99: [],
      errors: 0,
      timeouts: 0,
    }));
    for (const c of cases) wrk(c.url, account.api_key, WARM_UP_S, c.script);
    // Rounds interleave the cases, so a slow moment of the VM touches all of them alike.
    for (let round = 0; round < ROUNDS; round++)
      cases.forEach((c, i) => {
        const run = wrk(c.url, account.api_key, DURATION_S, c.script);
        measures[i]!.rps.push(run.rps);
        measures[i]!.p99.push(run.p99Ms);
        measures[i]!.errors += run.errors;
        measures[i]!.timeouts += run.timeouts;
      });
    const [baseline, onePost, page, create] = measures.map((m) => ({
      ...m,
      s: summarize(m.rps),
    })) as (Measure & {
      s: Summary;
    })[];
    const row = (m: Measure & { s: Summary }, target: string, met: boolean) =>
      `| ${m.name} | ${formatSummary(m.s)} req/s | ${summarize(m.p99).median.toFixed(1)} ms | ${m.errors} / ${m.timeouts} | ${target} | ${met ? "met" : "missed"} |`;
    // The ratio within each round (the two ran back to back), then its median.
    const ratio = summarize(onePost!.rps.map((rps, i) => rps / baseline!.rps[i]!)).median;
    const readTarget = 0.35;
    recordTarget({
      measure: "GET one post ÷ bare Bun.serve baseline",
      engine: label,
      figure: `${ratio.toFixed(2)} × (${whole(onePost!.s.median)} ÷ ${whole(baseline!.s.median)} req/s)`,
      target: `≥ ${readTarget} ×`,
      met: ratio >= readTarget,
    });
    return [
      `## HTTP (${label})`,
      "",
      `\`herald serve\` in its own process (access log off, rate limit raised), the baseline server in another, wrk ` +
        `-t2 -c64 from a third, all on the same 2 cores. A ${WARM_UP_S} s warm-up run of each case, then ${ROUNDS} ` +
        `rounds of ${DURATION_S} s runs with the cases interleaved; median (lowest–highest). Errors are non-2xx ` +
        `responses and socket errors over all runs; timeouts are requests wrk gave up on after 2 s (slow, not ` +
        `failed). Authenticated with a live key on every request.`,
      "",
      "| Request | Throughput | p99 latency | Errors / timeouts | Target | |",
      "|---|---|---|---|---|---|",
      `| ${baseline!.name} | ${formatSummary(baseline!.s)} req/s | ${summarize(baseline!.p99).median.toFixed(1)} ms | ${baseline!.errors} / ${baseline!.timeouts} | — | |`,
      row(
        onePost!,
        `≥ ${readTarget} × baseline (now ${ratio.toFixed(2)} ×, ${percent(onePost!.s.median, baseline!.s.median)})`,
        ratio >= readTarget,
      ),
      row(page!, "—", true).replace(/\| met \|$/, "| |"),
      row(
        create!,
        "≥ 5,000 req/s, 0 errors",
        create!.s.median >= 5000 && create!.errors + create!.timeouts === 0,
      ),
    ].join("\n");
  } finally {
    for (const p of processes) p.kill();
    await Promise.all(processes.map((p) => p.exited));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(await readsBenchmark());
