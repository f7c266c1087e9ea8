// The engine's batches: a burst of scheduled posts due at one moment is promoted and published in one
// run, several engines on one database claim batches without sharing a post, and a run that lost its
// lease while its last item was at the network writes nothing (its receipt goes with its outcome).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engineOf } from "../../src/db/engine.ts";
import { PublishingEngine } from "../../src/modules/publishing/engine.ts";
import { outbox, startSlowRun } from "../posts/engine-helpers.ts";
import { createPosts, getPost, startPostsWorld, type PostsWorld } from "../posts/helpers.ts";

const HOUR = 3600_000;

let w: PostsWorld;
beforeAll(async () => {
  w = await startPostsWorld();
});
afterAll(async () => {
  await w.stop();
});

/** Creates `count` one-item posts in requests of 50, all due at `when`; their ids. */
async function createMany(prefix: string, count: number, when: string): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 50) {
    const posts = Array.from({ length: Math.min(50, count - start) }, (_, k) => ({
      destination_id: w.destinationId,
      body: [`${prefix} ${start + k}`],
    }));
    const r = await createPosts(w, { when, confirmed: true, group: `${prefix}-${start}`, posts });
    expect(r.status).toBeLessThan(300);
    ids.push(...r.body.posts.map((p: { id: string }) => p.id));
  }
  return ids;
}

/** Per post: its state, attempts (number, status), receipts and post.published events. */
async function ledger(ids: string[]) {
  const db = engineOf(w.s.herald.db);
  const marks = ids.map(() => "?").join(",");
  const count = async (table: string, extra = "") =>
    new Map(
      (
        await db.query<{ post_id: string; n: number }>(
          `SELECT post_id, count(*) AS n FROM ${table} WHERE post_id IN (${marks}) ${extra} GROUP BY post_id`,
          ids,
        )
      ).map((r) => [r.post_id, Number(r.n)]),
    );
  const states = new Map(
    (
      await db.query<{ id: string; state: string }>(`SELECT id, state FROM posts WHERE id IN (${marks})`, ids)
    ).map((r) => [r.id, r.state]),
  );
  const attempts = await count("attempts");
  const succeeded = await count("attempts", "AND status = 'succeeded' AND number = 1");
  const receipts = await count("receipts");
  const events = await count("events_outbox", "AND type = 'post.published'");
  return ids.map((id) => ({
    id,
    state: states.get(id),
    attempts: attempts.get(id) ?? 0,
    succeeded: succeeded.get(id) ?? 0,
    receipts: receipts.get(id) ?? 0,
    events: events.get(id) ?? 0,
  }));
}

function publishedOnce(id: string) {
  return { id, state: "published", attempts: 1, succeeded: 1, receipts: 1, events: 1 };
}

describe("batches", () => {
  test("250 posts scheduled for one moment are promoted and published in one run, each once", async () => {
    const at = new Date(w.s.clock.now() + HOUR).toISOString();
    const ids = await createMany("burst", 250, at);
    w.s.clock.advance(HOUR);
    const before = w.mastodon.statuses.length;
    // One tick: promotion goes on batch after batch (not one batch a second), claims follow.
    await w.s.server.engine.tick();
    await w.s.server.engine.drain();
    expect(await ledger(ids)).toEqual(ids.map(publishedOnce));
    const texts = w.mastodon.statuses.slice(before).map((s) => s.text);
    expect(texts.toSorted()).toEqual(ids.map((_, i) => `burst ${i}`).toSorted());
  });

  test("three engines on one database share a backlog: every post goes out once, with one attempt", async () => {
    const ids = await createMany("shared", 120, "now");
    const before = w.mastodon.statuses.length;
    const engines = [w.s.server.engine, new PublishingEngine(w.s.herald), new PublishingEngine(w.s.herald)];
    await Promise.all(engines.map((e) => e.runUntilIdle()));
    expect(await ledger(ids)).toEqual(ids.map(publishedOnce));
    expect(w.mastodon.statuses.length - before).toBe(120);
    const owners = await engineOf(w.s.herald.db).query<{ n: number }>(
      `SELECT count(*) AS n FROM posts WHERE id IN (${ids.map(() => "?").join(",")}) AND lease_owner IS NOT NULL`,
      ids,
    );
    expect(Number(owners[0]!.n)).toBe(0); // every lease was released with its outcome
  });

  test("a run whose lease was taken over while its last item was at the network writes nothing", async () => {
    const created = (
      await createPosts(w, {
        when: "now",
        confirmed: true,
        group: "late-answer",
        posts: [{ destination_id: w.destinationId, body: ["first", "late answer"] }],
      })
    ).body.posts[0];
    // The second item's create is answered late: its run's lease expires meanwhile.
    const slow = await startSlowRun(w, created.id, 1, 1500);
    w.s.clock.advance(w.s.herald.config.engine.leaseMs + 1000);
    await w.s.server.engine.runUntilIdle(); // recovery re-queues it (idempotent creates) and publishes
    await slow.drain(); // the late answer arrives: its receipt and outcome are not written
    const post = await getPost(w, created.id, true);
    expect(post).toMatchObject({ state: "published", attempt_count: 2 });
    expect(post.attempts.map((a: { trigger: string; status: string }) => [a.trigger, a.status])).toEqual([
      ["initial", "failed"],
      ["recovery", "succeeded"],
    ]);
    expect(post.receipts.map((r: { item_index: number }) => r.item_index)).toEqual([0, 1]);
    expect((await outbox(w, created.id)).map((e) => e.type)).toEqual(["post.published"]);
    expect(w.mastodon.statuses.filter((s) => s.text === "late answer")).toHaveLength(1);
    expect(w.s.logs.filter((l) => l.includes("publishing crashed"))).toEqual([]);
    expect(w.s.logs.some((l) => l.includes("lease lost while publishing"))).toBe(true);
  });
});
