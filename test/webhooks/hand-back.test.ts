// The sender claims a few more deliveries than it has slots, so the next ones are at hand. When the
// server stops, attempts under way finish and are stored; claimed deliveries not yet started are
// handed back, due at once (not left leased for 30 s), and nothing is lost.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { loadConfig } from "../../src/config.ts";
import { engineOf } from "../../src/db/engine.ts";
import { createMemoryLogger } from "../../src/lib/logger.ts";
import { openHerald } from "../../src/server.ts";
import { createPosts, startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { count, mustCreateEndpoint, startReceiver, type Receiver } from "./helpers.ts";

let w: PostsWorld;
let receiver: Receiver;

beforeAll(async () => {
  w = await startPostsWorld();
  receiver = startReceiver();
});
afterAll(async () => {
  // The server is stopped already; stopping it again removes its data dir (and database).
  await w.stop();
  await receiver.stop();
});

test("a stop hands back claimed deliveries that were not started", async () => {
  await mustCreateEndpoint(w.s, { url: receiver.url });
  const r = await createPosts(w, {
    when: "now",
    confirmed: true,
    group: "hand-back",
    posts: Array.from({ length: 40 }, (_, i) => ({ destination_id: w.destinationId, body: [`post ${i}`] })),
  });
  expect(r.status).toBe(202);
  await w.s.server.engine.runUntilIdle();
  await w.s.server.scheduler.runNow("webhook-dispatch");
  expect(await count(w.s.herald, "webhook_deliveries", "status = 'pending'")).toBe(40);

  receiver.delayMs = 300;
  const sending = w.s.server.scheduler.runNow("webhook-deliveries");
  while (receiver.received.length === 0) await Bun.sleep(5);
  const stopping = w.s.server.stop();
  await sending;
  await stopping;

  const sent = receiver.received.length;
  expect(sent).toBeGreaterThan(0);
  expect(sent).toBeLessThan(40);
  // The database as the next server finds it: every attempt that started is stored as delivered,
  // and the rest are pending and due now.
  const first = w.s.herald.config;
  const herald = await openHerald(
    loadConfig({
      HERALD_DATA_DIR: w.s.dataDir,
      HERALD_PORT: "0",
      ...(first.databaseUrl
        ? { HERALD_DATABASE_URL: first.databaseUrl, HERALD_SECRET_KEY: first.secretKey! }
        : {}),
    }),
    { clock: w.s.clock, logger: createMemoryLogger(), mail: null },
  );
  try {
    const now = w.s.clock.now();
    expect(await count(herald, "webhook_deliveries", "status = 'succeeded'")).toBe(sent);
    expect(
      await count(herald, "webhook_deliveries", `status = 'pending' AND next_attempt_at <= ${now}`),
    ).toBe(40 - sent);
  } finally {
    await engineOf(herald.db).close();
  }
});
