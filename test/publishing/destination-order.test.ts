// Each destination's posts go one at a time and in due order, while several destinations are at the
// networks at once: a burst of posts due together to four slow Mastodon destinations, claimed by one
// engine and then by two engines on one database (two processes' claims racing on PostgreSQL).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engineOf } from "../../src/db/engine.ts";
import { inGuardedTransaction } from "../../src/db/transaction.ts";
import { PublishingEngine } from "../../src/modules/publishing/engine.ts";
import { takeReadyHeads } from "../../src/modules/publishing/repo.ts";
import { startMastodonFake, type MastodonFake } from "../fakes/mastodon.ts";
import { connectMastodon, createPosts } from "../posts/helpers.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const MINUTE = 60_000;
const DESTINATIONS = 4;
const PER_DESTINATION = 5;

let s: TestServer;
const fakes: MastodonFake[] = [];
const destinations: string[] = [];
beforeAll(async () => {
  s = await startTestServer({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  for (let d = 0; d < DESTINATIONS; d++) {
    const fake = await startMastodonFake({ mediaProcessingPolls: 0 });
    fakes.push(fake);
    destinations.push(await connectMastodon(s, fake));
  }
});
afterAll(async () => {
  await s.stop();
  for (const fake of fakes) await fake.stop();
});

let rounds = 0;
/**
 * Schedules PER_DESTINATION posts per destination, post k due k minutes after `at`, created latest
 * first (so creation order, and ids, run against due order); returns each destination's bodies in
 * due order.
 */
async function scheduleBurst(at: number): Promise<string[][]> {
  const round = ++rounds;
  const expected = destinations.map(() => [] as string[]);
  for (let k = PER_DESTINATION - 1; k >= 0; k--) {
    for (let d = 0; d < DESTINATIONS; d++) {
      const text = `round ${round} destination ${d} post ${k}`;
      expected[d]![k] = text;
      const when = new Date(at + k * MINUTE).toISOString();
      const posts = [{ destination_id: destinations[d], body: [text] }];
      const r = await createPosts({ s, ws: s.owner.workspaceId } as never, {
        when,
        confirmed: true,
        group: `r${round}-d${d}-k${k}`,
        posts,
      });
      expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
    }
  }
  return expected;
}

/**
 * Runs the burst's publications with every fake answering after 40 ms, counting calls in flight
 * across all destinations at once (the most seen when a request arrives).
 */
async function publishBurst(run: () => Promise<void>): Promise<{ acrossDestinations: number }> {
  let acrossDestinations = 0;
  for (const fake of fakes) {
    fake.delayMs = 40;
    fake.maxInFlight = 0;
    const push = fake.requests.push.bind(fake.requests);
    fake.requests.push = (...items) => {
      const busy = fakes.filter((f) => f.inFlight > 0).length;
      acrossDestinations = Math.max(acrossDestinations, busy);
      return push(...items);
    };
  }
  try {
    await run();
  } finally {
    for (const fake of fakes) {
      fake.delayMs = 0;
      delete (fake.requests as { push?: unknown }).push; // back to the array's own push
    }
  }
  return { acrossDestinations };
}

/**
 * Each destination's network got the burst's posts in due order (`sent`: statuses it held before),
 * never two calls at once, and several destinations had calls in flight at the same time.
 */
function expectOneAtATimeInOrder(sent: number[], expected: string[][], acrossDestinations: number): void {
  for (let d = 0; d < DESTINATIONS; d++) {
    const texts = fakes[d]!.statuses.slice(sent[d]).map((status) => status.text);
    expect({ destination: d, texts, maxInFlight: fakes[d]!.maxInFlight }).toEqual({
      destination: d,
      texts: expected[d]!,
      maxInFlight: 1,
    });
  }
  expect(acrossDestinations).toBeGreaterThan(1);
}

describe("one call in flight per destination, in due order", () => {
  test("one engine: each destination's posts in due order, one at a time, destinations side by side", async () => {
    const at = s.clock.now() + 10 * MINUTE;
    const sent = fakes.map((f) => f.statuses.length);
    const expected = await scheduleBurst(at);
    s.clock.advance(10 * MINUTE + PER_DESTINATION * MINUTE);
    const { acrossDestinations } = await publishBurst(() => s.server.engine.runUntilIdle());
    expectOneAtATimeInOrder(sent, expected, acrossDestinations);
  });

  test("two engines on one database: still one call in flight per destination, in due order", async () => {
    const other = new PublishingEngine(s.herald);
    const at = s.clock.now() + 10 * MINUTE;
    const sent = fakes.map((f) => f.statuses.length);
    const expected = await scheduleBurst(at);
    s.clock.advance(10 * MINUTE + PER_DESTINATION * MINUTE);
    const engines = [s.server.engine, other];
    const { acrossDestinations } = await publishBurst(async () => {
      // Both claim at the same moments, again after each other's publications, until nothing is due.
      for (let i = 0; i < 3; i++) await Promise.all(engines.map((e) => e.runUntilIdle()));
    });
    other.stop();
    await other.drain();
    expectOneAtATimeInOrder(sent, expected, acrossDestinations);
  });

  test("a destination whose earlier post is due but not yet promoted waits for it", async () => {
    // Promotion goes in batches, in several processes: a later post can be ready while an earlier
    // one of its destination is still `scheduled`, as another process's batch made it here.
    const at = s.clock.now() + 10 * MINUTE;
    const created: string[] = [];
    for (const text of ["earlier", "later"]) {
      const posts = [{ destination_id: destinations[0], body: [`promotion ${text}`] }];
      const r = await createPosts({ s, ws: s.owner.workspaceId } as never, {
        when: new Date(at).toISOString(),
        confirmed: true,
        group: `promotion-${text}`,
        posts,
      });
      expect(r.status).toBe(201);
      created.push(r.body.posts[0].id);
    }
    s.clock.advance(10 * MINUTE);
    await engineOf(s.herald.db).query("UPDATE posts SET state = 'ready' WHERE id = ?", [created[1]]);
    const now = s.clock.now();
    const heads = await inGuardedTransaction(s.herald.db, (tx) => takeReadyHeads(tx, now, 10));
    expect(heads.map((p) => p.id)).toEqual([]);
    // Once the earlier one is promoted too, it is the head.
    await engineOf(s.herald.db).query("UPDATE posts SET state = 'ready' WHERE id = ?", [created[0]]);
    const next = await inGuardedTransaction(s.herald.db, (tx) => takeReadyHeads(tx, now, 10));
    expect(next.map((p) => p.id)).toEqual([created[0]]);
    await s.server.engine.runUntilIdle();
    const texts = fakes[0]!.statuses.slice(-2).map((status) => status.text);
    expect(texts).toEqual(["promotion earlier", "promotion later"]);
  });
});
