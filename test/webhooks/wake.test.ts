// Waking: once a server arms it (as it does when it starts its jobs), an event committed in the
// process is sent without waiting for a tick, and a wake during a run is taken by that run. Test
// servers have no ticks at all (jobs are not scheduled), so nothing here can arrive any other way.
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "bun:test";
import { armWebhookWake, wakeWebhooks } from "../../src/modules/webhooks/wake.ts";
import { createPosts, startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { count, endpointsPath, mustCreateEndpoint } from "./helpers.ts";

let w: PostsWorld;
let disarm: (() => void) | null = null;
/** Runs of the sender the wakes started. */
let runs = 0;

/** A receiver that holds its answers while `held` is set; event ids in order of arrival. */
const arrived: string[] = [];
let held: Promise<void> | null = null;
const receiver = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: async (request) => {
    await request.text();
    arrived.push(request.headers.get("service-event-id")!);
    if (held) await held;
    return new Response(null, { status: 204 });
  },
});

beforeAll(async () => {
  w = await startPostsWorld();
});
afterAll(async () => {
  await w.stop();
  await receiver.stop(true);
});
beforeEach(async () => {
  const list = await w.s.request("GET", `${endpointsPath(w.ws)}?limit=100`);
  for (const e of list.body.data) await w.s.request("DELETE", `${endpointsPath(w.ws)}/${e.id}`);
  await mustCreateEndpoint(w.s, { url: `http://127.0.0.1:${receiver.port}/hooks` });
  arrived.length = 0;
  runs = 0;
  disarm = armWebhookWake(w.s.herald.db, () => {
    runs += 1;
    return w.s.server.scheduler.runNow("webhook-deliveries");
  });
});
afterEach(async () => {
  disarm?.();
  // Whatever run a wake started is over before the next test.
  await w.s.server.scheduler.runNow("webhook-deliveries");
});

let groups = 0;
/** Publishes one post now; the engine commits its `post.published` event. */
async function publishOne(): Promise<void> {
  const r = await createPosts(w, {
    when: "now",
    confirmed: true,
    group: `wake-${++groups}`,
    posts: [{ destination_id: w.destinationId, body: [`wake ${groups}`] }],
  });
  expect(r.status).toBe(202);
  await w.s.server.engine.runUntilIdle();
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await Bun.sleep(5);
}

test("an event committed in the process wakes the sender: fanned out and sent with no tick", async () => {
  await publishOne();
  // No explicit wake: the commit of the post's event woke the sender (afterCommit in recordPostEvent).
  await until(() => arrived.length === 1);
  expect(runs).toBeGreaterThanOrEqual(1);
  expect(await count(w.s.herald, "events_outbox", "dispatched_at IS NULL")).toBe(0);
});

test("a wake with nothing committed sends nothing", async () => {
  wakeWebhooks(w.s.herald.db);
  await w.s.server.scheduler.runNow("webhook-deliveries");
  expect(arrived).toHaveLength(0);
});

test("a wake during a run is taken by that run: fanned out and sent while the first attempt is still out", async () => {
  let release = () => {};
  held = new Promise((resolve) => (release = resolve));
  try {
    await publishOne();
    wakeWebhooks(w.s.herald.db);
    await until(() => arrived.length === 1);
    // The first attempt waits for its answer; a second event is committed and woken meanwhile.
    await publishOne();
    wakeWebhooks(w.s.herald.db);
    await until(() => arrived.length === 2);
    expect(new Set(arrived).size).toBe(2);
    expect(runs).toBe(1);
  } finally {
    held = null;
    release();
  }
});

test("without arming, a wake does nothing", async () => {
  disarm?.();
  await publishOne();
  wakeWebhooks(w.s.herald.db);
  // An armed wake starts its run in a microtask; one turn of the event loop is more than enough.
  await Bun.sleep(0);
  expect(runs).toBe(0);
  expect(await count(w.s.herald, "events_outbox", "dispatched_at IS NULL")).toBe(1);
});
