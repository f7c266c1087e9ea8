// The sender claims many deliveries at once and stores outcomes in batches: successes and failures
// of several endpoints finishing together still leave each delivery its own attempt numbers and each
// endpoint its own failure streak, and a run over more deliveries than it may hold at once sends them all.
import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { createPosts, startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import {
  count,
  endpointsPath,
  mustCreateEndpoint,
  runWebhooks,
  startReceiver,
  type Receiver,
} from "./helpers.ts";

let w: PostsWorld;
let receiver: Receiver;

beforeAll(async () => {
  w = await startPostsWorld();
  receiver = startReceiver();
});
afterAll(async () => {
  await w.stop();
  await receiver.stop();
});

beforeEach(async () => {
  const list = await w.s.request("GET", `${endpointsPath(w.ws)}?limit=100`);
  for (const e of list.body.data) await w.s.request("DELETE", `${endpointsPath(w.ws)}/${e.id}`);
  receiver.received.length = 0;
  receiver.respond = null;
  receiver.defaultStatus = 200;
});

let groups = 0;
/** Publishes `n` posts now (in groups of 50) and runs the engine until they are done (one event each). */
async function publishMany(n: number): Promise<void> {
  for (let done = 0; done < n; done += 50) {
    const r = await createPosts(w, {
      when: "now",
      confirmed: true,
      group: `pipeline-${++groups}`,
      posts: Array.from({ length: Math.min(50, n - done) }, (_, i) => ({
        destination_id: w.destinationId,
        body: [`post ${done + i}`],
      })),
    });
    expect(r.status).toBe(202);
  }
  await w.s.server.engine.runUntilIdle();
}

const base = () => receiver.url.replace(/\/hooks$/, "");
const where = (endpointId: string, more = "1 = 1") => `endpoint_id = '${endpointId}' AND ${more}`;
const attemptsOf = (endpointId: string, more = "1 = 1") =>
  count(
    w.s.herald,
    "webhook_delivery_attempts",
    `delivery_id IN (SELECT id FROM webhook_deliveries WHERE ${where(endpointId)}) AND ${more}`,
  );

/** Whether an endpoint has a failure streak (failing_since set). */
async function failing(id: string): Promise<boolean> {
  return (await count(w.s.herald, "webhook_endpoints", `id = '${id}' AND failing_since IS NOT NULL`)) === 1;
}

test("successes and failures stored together keep attempt numbers and each endpoint's streak", async () => {
  const good = await mustCreateEndpoint(w.s, { url: `${base()}/good` });
  const bad = await mustCreateEndpoint(w.s, { url: `${base()}/bad` });
  receiver.respond = (r) => (r.path === "/bad" ? 500 : 200);
  await publishMany(40);
  await runWebhooks(w.s.server);

  expect(
    await count(
      w.s.herald,
      "webhook_deliveries",
      where(good.id, "status = 'succeeded' AND attempt_count = 1"),
    ),
  ).toBe(40);
  expect(await attemptsOf(good.id, "number = 1 AND response_status = 200")).toBe(40);
  expect(
    await count(w.s.herald, "webhook_deliveries", where(bad.id, "status = 'pending' AND attempt_count = 1")),
  ).toBe(40);
  expect(await count(w.s.herald, "webhook_deliveries", where(bad.id, "last_response_status = 500"))).toBe(40);
  expect(await attemptsOf(bad.id, "number = 1 AND response_status = 500")).toBe(40);
  expect(await failing(good.id)).toBe(false);
  expect(await failing(bad.id)).toBe(true);

  // The receiver recovers; after the first retry delay (30 s ± 20 %) every failed delivery goes again.
  receiver.respond = null;
  w.s.clock.advance(60_000);
  await runWebhooks(w.s.server);
  expect(
    await count(
      w.s.herald,
      "webhook_deliveries",
      where(bad.id, "status = 'succeeded' AND attempt_count = 2"),
    ),
  ).toBe(40);
  expect(await attemptsOf(bad.id, "number = 2 AND response_status = 200")).toBe(40);
  expect(await attemptsOf(bad.id)).toBe(80);
  expect(await failing(bad.id)).toBe(false);
  expect(await attemptsOf(good.id)).toBe(40);
});

test("a run sends far more deliveries than it holds at once, each once", async () => {
  await mustCreateEndpoint(w.s, { url: receiver.url });
  await publishMany(150);
  await runWebhooks(w.s.server);
  expect(receiver.received).toHaveLength(150);
  expect(receiver.eventIds().size).toBe(150);
  expect(await count(w.s.herald, "webhook_deliveries", "status = 'succeeded' AND attempt_count = 1")).toBe(
    150,
  );
  expect(await count(w.s.herald, "webhook_deliveries", "status = 'pending'")).toBe(0);
});
