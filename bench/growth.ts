// Growth benchmark: Create Post and GET one post on an empty database, then the same with a million
// posts (receipts, outbox events and audit records in proportion: bench/growth-seed.ts), and a page of
// 20 posts for each filter of the listing at that size. `herald serve` runs in its own process; wrk
// drives the throughput cases, the latency of a page is timed one request at a time (p99 over many).
// BENCH_GROWTH_POSTS changes the million (a quick look: 100000).
import { spawn, spawnSync, type Subprocess } from "bun";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { seedPosts, type Seeded } from "./growth-seed.ts";
import { formatSummary, ROUNDS, summarize, type Summary } from "./method.ts";
import { recordTarget } from "./targets.ts";
import { benchServer, bootstrapAccount, waitForHealth, wrk } from "./reads.ts";

const ROOT = join(import.meta.dir, "..");
const BUN = join(ROOT, "node_modules", ".bin", "bun");
const POSTS = Number(process.env.BENCH_GROWTH_POSTS ?? 1_000_000);
const DURATION_S = Number(process.env.BENCH_WRK_SECONDS ?? 10);
const WARM_UP_S = 5;
/** Timed requests per listing filter (after a tenth as many thrown away); p99 is the 2nd slowest. */
const PAGE_REQUESTS = 200;
/** The issue's targets: at a million posts, ≥ 0.8 × the empty database's speed; a page in ≤ 20 ms p99. */
const SPEED_KEPT = 0.8;
const PAGE_P99_MS = 20;

interface Throughput {
  rps: Summary;
  p99Ms: number;
  errors: number;
}

/** Create Post (drafts) and GET one post with wrk: ROUNDS interleaved runs after a warm-up. */
function throughput(origin: string, key: string, posts: string, onePost: string): [Throughput, Throughput] {
  const cases = [
    { url: origin + posts, script: "bench/wrk/create-draft.lua" },
    { url: origin + onePost, script: undefined },
  ];
  for (const c of cases) wrk(c.url, key, WARM_UP_S, c.script);
  const runs = cases.map(() => ({ rps: [] as number[], p99: [] as number[], errors: 0 }));
  for (let round = 0; round < ROUNDS; round++)
    cases.forEach((c, i) => {
      const run = wrk(c.url, key, DURATION_S, c.script);
      runs[i]!.rps.push(run.rps);
      runs[i]!.p99.push(run.p99Ms);
      runs[i]!.errors += run.errors + run.timeouts;
    });
  const [create, read] = runs.map((r) => ({
    rps: summarize(r.rps),
    p99Ms: summarize(r.p99).median,
    errors: r.errors,
  }));
  return [create!, read!];
}

/** p50 and p99 (ms) of GET `path`, one request at a time; throws on anything but 200. */
async function pageLatency(url: string, key: string): Promise<{ p50: number; p99: number; rows: number }> {
  const headers = { authorization: `Bearer ${key}` };
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < PAGE_REQUESTS + PAGE_REQUESTS / 10; i++) {
    const started = performance.now();
    const response = await fetch(url, { headers });
    const body = (await response.json()) as { data?: unknown[] };
    if (response.status !== 200)
      throw new Error(`${url} answered ${response.status}: ${JSON.stringify(body)}`);
    if (i >= PAGE_REQUESTS / 10) times.push(performance.now() - started);
    rows = body.data?.length ?? 0;
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { p50: at(0.5), p99: at(0.99), rows };
}

/** The listing's filters, each as a query string, with what it selects among the seeded posts. */
function listingCases(seeded: Seeded, now: number): [string, string][] {
  const iso = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
  return [
    ["no filter (view=all)", ""],
    ["view=drafts (3 %)", "view=drafts"],
    ["view=scheduled (3 %, five states)", "view=scheduled"],
    ["view=published (90 %)", "view=published"],
    ["view=attention (2 %, three states)", "view=attention"],
    ["view=failed (same states)", "view=failed"],
    ["state=needs-attention (0.5 %)", "state=needs-attention"],
    ["channel, common (12.5 %)", "channel=mastodon"],
    ["channel, rare (0.1 %)", `channel=${seeded.rareChannel}`],
    ["destination_id, common (12.5 %)", "destination_id=dest_bench_0"],
    ["destination_id, rare (0.1 %)", `destination_id=${seeded.rareDestinationId}`],
    ["group (3 posts)", `group=${seeded.group}`],
    ["created_after, newest 1 %", `created_after=${iso(seeded.recentCreatedAt)}`],
    ["created_after, newest half", `created_after=${iso(seeded.middleCreatedAt)}`],
    ["created_after now (no post)", `created_after=${iso(now)}`],
    ["scheduled_before, the first scheduled hour", `scheduled_before=${iso(seeded.firstScheduledAt + 1)}`],
    ["scheduled_before, every scheduled post", `scheduled_before=${iso(now + 2000 * 3600000)}`],
    [
      "view=published + channel + created_after",
      `view=published&channel=bluesky&created_after=${iso(seeded.middleCreatedAt)}`,
    ],
  ];
}

/** The growth section of docs/benchmarks.md; `env` selects the storage engine, `label` names it. */
export async function growthBenchmark(env: Record<string, string> = {}, label = "SQLite"): Promise<string> {
  if (spawnSync(["which", "wrk"]).exitCode !== 0)
    return `## Growth (${label})\n\nSkipped: \`wrk\` is not installed.`;
  const { dataDir, origin, serverEnv } = benchServer("herald-growth", env);
  let server: Subprocess | null = null;
  const serve = async () => {
    server = spawn([BUN, "src/main.ts", "serve"], {
      cwd: ROOT,
      env: serverEnv,
      stdio: ["ignore", "ignore", "ignore"],
    });
    await waitForHealth(origin);
  };
  const stop = async () => {
    server?.kill();
    await server?.exited;
    server = null;
  };
  try {
    const account = bootstrapAccount(serverEnv, "g@example.com");
    await serve();
    const posts = `/v1/workspaces/${account.workspace_id}/posts`;
    const headers = { authorization: `Bearer ${account.api_key}`, "content-type": "application/json" };
    const body = { group: "growth-read", when: "draft", posts: [{ channel: "mastodon", body: ["read me"] }] };
    const created = await fetch(origin + posts, { method: "POST", headers, body: JSON.stringify(body) });
    const onePost = `${posts}/${((await created.json()) as { posts: { id: string }[] }).posts[0]!.id}`;

    const [emptyCreate, emptyRead] = throughput(origin, account.api_key, posts, onePost);
    await stop();
    const seedStarted = performance.now();
    const now = Date.now();
    const seeded = await seedPosts(
      env.HERALD_DATABASE_URL
        ? { postgresUrl: env.HERALD_DATABASE_URL }
        : { sqlitePath: join(dataDir, "herald.db") },
      account.workspace_id,
      POSTS,
      now,
    );
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    await serve();
    const [fullCreate, fullRead] = throughput(origin, account.api_key, posts, onePost);
    const pages: string[] = [];
    let worst = 0;
    let slowest = "";
    // Created after everything: no post at all, the narrowest a time filter gets.
    for (const [name, query] of listingCases(seeded, Date.now())) {
      const url = `${origin}${posts}?limit=20${query ? `&${query}` : ""}`;
      const latency = await pageLatency(url, account.api_key);
      if (latency.p99 >= worst) [worst, slowest] = [latency.p99, name];
      pages.push(
        [
          `| ${name} | ${latency.rows}`,
          `${latency.p50.toFixed(1)} ms`,
          `${latency.p99.toFixed(1)} ms`,
          `${latency.p99 <= PAGE_P99_MS ? "met" : "missed"} |`,
        ].join(" | "),
      );
    }
    const speed = (name: string, empty: Throughput, full: Throughput) => {
      const ratio = full.rps.median / empty.rps.median;
      const met = recordTarget({
        measure: `${name} at ${POSTS.toLocaleString("en-US")} posts ÷ on an empty database`,
        engine: label,
        figure: `${ratio.toFixed(2)} ×`,
        target: `≥ ${SPEED_KEPT} ×`,
        met: ratio >= SPEED_KEPT,
      });
      return [
        `| ${name}`,
        `${formatSummary(empty.rps)} req/s`,
        `${formatSummary(full.rps)} req/s`,
        `${ratio.toFixed(2)} ×`,
        `${full.p99Ms.toFixed(1)} ms`,
        `${empty.errors + full.errors}`,
        `≥ ${SPEED_KEPT} ×`,
        `${met} |`,
      ].join(" | ");
    };
    recordTarget({
      measure: `A page of 20 posts at ${POSTS.toLocaleString("en-US")} posts, slowest filter, p99`,
      engine: label,
      figure: `${worst.toFixed(1)} ms (${slowest})`,
      target: `≤ ${PAGE_P99_MS} ms`,
      met: worst <= PAGE_P99_MS,
    });
    const n = POSTS.toLocaleString("en-US");
    return [
      `## Growth (${label})`,
      "",
      `${n} posts of one workspace seeded in ${seedSeconds.toFixed(0)} s (bench/growth-seed.ts: 90 % published ` +
        "with a receipt each, drafts, scheduled, failed and cancelled ones, nine destinations of which one is " +
        "rare; the outbox events and audit records retention keeps, 30 days and a year of them; " +
        `${label === "SQLite" ? "no ANALYZE, as Herald never runs it" : "ANALYZE after the seed, as autovacuum would"}). ` +
        `Throughput with wrk -t2 -c64 as in the HTTP section (${ROUNDS} rounds of ${DURATION_S} s, median ` +
        "(lowest–highest)), first on the empty database, then at the million; p99 is at the million.",
      "",
      "| Request | Empty database | At the million | Ratio | p99 | Errors | Target | |",
      "|---|---|---|---|---|---|---|---|",
      speed("Create Post (a draft)", emptyCreate, fullCreate),
      speed("GET one post", emptyRead, fullRead),
      "",
      `A page of 20 posts (\`GET …/posts?limit=20&<filter>\`) at the million, one request at a time, ` +
        `${PAGE_REQUESTS} timed after ${PAGE_REQUESTS / 10} thrown away. Target: ≤ ${PAGE_P99_MS} ms p99 for ` +
        `each filter (worst here ${worst.toFixed(1)} ms).`,
      "",
      "| Filter (share of the posts) | Rows | p50 | p99 | ≤ 20 ms |",
      "|---|---|---|---|---|",
      ...pages,
    ].join("\n");
  } finally {
    await stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(await growthBenchmark());
