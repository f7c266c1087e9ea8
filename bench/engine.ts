// Engine benchmark: throughput with 10,000 posts due at once, and lateness at a steady 100 due
// posts a second, against instant local Mastodon fakes (100 destinations: bench/destinations.ts). Run through `npm run bench`, or alone:
// `bun bench/engine.ts` (SQLite), with HERALD_DATABASE_URL set for PostgreSQL.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq, sql } from "drizzle-orm";
import { loadConfig } from "../src/config.ts";
import { countAll } from "../src/db/dialect.ts";
import { tablesOf } from "../src/db/tables.ts";
import { createLogger } from "../src/lib/logger.ts";
import { formatSummary, repeatRuns, ROUNDS, summarize, engineFromEnvironment } from "./method.ts";
import { recordTarget } from "./targets.ts";
import { bootstrapAccount } from "../src/modules/account/bootstrap.ts";
import { openHerald, startServer, type RunningServer } from "../src/server.ts";
import {
  connectMastodonDestinations,
  statusCount,
  stopFakes,
  type BenchDestinations,
} from "./destinations.ts";

export interface World {
  server: RunningServer;
  key: string;
  ws: string;
  destinations: BenchDestinations;
  dataDir: string;
}

let worlds = 0;

/** An in-process server (jobs stopped) with an account and BENCH_DESTINATIONS Mastodon destinations. */
export async function startWorld(env: Record<string, string> = {}, tag = "bench"): Promise<World> {
  const dataDir = mkdtempSync(join(tmpdir(), `herald-${tag}-`));
  const config = loadConfig({
    HERALD_DATA_DIR: dataDir,
    HERALD_PORT: "0",
    HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
    HERALD_RATE_LIMIT_PER_MINUTE: "1000000",
    ...env,
  });
  const herald = await openHerald(config, { logger: createLogger({ silent: true }) });
  const server = startServer(herald, { startJobs: false });
  herald.config.baseUrl = server.url;
  // One database may serve several runs (PostgreSQL): each run is its own account and workspace.
  const email = `${tag}-${Date.now()}-${++worlds}@example.com`;
  const account = await bootstrapAccount(herald, { email, workspaceName: "Bench" });
  const destinations = await connectMastodonDestinations(server.url, account.api_key, account.workspace_id);
  return { server, key: account.api_key, ws: account.workspace_id, destinations, dataDir };
}

export async function stopWorld(w: World): Promise<void> {
  await w.server.stop();
  await stopFakes(w.destinations);
  rmSync(w.dataDir, { recursive: true, force: true });
}

let spread = 0;

/** The destinations in turn, across batches (a batch smaller than their number still spreads). */
function nextDestination(w: World): string {
  const { ids } = w.destinations;
  return ids[spread++ % ids.length]!;
}

async function createBatch(w: World, when: string, texts: string[], group: string): Promise<void> {
  const response = await fetch(`${w.server.url}/v1/workspaces/${w.ws}/posts`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${w.key}`,
      "content-type": "application/json",
      "idempotency-key": `${group}-${when}`,
    },
    body: JSON.stringify({
      when,
      confirmed: true,
      group,
      // Spread over the destinations in turn: each destination's share keeps the creation order.
      posts: texts.map((t) => ({ destination_id: nextDestination(w), body: [t] })),
    }),
  });
  if (response.status >= 300) throw new Error(`create failed: ${response.status} ${await response.text()}`);
}

/**
 * Waits until `total` posts of the run's workspace are published: first for the fake to hold as many
 * statuses (in memory, free), then for their outcomes in the database (a few polls, through the
 * query builder: SQLite's read-only connection takes no write lock while the engine publishes).
 */
async function waitPublished(w: World, total: number, deadline: number): Promise<void> {
  while (statusCount(w.destinations) < total && Date.now() < deadline) await Bun.sleep(20);
  while ((await countPublished(w)) < total && Date.now() < deadline) await Bun.sleep(20);
}

export async function countPublished(w: World): Promise<number> {
  const { posts } = tablesOf(w.server.herald.db);
  const [row] = await w.server.herald.db
    .select({ n: countAll() })
    .from(posts)
    .where(and(eq(posts.workspaceId, w.ws), eq(posts.state, "published")));
  return row!.n;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One run of the backlog: wall seconds until all were published, and this process's CPU seconds. */
interface BacklogRun {
  seconds: number;
  cpuSeconds: number;
}

/**
 * `total` posts due at once (created with `when: now` while the scheduler is stopped): time from
 * starting the scheduler until all are published. The process's CPU time over the same span is
 * kept too: on a shared machine it varies less than the wall time. `beforeStart` runs once the posts
 * are created (a statement count resets its counters there).
 */
export async function backlog(
  env: Record<string, string>,
  total: number,
  beforeStart: () => Promise<void> = async () => {},
): Promise<BacklogRun> {
  const w = await startWorld(env);
  try {
    for (let i = 0; i < total / 100; i++)
      await createBatch(
        w,
        "now",
        Array.from({ length: 100 }, (_, k) => `backlog ${i * 100 + k}`),
        `b${i}`,
      );
    await beforeStart();
    const started = performance.now();
    const cpu = process.cpuUsage();
    w.server.scheduler.start();
    await waitPublished(w, total, Date.now() + 600_000);
    if ((await countPublished(w)) < total) throw new Error("the backlog did not drain in 10 minutes");
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    if (statusCount(w.destinations) !== total)
      throw new Error(`the fakes hold ${statusCount(w.destinations)} statuses, expected ${total}`);
    return { seconds, cpuSeconds: (used.user + used.system) / 1e6 };
  } finally {
    await stopWorld(w);
  }
}

/** Lateness of one steady run, ms. */
interface SteadyRun {
  published: number;
  p50: number;
  p99: number;
  max: number;
}

/**
 * A steady `rate` due posts a second for `seconds`, due times spread evenly (a group of posts every
 * tenth of a second, between the scheduler's one-second ticks): how late each goes out after its time.
 */
export async function steady(env: Record<string, string>, rate: number, seconds: number): Promise<SteadyRun> {
  const w = await startWorld(env);
  try {
    const start = Math.ceil((Date.now() + 15_000) / 1000) * 1000;
    const perGroup = rate / 10;
    for (let group = 0; group < seconds * 10; group++) {
      const when = new Date(start + group * 100).toISOString();
      const texts = Array.from({ length: perGroup }, (_, k) => `steady ${group}.${k}`);
      await createBatch(w, when, texts, `s${group}`);
    }
    if (Date.now() >= start) throw new Error("creating the steady posts took longer than their lead time");
    w.server.scheduler.start();
    const total = rate * seconds;
    const deadline = start + seconds * 1000 + 120_000;
    await waitPublished(w, total, deadline);
    const { posts } = tablesOf(w.server.herald.db);
    const rows = await w.server.herald.db
      .select({ late: sql<number>`${posts.publishedAt} - ${posts.scheduledAt}`.mapWith(Number) })
      .from(posts)
      .where(and(eq(posts.workspaceId, w.ws), eq(posts.state, "published")));
    const late = rows.map((r) => r.late).sort((a, b) => a - b);
    if (late.length !== total) throw new Error(`${late.length} of ${total} steady posts were published`);
    return {
      published: rows.length,
      p50: percentile(late, 50),
      p99: percentile(late, 99),
      max: late[late.length - 1]!,
    };
  } finally {
    await stopWorld(w);
  }
}

const BACKLOG = 10_000;
const BACKLOG_TARGET_S = 10;
const RATE = 100;
const STEADY_SECONDS = 30;
const P99_TARGET_MS = 1000;

/** The engine benchmark's section of docs/benchmarks.md, with `label` naming the database engine. */
export async function engineBenchmark(env: Record<string, string> = {}, label = "SQLite"): Promise<string> {
  const { summary: seconds, runs: measured } = await repeatRuns(
    () => backlog(env, BACKLOG),
    (r) => r.seconds,
  );
  const cpuMsPerPost = summarize(measured.map((r) => (1000 * r.cpuSeconds) / BACKLOG));
  const { summary: p99, runs: lateness } = await repeatRuns(
    () => steady(env, RATE, STEADY_SECONDS),
    (r) => r.p99,
  );
  const p50 = summarize(lateness.map((r) => r.p50));
  const max = summarize(lateness.map((r) => r.max));
  const perSecond = summarize(measured.map((r) => BACKLOG / r.seconds));
  const backlogVerdict = recordTarget({
    measure: `${BACKLOG.toLocaleString("en-US")} posts due at once, instant network`,
    engine: label,
    figure: `${formatSummary(seconds, 1)} s`,
    target: `≤ ${BACKLOG_TARGET_S} s`,
    met: seconds.median <= BACKLOG_TARGET_S,
  });
  const latenessVerdict = recordTarget({
    measure: `Lateness at ${RATE} due posts/s, p99`,
    engine: label,
    figure: `${formatSummary(p99)} ms`,
    target: `≤ ${P99_TARGET_MS / 1000} s`,
    met: p99.median <= P99_TARGET_MS,
  });
  return [
    `## Publishing engine (${label})`,
    "",
    `In-process server on ${label === "SQLite" ? "a temporary SQLite file" : label}, default concurrency ` +
      `(${DEFAULT_CONCURRENCY}); an instant local Mastodon fake in the same process answers every call. ` +
      `Each scenario runs once to warm up, then ${ROUNDS} times on fresh data (a new server and ` +
      "workspace each time); figures are the median with the lowest and highest run in brackets. " +
      `The backlog is ${BACKLOG.toLocaleString("en-US")} posts created with \`when: now\` while the ` +
      "scheduler is stopped, timed from starting it until the last is published; CPU is this " +
      "process's (server, engine and fake together) over that span. Lateness is " +
      `\`published_at - scheduled_at\` of ${(RATE * STEADY_SECONDS).toLocaleString("en-US")} posts ` +
      `due ${RATE} a second for ${STEADY_SECONDS} s, ${RATE / 10} every tenth of a second (most fall between ` +
      "two runs of the one-second tick).",
    "",
    "| Measure | Result | Target | |",
    "|---|---|---|---|",
    `| ${BACKLOG.toLocaleString("en-US")} posts due at once, all published | ${formatSummary(seconds, 1)} s ` +
      `(${formatSummary(perSecond)} posts/s) | ≤ ${BACKLOG_TARGET_S} s | ${backlogVerdict} |`,
    `| CPU per published post (backlog) | ${formatSummary(cpuMsPerPost, 2)} ms | — | |`,
    `| Lateness at ${RATE} due posts/s, p99 | ${formatSummary(p99)} ms | ≤ ${P99_TARGET_MS} ms | ${latenessVerdict} |`,
    `| Lateness at ${RATE} due posts/s, p50 / max | ${formatSummary(p50)} ms / ${formatSummary(max)} ms | — | |`,
  ].join("\n");
}

/** The publishing concurrency the benchmark runs with: the default, as a server runs out of the box. */
const DEFAULT_CONCURRENCY = loadConfig({ HERALD_DATA_DIR: tmpdir() }).engine.concurrency;

if (import.meta.main) {
  const { env, label } = engineFromEnvironment();
  console.log(await engineBenchmark(env, label));
}
