// A restart in the middle of a backlog loses nothing: events not yet fanned out and deliveries in
// flight when the server stops are all delivered by the next server on the same data dir (at least
// once; the receiver deduplicates by Service-Event-Id).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { loadConfig } from "../../src/config.ts";
import { tables } from "../helpers/tables.ts";
import { createMemoryLogger } from "../../src/lib/logger.ts";
import { openHerald, startServer, type RunningServer } from "../../src/server.ts";
import { createPosts, startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { count, mustCreateEndpoint, startReceiver, verifies, type Receiver } from "./helpers.ts";

const { eventsOutbox } = tables;

let w: PostsWorld;
let receiver: Receiver;
let restarted: RunningServer | null = null;

beforeAll(async () => {
  w = await startPostsWorld();
  receiver = startReceiver();
});
afterAll(async () => {
  await restarted?.stop();
  // The first server is stopped already; stopping it again removes its data dir (and database).
  await w.stop();
  await receiver.stop();
});

async function publishMany(group: string, n: number): Promise<void> {
  const r = await createPosts(w, {
    when: "now",
    confirmed: true,
    group,
    posts: Array.from({ length: n }, (_, i) => ({
      destination_id: w.destinationId,
      body: [`${group} ${i}`],
    })),
  });
  expect(r.status).toBe(202);
  await w.s.server.engine.runUntilIdle();
}

test("events and deliveries survive a stop in the middle of sending", async () => {
  const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url });
  await publishMany("before", 20);
  await w.s.server.scheduler.runNow("webhook-dispatch");
  expect(await count(w.s.herald, "webhook_deliveries", "status = 'pending'")).toBe(20);
  // More events that are not fanned out before the stop.
  await publishMany("backlog", 10);
  const allEvents = (
    await w.s.herald.db
      .select({ id: eventsOutbox.id })
      .from(eventsOutbox)
      .where(eq(eventsOutbox.type, "post.published"))
  ).map((e) => e.id);
  expect(allEvents).toHaveLength(30);

  // The receiver is slow: the server stops while the first attempts are in flight; they finish,
  // and the deliveries not yet started wait in the database for the next server.
  receiver.delayMs = 400;
  const sending = w.s.server.scheduler.runNow("webhook-deliveries");
  while (receiver.received.length < 5) await Bun.sleep(10);
  const stopping = w.s.server.stop();
  await sending;
  await stopping;
  const inFlight = receiver.received.length;
  expect(inFlight).toBeGreaterThan(0);
  expect(inFlight).toBeLessThan(30);

  // A new server on the same data dir (or PostgreSQL database), same clock.
  const first = w.s.herald.config;
  const config = loadConfig({
    HERALD_DATA_DIR: w.s.dataDir,
    HERALD_PORT: "0",
    HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
    ...(first.databaseUrl
      ? { HERALD_DATABASE_URL: first.databaseUrl, HERALD_SECRET_KEY: first.secretKey! }
      : {}),
  });
  const herald = await openHerald(config, { clock: w.s.clock, logger: createMemoryLogger(), mail: null });
  restarted = startServer(herald, { startJobs: false });
  receiver.delayMs = 0;
  await restarted.scheduler.runNow("webhook-deliveries");
  // Anything claimed but not finished (a harder stop) is claimed until its lease ends; then it goes out
  // again.
  w.s.clock.advance(61_000);
  await restarted.scheduler.runNow("webhook-deliveries");

  expect(await count(herald, "webhook_deliveries")).toBe(30);
  expect(await count(herald, "webhook_deliveries", "status = 'succeeded'")).toBe(30);
  expect([...receiver.eventIds()].sort()).toEqual([...allEvents].sort());
  // At least once (a cut-off attempt would arrive twice), each verifiable.
  expect(receiver.received.length).toBeGreaterThanOrEqual(30);
  for (const r of receiver.received) expect(await verifies(r, endpoint.secret, w.s.clock.now())).toBe(true);

  // Nothing is fanned out twice by the new server.
  await restarted.scheduler.runNow("webhook-dispatch");
  expect(await count(herald, "webhook_deliveries")).toBe(30);
});
