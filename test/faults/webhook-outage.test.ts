// Fault injection: the webhook receiver is down (connections refused) for a simulated day while
// posts are published at seeded times and the server is restarted twice on the same data (the
// injected ManualClock jumps from one due moment to the next). When the receiver comes back, every
// event arrives within one retry period; each post's event has one id (copies only under it); every
// attempt followed the documented schedule (30 s doubling to 4 h, each ±20 %) across the restarts;
// and `created_at`, which docs/webhooks.md tells receivers to order by, is when the post was published.
import { afterAll, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { engineOf } from "../../src/db/engine.ts";
import type { Herald } from "../../src/herald.ts";
import { createMemoryLogger } from "../../src/lib/logger.ts";
import { openHerald, startServer, type RunningServer } from "../../src/server.ts";
import { startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { mustCreateEndpoint, runWebhooks, verifies } from "../webhooks/helpers.ts";
import { faultSeed, seeded } from "./support.ts";

const HOUR = 3600_000;
const DAY = 24 * HOUR;

/** A receiver that can be down (its port refuses connections) and come back on the same port. */
function outageReceiver(now: () => number) {
  const received: { at: number; raw: string; headers: Record<string, string>; body: any }[] = [];
  const handler = async (request: Request) => {
    const raw = await request.text();
    received.push({ at: now(), raw, headers: Object.fromEntries(request.headers), body: JSON.parse(raw) });
    return new Response(null, { status: 204 });
  };
  let server: ReturnType<typeof Bun.serve> | null = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: handler,
  });
  const port = server.port!;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    up() {
      server ??= Bun.serve({ hostname: "127.0.0.1", port, fetch: handler });
    },
    async down() {
      await server?.stop(true);
      server = null;
    },
  };
}

/** The nominal wait before retry `k` (1-based), as docs/webhooks.md tabulates it. */
function nominalWait(k: number): number {
  return Math.min(30_000 * 2 ** (k - 1), 4 * HOUR);
}

let w: PostsWorld;
let server: RunningServer | null = null;
afterAll(async () => {
  if (server !== w.s.server) await server?.stop();
  await w.stop(); // stops the first server again (a no-op) and removes the data
});

test("a receiver down for a simulated day, two restarts: every event delivered once it is back", async () => {
  const seed = faultSeed("webhook-outage", 2418);
  const random = seeded(seed);
  w = await startPostsWorld();
  const clock = w.s.clock;
  const receiver = outageReceiver(() => clock.now());
  await receiver.down();
  const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url, event_types: ["post.published"] });
  server = w.s.server;
  let herald: Herald = w.s.herald;
  const start = clock.now();

  // The plan, all seeded: posts at random moments of the day, two restarts, the receiver back at 24 h.
  type Step = { at: number; what: "publish" | "restart" | "recover" };
  const plan: Step[] = [
    ...Array.from({ length: 8 }, () => ({ at: start + random.int(0, 22 * HOUR), what: "publish" as const })),
    { at: start + random.int(2 * HOUR, 10 * HOUR), what: "restart" } as Step,
    { at: start + random.int(12 * HOUR, 22 * HOUR), what: "restart" } as Step,
    { at: start + DAY, what: "recover" } as Step,
  ].sort((a, b) => a.at - b.at);
  const publishedAt = new Map<string, number>();
  let restarts = 0;

  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${server!.url}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${w.s.owner.apiKey}`,
        "content-type": "application/json",
        "idempotency-key": crypto.randomUUID(),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  const nextAttempt = async (): Promise<number | null> => {
    const [row] = await engineOf(herald.db).query<{ at: number | string | null }>(
      "SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'",
    );
    return row?.at === null || row?.at === undefined ? null : Number(row.at);
  };

  let quiet = false; // no delivery pending and nothing planned: the day is over
  for (let steps = 0; steps < 2000 && !quiet; steps++) {
    const due = await nextAttempt();
    const planned = plan[0]?.at ?? Number.POSITIVE_INFINITY;
    quiet = due === null && plan.length === 0;
    if (quiet) break;
    if (due !== null && due < planned) {
      clock.set(Math.max(due, clock.now()));
      await runWebhooks(server);
      continue;
    }
    const step = plan.shift()!;
    clock.set(step.at);
    if (step.what === "publish") {
      const n = random.int(1, 3);
      const r = await call("POST", `/workspaces/${w.ws}/posts`, {
        when: "now",
        confirmed: true,
        group: `outage-${step.at}`,
        posts: Array.from({ length: n }, (_, i) => ({
          destination_id: w.destinationId,
          body: [`outage ${step.at - start} ${i}`],
        })),
      });
      expect(r.status).toBe(202);
      await server.engine.runUntilIdle();
      for (const post of r.body.posts) publishedAt.set(post.id, clock.now());
      await runWebhooks(server);
    } else if (step.what === "restart") {
      await server.stop();
      const config = loadConfig({
        HERALD_DATA_DIR: w.s.dataDir,
        HERALD_PORT: "0",
        HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
        ...(w.s.herald.config.databaseUrl
          ? {
              HERALD_DATABASE_URL: w.s.herald.config.databaseUrl,
              HERALD_SECRET_KEY: w.s.herald.config.secretKey!,
            }
          : {}),
      });
      herald = await openHerald(config, { clock, logger: createMemoryLogger(), mail: null });
      server = startServer(herald, { startJobs: false });
      restarts++;
    } else {
      receiver.up();
    }
  }

  const posts = [...publishedAt.keys()];
  expect(quiet).toBe(true);
  expect(restarts).toBe(2);
  expect(posts.length).toBeGreaterThanOrEqual(8);
  // Nothing got through while the receiver was down; everything within one retry period after.
  expect(receiver.received.every((r) => r.at >= start + DAY)).toBe(true);
  expect(Math.max(...receiver.received.map((r) => r.at))).toBeLessThanOrEqual(start + DAY + 1.2 * 4 * HOUR);

  // One event per post, every post's event delivered; a copy would carry the same event id.
  const eventsByPost = new Map<string, Set<string>>();
  for (const r of receiver.received) {
    expect(r.headers["service-event-id"]).toBe(r.body.id);
    const ids = eventsByPost.get(r.body.data.object.id) ?? new Set<string>();
    eventsByPost.set(r.body.data.object.id, ids.add(r.body.id));
    expect(await verifies(r, endpoint.secret, r.at)).toBe(true);
  }
  expect([...eventsByPost.keys()].sort()).toEqual([...posts].sort());
  expect([...eventsByPost.values()].every((ids) => ids.size === 1)).toBe(true);

  // created_at is the moment of publishing: receivers that order by it see the day as it happened.
  for (const r of receiver.received)
    expect(Date.parse(r.body.created_at)).toBe(publishedAt.get(r.body.data.object.id)!);

  // Each delivery's attempts followed the schedule, restarts or not, and the last one succeeded.
  const log: any = await fetch(
    `${server.url}/v1/workspaces/${w.ws}/webhook-endpoints/${endpoint.id}/deliveries?limit=100`,
    {
      headers: { authorization: `Bearer ${w.s.owner.apiKey}` },
    },
  ).then((r) => r.json());
  expect(log.data).toHaveLength(posts.length);
  for (const delivery of log.data) {
    expect(delivery.status).toBe("succeeded");
    const starts = delivery.attempts
      .map((a: any) => Date.parse(a.started_at))
      .sort((a: number, b: number) => a - b);
    for (let k = 1; k < starts.length; k++) {
      const gap = starts[k] - starts[k - 1];
      expect(gap).toBeGreaterThanOrEqual(Math.floor(0.8 * nominalWait(k)));
      expect(gap).toBeLessThanOrEqual(Math.ceil(1.2 * nominalWait(k)));
    }
  }
  console.log(
    `[faults] webhook-outage: ${posts.length} posts over a day, ${restarts} restarts, ` +
      `${receiver.received.length} deliveries after recovery, attempts per delivery ` +
      `${log.data.map((d: any) => d.attempt_count).join(",")}`,
  );
  await receiver.down();
}, 60_000);
