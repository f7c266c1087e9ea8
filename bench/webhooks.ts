// Webhook benchmark: deliveries per second from a backlog of outbox events, and event-to-delivery
// latency at a steady event rate, to an instant local receiver. Run through `npm run bench`, or
// alone: `bun bench/webhooks.ts` (SQLite), with HERALD_DATABASE_URL set for PostgreSQL.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { loadConfig } from "../src/config.ts";
import { countAll } from "../src/db/dialect.ts";
import { newId } from "../src/db/ids.ts";
import { tablesOf } from "../src/db/tables.ts";
import { inTransaction } from "../src/db/transaction.ts";
import { createLogger } from "../src/lib/logger.ts";
import { bootstrapAccount } from "../src/modules/account/bootstrap.ts";
import { armWebhookWake, wakeWebhooks } from "../src/modules/webhooks/wake.ts";
import { openHerald, startServer, type RunningServer } from "../src/server.ts";
import { formatSummary, repeatRuns, ROUNDS, summarize, engineFromEnvironment } from "./method.ts";
import { recordTarget } from "./targets.ts";

const BACKLOG = 5_000;
const BACKLOG_TARGET_PER_S = 2_000;
const RATE = 50;
const STEADY_SECONDS = 20;
const P99_TARGET_MS = 1_000;

interface World {
  server: RunningServer;
  receiver: ReturnType<typeof Bun.serve>;
  /** Arrival time (ms) of each event id, first copy only. */
  arrivals: Map<string, number>;
  ws: string;
  endpointId: string;
  dataDir: string;
  disarm: () => void;
}

let worlds = 0;

/**
 * A server with its jobs on their schedule and waking armed (as a server that starts its jobs has
 * it), one workspace with one endpoint, and a receiver in the same process answering 204 at once.
 * On PostgreSQL every world shares the given database, each with its own account and workspace.
 */
async function startWorld(env: Record<string, string>): Promise<World> {
  const dataDir = mkdtempSync(join(tmpdir(), "herald-bench-webhooks-"));
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
  const arrivals = new Map<string, number>();
  const receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request) => {
      await request.text();
      const id = request.headers.get("service-event-id")!;
      if (!arrivals.has(id)) arrivals.set(id, Date.now());
      return new Response(null, { status: 204 });
    },
  });
  const account = await bootstrapAccount(herald, {
    email: `bench-${process.pid}-${++worlds}@example.com`,
    workspaceName: "Bench",
  });
  const created = await fetch(`${server.url}/v1/workspaces/${account.workspace_id}/webhook-endpoints`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${account.api_key}`,
      "content-type": "application/json",
      "idempotency-key": "bench-endpoint",
    },
    body: JSON.stringify({
      name: "Bench",
      url: `http://127.0.0.1:${receiver.port}/hooks`,
      event_types: ["post.published"],
    }),
  });
  if (created.status !== 201)
    throw new Error(`endpoint not created: ${created.status} ${await created.text()}`);
  const endpointId = ((await created.json()) as { id: string }).id;
  server.scheduler.start();
  const disarm = armWebhookWake(herald.db, () => server.scheduler.runNow("webhook-deliveries"));
  return { server, receiver, arrivals, ws: account.workspace_id, endpointId, dataDir, disarm };
}

async function stopWorld(w: World): Promise<void> {
  w.disarm();
  await w.server.stop();
  await w.receiver.stop(true);
  rmSync(w.dataDir, { recursive: true, force: true });
}

/**
 * Commits `n` post.published events into the outbox in one transaction, as publications would, and
 * wakes the sender as the committing code does.
 */
async function commitEvents(w: World, n: number): Promise<void> {
  const h = w.server.herald;
  const rows = Array.from({ length: n }, (_, i) => {
    const now = Date.now();
    return {
      id: newId("evt"),
      workspaceId: w.ws,
      type: "post.published",
      postId: null,
      destinationId: null,
      createdAt: now,
      payload: {
        id: newId("send"),
        object: "post",
        group: "bench",
        channel: "mastodon",
        destination_id: "dest_bench",
        state: "published",
        scheduled_at: null,
        published_at: new Date(now).toISOString(),
        url: "https://mastodon.example/@bench/1",
        error: null,
        content: { headline: "", body: [`bench ${i}`] },
      },
      dispatchedAt: null,
    };
  });
  await inTransaction(h.db, async (tx) => {
    const { eventsOutbox } = tablesOf(tx);
    for (let i = 0; i < rows.length; i += 500) await tx.insert(eventsOutbox).values(rows.slice(i, i + 500));
  });
  wakeWebhooks(h.db);
}

async function succeeded(w: World): Promise<number> {
  const { webhookDeliveries } = tablesOf(w.server.herald.db);
  const [row] = await w.server.herald.db
    .select({ n: countAll() })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.endpointId, w.endpointId), eq(webhookDeliveries.status, "succeeded")));
  return row!.n;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One backlog run: wall seconds from the events' commit until every delivery is stored as succeeded. */
interface BacklogRun {
  seconds: number;
  cpuSeconds: number;
}

/** `total` events committed at once: time until all their deliveries succeeded, and this process's CPU. */
export async function backlog(env: Record<string, string>, total: number): Promise<BacklogRun> {
  const w = await startWorld(env);
  try {
    await commitEvents(w, total);
    const started = performance.now();
    const cpu = process.cpuUsage();
    // The receiver's count first (no query), then the stored statuses.
    while (w.arrivals.size < total || (await succeeded(w)) < total) {
      if (performance.now() - started > 600_000) throw new Error("backlog did not drain in 10 minutes");
      await Bun.sleep(10);
    }
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    if (w.arrivals.size !== total)
      throw new Error(`receiver holds ${w.arrivals.size} events, expected ${total}`);
    return { seconds, cpuSeconds: (used.user + used.system) / 1e6 };
  } finally {
    await stopWorld(w);
  }
}

/** Event-to-delivery latency of one steady run, ms. */
interface SteadyRun {
  p50: number;
  p99: number;
  max: number;
}

/**
 * `rate` events a second for `seconds`, one transaction each: time from each event's creation to its
 * arrival.
 */
export async function steady(env: Record<string, string>, rate: number, seconds: number): Promise<SteadyRun> {
  const w = await startWorld(env);
  try {
    const total = rate * seconds;
    const start = performance.now();
    for (let i = 0; i < total; i++) {
      const wait = start + (i * 1000) / rate - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      await commitEvents(w, 1);
    }
    const deadline = Date.now() + 60_000;
    while (w.arrivals.size < total && Date.now() < deadline) await Bun.sleep(50);
    if (w.arrivals.size !== total) throw new Error(`${w.arrivals.size} of ${total} steady events arrived`);
    const { eventsOutbox } = tablesOf(w.server.herald.db);
    const rows = await w.server.herald.db
      .select({ id: eventsOutbox.id, createdAt: eventsOutbox.createdAt })
      .from(eventsOutbox)
      .where(eq(eventsOutbox.workspaceId, w.ws));
    const created = new Map(rows.map((r) => [r.id, r.createdAt]));
    const latencies = [...w.arrivals].map(([id, at]) => at - created.get(id)!).sort((a, b) => a - b);
    return {
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies[latencies.length - 1]!,
    };
  } finally {
    await stopWorld(w);
  }
}

/** The webhook benchmark's section of docs/benchmarks.md, with `label` naming the database engine. */
export async function webhooksBenchmark(env: Record<string, string> = {}, label = "SQLite"): Promise<string> {
  const { summary: seconds, runs: measured } = await repeatRuns(
    () => backlog(env, BACKLOG),
    (r) => r.seconds,
  );
  const perSecond = summarize(measured.map((r) => BACKLOG / r.seconds));
  const cpuUsPerDelivery = summarize(measured.map((r) => (1e6 * r.cpuSeconds) / BACKLOG));
  const { summary: p99, runs: latencies } = await repeatRuns(
    () => steady(env, RATE, STEADY_SECONDS),
    (r) => r.p99,
  );
  const p50 = summarize(latencies.map((r) => r.p50));
  const max = summarize(latencies.map((r) => r.max));
  const backlogMet = recordTarget({
    measure: "Webhook deliveries from a backlog",
    engine: label,
    figure: `${formatSummary(perSecond)}/s`,
    target: `≥ ${BACKLOG_TARGET_PER_S.toLocaleString("en-US")}/s`,
    met: perSecond.median >= BACKLOG_TARGET_PER_S,
  });
  const latencyMet = recordTarget({
    measure: "Event-to-delivery latency, p99",
    engine: label,
    figure: `${formatSummary(p99)} ms`,
    target: `≤ ${P99_TARGET_MS.toLocaleString("en-US")} ms`,
    met: p99.median <= P99_TARGET_MS,
  });
  return [
    `## Webhooks (${label})`,
    "",
    `In-process server on ${label === "SQLite" ? "a temporary SQLite file" : label}, one endpoint, and a ` +
      "receiver in the same process answering 204 at once; the jobs on their one-second schedule and " +
      "waking armed, as a server runs them; every delivery signed (HMAC-SHA256) with its URL checked " +
      "(the SSRF guard) before it is sent, and its outcome stored. " +
      `Each scenario runs once to warm up, then ${ROUNDS} times, each on a new server and workspace; ` +
      "figures are the median with the lowest and highest run in brackets. The backlog is " +
      `${BACKLOG.toLocaleString("en-US")} \`post.published\` events committed in one transaction, timed ` +
      "from the commit until every delivery is stored as succeeded; CPU is this process's (server, " +
      "sender and receiver together) over that span. Latency runs from each event's creation to its " +
      `arrival at the receiver, for ${(RATE * STEADY_SECONDS).toLocaleString("en-US")} events committed ` +
      `one per transaction, ${RATE} a second for ${STEADY_SECONDS} s. In both the committing code wakes ` +
      "the sender; an event committed by another process waits for the next tick (up to a second more).",
    "",
    "| Measure | Result | Target | |",
    "|---|---|---|---|",
    `| Deliveries from a ${BACKLOG.toLocaleString("en-US")}-event backlog | ${formatSummary(perSecond)}/s ` +
      `(all in ${formatSummary(seconds, 2)} s) | ≥ ${BACKLOG_TARGET_PER_S.toLocaleString("en-US")}/s | ` +
      `${backlogMet} |`,
    `| CPU per delivery (backlog) | ${formatSummary(cpuUsPerDelivery)} µs | — | |`,
    `| Event-to-delivery latency at ${RATE} events/s, p99 | ${formatSummary(p99)} ms | ≤ ` +
      `${P99_TARGET_MS.toLocaleString("en-US")} ms | ${latencyMet} |`,
    `| Event-to-delivery latency at ${RATE} events/s, p50 / max | ${formatSummary(p50)} ms / ` +
      `${formatSummary(max)} ms | — | |`,
  ].join("\n");
}

if (import.meta.main) {
  const { env, label } = engineFromEnvironment();
  console.log(await webhooksBenchmark(env, label));
}
