// Memory benchmark: does `herald serve` grow with the work it has done? The server runs in its own
// process and publishes to instant Mastodon fakes in this process (100 destinations: bench/destinations.ts); posts are created through the API
// in batches of 100, due at once, a wave at a time (each wave published before the next is created).
// The server's VmRSS (/proc/<pid>/status) is read after 10,000 and after 100,000 published posts, each
// time once it has idled for a moment; their ratio is the target. Run through `npm run bench`,
// or alone: `bun bench/memory.ts` (SQLite), with HERALD_DATABASE_URL set for PostgreSQL.
// BENCH_MEMORY_POSTS changes the 100,000 (the first reading is always at a tenth of it).
import { spawn, type Subprocess } from "bun";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import {
  connectMastodonDestinations,
  statusCount,
  stopFakes,
  type BenchDestinations,
} from "./destinations.ts";
import { benchServer, bootstrapAccount, waitForHealth } from "./reads.ts";
import { engineFromEnvironment } from "./method.ts";
import { recordTarget } from "./targets.ts";

const ROOT = join(import.meta.dir, "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const POSTS = Number(process.env.BENCH_MEMORY_POSTS ?? 100_000);
const FIRST = POSTS / 10;
const BATCH = 100;
/** Posts created before the engine is left to publish them (the fake answers at once). */
const WAVE = 2_000;
/** How long the server idles before its memory is read. */
const SETTLE_MS = 2_000;
const RATIO_TARGET = 1.5;

/** VmRSS of `pid` in MiB. */
function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

interface Client {
  origin: string;
  key: string;
  ws: string;
}

async function api(
  c: Client,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(c.origin + path, {
    method,
    headers: { authorization: `Bearer ${c.key}`, "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status >= 300)
    throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json() as Promise<Record<string, unknown>>;
}

/** Creates posts `from`..`to` (due now) a wave at a time, each wave published before the next. */
async function publish(c: Client, destinations: BenchDestinations, from: number, to: number) {
  for (let wave = from; wave < to; wave += WAVE) {
    for (let first = wave; first < Math.min(wave + WAVE, to); first += BATCH) {
      const posts = Array.from({ length: BATCH }, (_, k) => ({
        destination_id: destinations.ids[k % destinations.ids.length],
        body: [`memory ${first + k}`],
      }));
      const group = `m${first}`;
      await api(
        c,
        "POST",
        `/v1/workspaces/${c.ws}/posts`,
        { when: "now", confirmed: true, group, posts },
        {
          "idempotency-key": group,
        },
      );
    }
    const deadline = Date.now() + 600_000;
    const published = () => statusCount(destinations);
    while (published() < Math.min(wave + WAVE, to) && Date.now() < deadline) await Bun.sleep(20);
    if (published() < Math.min(wave + WAVE, to))
      throw new Error(`only ${published()} posts were published within 10 minutes`);
  }
}

/** The memory section of docs/benchmarks.md, with `label` naming the engine. */
export async function memoryBenchmark(env: Record<string, string> = {}, label = "SQLite"): Promise<string> {
  const { dataDir, origin, serverEnv } = benchServer("herald-bench-memory", {
    HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
    ...env,
  });
  serverEnv.HERALD_BASE_URL = origin;
  let destinations: BenchDestinations | null = null;
  let server: Subprocess | null = null;
  try {
    const account = bootstrapAccount(serverEnv, `memory-${Date.now()}@example.com`);
    server = spawn([BUN, "src/main.ts", "serve"], {
      cwd: ROOT,
      env: serverEnv,
      stdio: ["ignore", "ignore", "ignore"],
    });
    await waitForHealth(origin);
    const c = { origin, key: account.api_key, ws: account.workspace_id };
    destinations = await connectMastodonDestinations(origin, c.key, c.ws);
    const started = performance.now();
    await publish(c, destinations, 0, FIRST);
    await Bun.sleep(SETTLE_MS);
    const atFirst = rssMiB(server.pid);
    await publish(c, destinations, FIRST, POSTS);
    const seconds = (performance.now() - started) / 1000;
    await Bun.sleep(SETTLE_MS);
    const atAll = rssMiB(server.pid);
    if (statusCount(destinations) !== POSTS)
      throw new Error(`the fakes hold ${statusCount(destinations)} statuses`);
    const ratio = atAll / atFirst;
    const n = (count: number) => count.toLocaleString("en-US");
    const verdict = recordTarget({
      measure: `RSS after publishing ${n(POSTS)} posts ÷ after ${n(FIRST)}`,
      engine: label,
      figure: `${ratio.toFixed(2)} × (${atAll.toFixed(1)} ÷ ${atFirst.toFixed(1)} MiB)`,
      target: `≤ ${RATIO_TARGET} ×`,
      met: ratio <= RATIO_TARGET,
    });
    return [
      `## Memory with work done (${label})`,
      "",
      `\`herald serve\` from source in its own process (access log off) publishes to ${destinations.ids.length} ` +
        `instant Mastodon fakes (one destination each) in the bench process: posts created through the API in batches of ${BATCH}, due at once, ` +
        `${n(WAVE)} at a time (each wave published before the next is created). VmRSS is read after ` +
        `${SETTLE_MS / 1000} s of idling once ${n(FIRST)} and once ${n(POSTS)} posts are published ` +
        `(${seconds.toFixed(0)} s in all). One run: the figure is a ratio of two readings of the same process.`,
      "",
      "| Figure | Measured | Target | Result |",
      "|---|---|---|---|",
      `| RSS after ${n(FIRST)} posts published | ${atFirst.toFixed(1)} MiB | — | — |`,
      `| RSS after ${n(POSTS)} posts published | ${atAll.toFixed(1)} MiB | — | — |`,
      `| Ratio | ${ratio.toFixed(2)} × | ≤ ${RATIO_TARGET} × | ${verdict} |`,
    ].join("\n");
  } finally {
    server?.kill("SIGTERM");
    await server?.exited;
    if (destinations) await stopFakes(destinations);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { env, label } = engineFromEnvironment();
  console.log(await memoryBenchmark(env, label));
}
