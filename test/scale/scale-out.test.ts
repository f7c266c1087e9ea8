// Issue 10, scale-out: three `herald serve` processes on one PostgreSQL database and one S3 stand-in
// publish 300 posts due at the same moment; one process is killed with SIGKILL mid-load. Every post
// reaches the network exactly once (counted at the Mastodon fake), every post.published event
// reaches the webhook receiver (at least once), and the survivors log no crash.
import { afterAll, expect, test } from "bun:test";
import { POSTGRES_URL } from "../helpers/database.ts";
import { posted, waitFor } from "../posts/engine-helpers.ts";
import { startReceiver, type Receiver } from "../webhooks/helpers.ts";
import {
  LEASE_SECONDS,
  scheduleBurst,
  startCluster,
  subscribe,
  throughput,
  waitPublished,
  type Burst,
  type Cluster,
  type ListedPost,
} from "./cluster.ts";

const TOTAL = 300;
const PROCESSES = 3;
/** The node killed mid-load; the others serve the API afterwards. */
const VICTIM = PROCESSES - 1;
/** Network latency of the fake: every node holds several publications at any moment. */
const NETWORK_DELAY_MS = 40;

let cluster: Cluster | null = null;
let receiver: Receiver | null = null;

afterAll(async () => {
  await cluster?.stop();
  await receiver?.stop();
});

if (!POSTGRES_URL)
  console.warn(
    "test/scale skipped: several processes share a database only on PostgreSQL (set HERALD_DATABASE_URL); " +
      "SQLite's several-processes case is test/posts/two-processes.test.ts",
  );

test.skipIf(!POSTGRES_URL)(
  `${PROCESSES} processes on PostgreSQL publish ${TOTAL} due posts exactly once while one is SIGKILLed`,
  async () => {
    receiver = startReceiver();
    // A destination has one publication in flight at a time: three destinations, and one
    // publication per process, so every process (the victim too) holds work while the load runs.
    cluster = await startCluster({
      processes: PROCESSES,
      networkDelayMs: NETWORK_DELAY_MS,
      destinations: PROCESSES,
      env: { HERALD_PUBLISH_CONCURRENCY: "1" },
    });
    const c = cluster;
    const started = Date.now();
    try {
      await subscribe(c, receiver.url, ["post.published"]);
      const burst = await scheduleBurst(c, TOTAL);
      const killed = await killMidLoad(c);
      const posts = await waitPublished(c, burst, 90_000);
      const events = await waitForEvents(receiver, burst);
      report(c, burst, posts, events, killed, Date.now() - started);

      expectPublishedOnce(c, burst, posts);
      expectEvents(burst, events);
      for (const i of c.alive())
        expect({ node: i, problems: problemsIn(c.log(i)) }).toEqual({ node: i, problems: [] });
    } catch (error) {
      for (const [i, node] of c.nodes.entries())
        console.error(`--- node ${i} (${node.url}), end of its output ---\n${c.log(i).slice(-4000)}`);
      throw error;
    }
  },
  180_000,
);

/** Every status the destinations' networks hold. */
function statusesOf(c: Cluster) {
  return c.mastodons.flatMap((fake) => fake.statuses);
}

/** What the kill left behind: statuses at the network then, and posts the victim was publishing. */
interface Killed {
  statusesAtKill: number;
  victimInFlight: number;
}

/**
 * Kills the victim with SIGKILL once a third of the posts reached the network and while it holds
 * publications (its /health says how many), so its leases must expire and be taken over.
 */
async function killMidLoad(c: Cluster): Promise<Killed> {
  const third = Math.ceil(TOTAL / 3);
  await waitFor(`${third} statuses at the fake`, () => statusesOf(c).length >= third || undefined, 60_000, 5);
  const victimInFlight = await waitFor(
    `node ${VICTIM} publishing`,
    async () => {
      const health = (await (await fetch(`${c.nodes[VICTIM]!.url}/health`)).json()) as {
        engine: { in_flight: number };
      };
      return health.engine.in_flight > 0 ? health.engine.in_flight : undefined;
    },
    10_000,
    5,
  );
  const statusesAtKill = statusesOf(c).length;
  await c.nodes[VICTIM]!.kill("SIGKILL");
  return { statusesAtKill, victimInFlight };
}

/** The post.published events the receiver got: distinct event ids by post id, and deliveries. */
interface Events {
  byPost: Map<string, Set<string>>;
  deliveries: number;
}

function eventsOf(r: Receiver): Events {
  const byPost = new Map<string, Set<string>>();
  let deliveries = 0;
  for (const request of r.received) {
    if (request.body?.type !== "post.published") continue;
    deliveries++;
    const postId: string = request.body.data.object.id;
    if (!byPost.has(postId)) byPost.set(postId, new Set());
    byPost.get(postId)!.add(request.body.id);
  }
  return { byPost, deliveries };
}

/**
 * Waits until every post of the burst has a post.published delivery. A delivery the victim had
 * claimed but not sent is sent again when its claim ends (webhooks' CLAIM_LEASE_MS, 30 s).
 */
async function waitForEvents(r: Receiver, burst: Burst): Promise<Events> {
  return waitFor(
    `post.published for all ${burst.ids.length} posts`,
    () => {
      const events = eventsOf(r);
      return burst.ids.every((id) => events.byPost.has(id)) ? events : undefined;
    },
    90_000,
    100,
  );
}

/** Each post once at the network, with its own text, and published with one successful attempt last. */
function expectPublishedOnce(c: Cluster, burst: Burst, posts: ListedPost[]): void {
  expect(posts).toHaveLength(TOTAL);
  expect(new Set(posts.map((p) => p.id))).toEqual(new Set(burst.ids));
  for (const post of posts) {
    expect({ id: post.id, state: post.state, receipts: post.receipts.length }).toEqual({
      id: post.id,
      state: "published",
      receipts: 1,
    });
    // Earlier attempts, if any, are the victim's, ended by the takeover.
    const earlier = post.attempts.slice(0, -1).map((a) => a.error?.code);
    expect({ id: post.id, last: post.attempts.at(-1)?.status, earlier }).toEqual({
      id: post.id,
      last: "succeeded",
      earlier: earlier.map(() => "publishing_interrupted"),
    });
  }
  // The fake keeps one status per Idempotency-Key (`<post id>.0`): a re-sent create lands on it.
  const statuses = statusesOf(c);
  expect(statuses).toHaveLength(TOTAL);
  expect(new Set(statuses.map((s) => s.text)).size).toBe(TOTAL);
  const postOf = (key: string | null) => key?.replace(/\.0$/, "") ?? "";
  expect(new Set(statuses.map((s) => postOf(s.idempotencyKey)))).toEqual(new Set(burst.ids));
  for (const status of statuses) expect(status.text).toBe(burst.textOf.get(postOf(status.idempotencyKey))!);
  // The victim held leases when killed: a survivor took those posts over (re-queued from the
  // expired lease; a post killed before its first attempt started shows only in the log).
  const retried = posts.filter((p) => p.attempts.length > 1).length;
  const recovered = c.nodes
    .map((_, i) => c.log(i).split("recovered a post from an expired lease").length - 1)
    .reduce((a, b) => a + b, 0);
  expect(retried + recovered).toBeGreaterThan(0);
}

/** One event per post (one publication each); the same event may arrive more than once. */
function expectEvents(burst: Burst, events: Events): void {
  expect([...events.byPost.keys()].sort()).toEqual([...burst.ids].sort());
  const twice = [...events.byPost].filter(([, ids]) => ids.size !== 1);
  expect(twice).toEqual([]);
  expect(events.deliveries).toBeGreaterThanOrEqual(TOTAL);
}

/** Crash reports and stack traces in a node's output (log lines are JSON, so stacks show as "\n at"). */
function problemsIn(log: string): string[] {
  return log
    .split("\n")
    .filter((line) => /crashed|uncaught|unhandled|^\s+at \S|\\n\s+at \S/i.test(line))
    .map((line) => line.slice(0, 300));
}

function report(c: Cluster, burst: Burst, posts: ListedPost[], events: Events, killed: Killed, ms: number) {
  const statuses = statusesOf(c);
  const creates = c.mastodons.reduce((n, fake) => n + posted(fake, "/api/v1/statuses").length, 0);
  const taken = posts.filter((p) => p.attempts.length > 1).length;
  const distinctEvents = [...events.byPost.values()].reduce((n, ids) => n + ids.size, 0);
  const rate = throughput(burst, posts);
  const crashes = c.nodes.map((_, i) => problemsIn(c.log(i)).length).join("/");
  console.log(
    `scale-out: ${posts.filter((p) => p.state === "published").length}/${TOTAL} published by ` +
      `${PROCESSES} processes (node ${VICTIM} SIGKILLed at ${killed.statusesAtKill} statuses, ` +
      `${killed.victimInFlight} in flight; ${taken} posts re-queued from an expired ` +
      `${LEASE_SECONDS} s lease; crash lines by node ${crashes}); ` +
      `fake: ${statuses.length} statuses, ${statuses.length - new Set(statuses.map((s) => s.text)).size} ` +
      `duplicates, ${creates - TOTAL} creates re-sent with the same Idempotency-Key; webhooks: ` +
      `${distinctEvents} post.published events, ${events.deliveries} deliveries ` +
      `(${events.deliveries - distinctEvents} repeated); ${rate.perSecond.toFixed(1)} posts/s ` +
      `(${rate.seconds.toFixed(2)} s from due time to last publication); ${(ms / 1000).toFixed(1)} s in all`,
  );
}
