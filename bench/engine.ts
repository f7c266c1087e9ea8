// Engine benchmark: throughput with 10,000 posts due at once, and lateness at a steady 100 due
// posts a second, against an instant local Mastodon fake. Run through `npm run bench`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { loadConfig } from "../src/config.ts";
import { countAll } from "../src/db/dialect.ts";
import { posts } from "../src/db/schema.ts";
import { createLogger } from "../src/lib/logger.ts";
import { bootstrapAccount } from "../src/modules/account/bootstrap.ts";
import { openHerald, startServer, type RunningServer } from "../src/server.ts";
import { startMastodonFake, type MastodonFake } from "../test/fakes/mastodon.ts";

interface World {
  server: RunningServer;
  fake: MastodonFake;
  key: string;
  ws: string;
  dest: string;
  dataDir: string;
}

async function startWorld(env: Record<string, string> = {}): Promise<World> {
  const dataDir = mkdtempSync(join(tmpdir(), "herald-bench-"));
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
  const fake = await startMastodonFake({ mediaProcessingPolls: 0 });
  const account = await bootstrapAccount(herald, { email: "bench@example.com", workspaceName: "Bench" });
  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${account.api_key}`, "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const started = (await (
    await api("POST", `/v1/workspaces/${account.workspace_id}/destination-connections`, {
      provider: "mastodon",
      instance_origin: fake.origin,
    })
  ).json()) as { id: string; authorization_url: string };
  const authorize = await fetch(started.authorization_url, { redirect: "manual" });
  await fetch(authorize.headers.get("location")!);
  const connection = (await (
    await api("GET", `/v1/workspaces/${account.workspace_id}/destination-connections/${started.id}`)
  ).json()) as { destination_id: string };
  return {
    server,
    fake,
    key: account.api_key,
    ws: account.workspace_id,
    dest: connection.destination_id,
    dataDir,
  };
}

async function stopWorld(w: World): Promise<void> {
  await w.server.stop();
  await w.fake.stop();
  rmSync(w.dataDir, { recursive: true, force: true });
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
      posts: texts.map((t) => ({ destination_id: w.dest, body: [t] })),
    }),
  });
  if (response.status >= 300) throw new Error(`create failed: ${response.status} ${await response.text()}`);
}

// Polls read through the query builder (SQLite's read-only connection): no write lock taken while
// the engine publishes.
async function countPublished(w: World): Promise<number> {
  const [row] = await w.server.herald.db
    .select({ n: countAll() })
    .from(posts)
    .where(eq(posts.state, "published"));
  return row!.n;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** 10,000 posts due at once: time until all are published. */
async function backlog(total: number, concurrency: number) {
  const w = await startWorld({ HERALD_PUBLISH_CONCURRENCY: String(concurrency) });
  try {
    for (let i = 0; i < total / 100; i++)
      await createBatch(
        w,
        "now",
        Array.from({ length: 100 }, (_, k) => `backlog ${i * 100 + k}`),
        `b${i}`,
      );
    const started = performance.now();
    w.server.scheduler.start();
    while ((await countPublished(w)) < total) {
      if (performance.now() - started > 600_000) throw new Error("backlog did not drain in 10 minutes");
      await Bun.sleep(50);
    }
    const seconds = (performance.now() - started) / 1000;
    if (w.fake.statuses.length !== total)
      throw new Error(`fake holds ${w.fake.statuses.length} statuses, expected ${total}`);
    return { total, concurrency, seconds, perSecond: total / seconds };
  } finally {
    await stopWorld(w);
  }
}

/** A steady 100 due posts a second for `seconds`: how late each goes out after its time. */
async function steady(rate: number, seconds: number) {
  const w = await startWorld();
  try {
    const start = Math.ceil((Date.now() + 15_000) / 1000) * 1000;
    for (let s = 0; s < seconds; s++) {
      for (let part = 0; part < rate / 100; part++) {
        const when = new Date(start + s * 1000 + part).toISOString();
        await createBatch(
          w,
          when,
          Array.from({ length: 100 }, (_, k) => `steady ${s}.${part}.${k}`),
          `s${s}p${part}`,
        );
      }
    }
    w.server.scheduler.start();
    const total = rate * seconds;
    const deadline = start + seconds * 1000 + 120_000;
    while ((await countPublished(w)) < total && Date.now() < deadline) await Bun.sleep(100);
    const rows = await w.server.herald.db
      .select({ late: sql<number>`${posts.publishedAt} - ${posts.scheduledAt}`.mapWith(Number) })
      .from(posts)
      .where(eq(posts.state, "published"));
    const late = rows.map((r) => r.late).sort((a, b) => a - b);
    return {
      total,
      published: rows.length,
      p50: percentile(late, 50),
      p95: percentile(late, 95),
      p99: percentile(late, 99),
      max: late[late.length - 1]!,
    };
  } finally {
    await stopWorld(w);
  }
}

/** Runs the engine benchmarks and returns a Markdown section. */
export async function engineBenchmark(): Promise<string> {
  const b8 = await backlog(10_000, 8);
  const b32 = await backlog(10_000, 32);
  const s = await steady(100, 30);
  return [
    "## Publishing engine",
    "",
    "In-process server on a temporary SQLite file; an instant local Mastodon fake (same process) answers every call.",
    "",
    "| Scenario | Result |",
    "|---|---|",
    `| 10,000 posts due at once, concurrency 8 (default) | all published in ${b8.seconds.toFixed(1)} s (${b8.perSecond.toFixed(0)} posts/s) |`,
    `| 10,000 posts due at once, concurrency 32 | all published in ${b32.seconds.toFixed(1)} s (${b32.perSecond.toFixed(0)} posts/s) |`,
    `| steady 100 due posts/s for 30 s (3,000 posts) | ${s.published}/${s.total} published; lateness p50 ${s.p50} ms, p95 ${s.p95} ms, p99 ${s.p99} ms, max ${s.max} ms |`,
    "",
    "Lateness is `published_at - scheduled_at`: the tick runs every second, so up to ~1 s of it is the tick period.",
  ].join("\n");
}
