// Slow-network benchmark: 10,000 posts due at once to networks that answer every request after
// 200 ms, published by one process with its default concurrency, each destination's posts one at a
// time and in due order. Run through `npm run bench`, or alone: `bun bench/slow-network.ts`
// (SQLite), with HERALD_DATABASE_URL set for PostgreSQL.
import { tmpdir } from "node:os";
import { loadConfig } from "../src/config.ts";
import { BENCH_DESTINATIONS } from "./destinations.ts";
import { countPublished, startWorld, stopWorld } from "./engine.ts";
import { formatSummary, repeatRuns, ROUNDS, summarize, engineFromEnvironment } from "./method.ts";
import { recordTarget } from "./targets.ts";

const POSTS = 10_000;
/**
 * More destinations than calls one process has in flight (the default concurrency, 64), so the
 * limit that is measured is the process's and not one call per destination; and a realistic spread
 * (an agency's or a team's accounts), 100 posts queued on each.
 */
const DESTINATIONS = BENCH_DESTINATIONS;
const NETWORK_MS = 200;
const TARGET_S = 60;

/** One run: seconds from due to the last publication, calls in flight, and whether order held. */
interface SlowRun {
  seconds: number;
  maxInFlight: number;
  maxPerDestination: number;
  inOrder: boolean;
}

/**
 * POSTS posts due at once (created with `when: now` while the scheduler is stopped, one request per
 * round with a post for each destination, so each destination's due order is its creation order),
 * every fake answering after NETWORK_MS: timed from starting the scheduler to the last publication.
 */
async function slowBacklog(env: Record<string, string>): Promise<SlowRun> {
  const w = await startWorld(env, "bench-slow");
  const { fakes, ids } = w.destinations;
  try {
    const rounds = POSTS / DESTINATIONS;
    for (let k = 0; k < rounds; k++) {
      const response = await fetch(`${w.server.url}/v1/workspaces/${w.ws}/posts`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${w.key}`,
          "content-type": "application/json",
          "idempotency-key": `slow-${k}`,
        },
        body: JSON.stringify({
          when: "now",
          confirmed: true,
          group: `slow-${k}`,
          posts: ids.map((id, d) => ({ destination_id: id, body: [`slow ${d} ${k}`] })),
        }),
      });
      if (response.status >= 300)
        throw new Error(`create failed: ${response.status} ${await response.text()}`);
    }
    for (const fake of fakes) {
      fake.delayMs = NETWORK_MS;
      fake.maxInFlight = 0;
    }
    let maxInFlight = 0;
    const sampler = setInterval(() => {
      maxInFlight = Math.max(
        maxInFlight,
        fakes.reduce((n, f) => n + f.inFlight, 0),
      );
    }, 50);
    const started = performance.now();
    w.server.scheduler.start();
    const deadline = Date.now() + 600_000;
    const statuses = () => fakes.reduce((n, f) => n + f.statuses.length, 0);
    while (statuses() < POSTS && Date.now() < deadline) await Bun.sleep(20);
    while ((await countPublished(w)) < POSTS && Date.now() < deadline) await Bun.sleep(20);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    if ((await countPublished(w)) < POSTS) throw new Error("the backlog did not drain in 10 minutes");
    if (statuses() !== POSTS) throw new Error(`the fakes hold ${statuses()} statuses, expected ${POSTS}`);
    // Each destination's network received its posts in due (here: creation) order.
    const inOrder = fakes.every((fake, d) =>
      fake.statuses.every((status, k) => status.text === `slow ${d} ${k}`),
    );
    const maxPerDestination = Math.max(...fakes.map((f) => f.maxInFlight));
    return { seconds, maxInFlight, maxPerDestination, inOrder };
  } finally {
    await stopWorld(w);
  }
}

/** The slow-network benchmark's section of docs/benchmarks.md, with `label` naming the database engine. */
export async function slowNetworkBenchmark(
  env: Record<string, string> = {},
  label = "SQLite",
): Promise<string> {
  const { summary: seconds, runs } = await repeatRuns(
    () => slowBacklog(env),
    (r) => r.seconds,
  );
  const perSecond = summarize(runs.map((r) => POSTS / r.seconds));
  const inFlight = summarize(runs.map((r) => r.maxInFlight));
  const perDestination = Math.max(...runs.map((r) => r.maxPerDestination));
  const inOrder = runs.every((r) => r.inOrder);
  const measure = `${POSTS.toLocaleString("en-US")} posts due at once, network answering in ${NETWORK_MS} ms`;
  const verdict = recordTarget({
    measure,
    engine: label,
    figure: `${formatSummary(seconds, 1)} s (${formatSummary(perSecond)} posts/s)`,
    target: `≤ ${TARGET_S} s`,
    met: seconds.median <= TARGET_S && inOrder && perDestination <= 1,
  });
  return [
    `## Slow network (${label})`,
    "",
    `In-process server on ${label === "SQLite" ? "a temporary SQLite file" : label}, default concurrency ` +
      `(${DEFAULT_CONCURRENCY}); ${DESTINATIONS} Mastodon destinations, each a local fake answering every ` +
      `request after ${NETWORK_MS} ms. ${POSTS.toLocaleString("en-US")} posts (${POSTS / DESTINATIONS} per ` +
      "destination) are created with `when: now` while the scheduler is stopped and timed from starting " +
      `it until the last is published. ${DESTINATIONS} destinations: more than one process has calls in ` +
      "flight, as a destination has one publication in flight at a time, so the process's limit is what " +
      `is measured. A warm-up run, then ${ROUNDS} runs; the median with the lowest and highest in brackets.`,
    "",
    "| Measure | Result | Target | |",
    "|---|---|---|---|",
    `| ${measure} | ${formatSummary(seconds, 1)} s (${formatSummary(perSecond)} posts/s) | ≤ ${TARGET_S} s | ${verdict} |`,
    `| Calls in flight across destinations, most sampled | ${formatSummary(inFlight)} | — | |`,
    `| Calls in flight to one destination, most | ${perDestination} | 1 | ${perDestination <= 1 ? "met" : "missed"} |`,
    `| Each destination's posts in due order | ${inOrder ? "yes" : "no"} | yes | ${inOrder ? "met" : "missed"} |`,
  ].join("\n");
}

/** The publishing concurrency the benchmark runs with: the default, as a server runs out of the box. */
const DEFAULT_CONCURRENCY = loadConfig({ HERALD_DATA_DIR: tmpdir() }).engine.concurrency;

if (import.meta.main) {
  const { env, label } = engineFromEnvironment();
  console.log(await slowNetworkBenchmark(env, label));
}
