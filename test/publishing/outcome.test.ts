// A published post's outcome (its state, last receipt, attempt's end, analytics row and event) is
// written whole or not at all, and only by the run that still holds the post's lease. On PostgreSQL
// it is one statement (writePublishedOutcome), on SQLite one transaction: the same checks on both.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engineOf } from "../../src/db/engine.ts";
import { outbox, startSlowRun } from "../posts/engine-helpers.ts";
import { createPosts, getPost, startPostsWorld, type PostsWorld } from "../posts/helpers.ts";

let w: PostsWorld;
beforeAll(async () => {
  w = await startPostsWorld();
});
afterAll(async () => {
  await w.stop();
});

async function createOne(group: string, body: string[]): Promise<{ id: string }> {
  const r = await createPosts(w, {
    when: "now",
    confirmed: true,
    group,
    posts: [{ destination_id: w.destinationId, body }],
  });
  expect(r.status).toBeLessThan(300);
  return r.body.posts[0];
}

async function rows(sql: string, postId: string) {
  return engineOf(w.s.herald.db).query<Record<string, unknown>>(sql, [postId]);
}

describe("a published post's outcome", () => {
  test("is written by one run: its event, analytics row and attempt go with the receipt", async () => {
    const created = await createOne("thread", ["first", "second"]);
    await w.s.server.engine.runUntilIdle();
    const post = await getPost(w, created.id, true);
    expect(post).toMatchObject({ state: "published", attempt_count: 1, version: expect.any(Number) });
    expect(post.attempts.map((a: { status: string }) => a.status)).toEqual(["succeeded"]);
    expect(post.receipts.map((r: { item_index: number }) => r.item_index)).toEqual([0, 1]);
    const events = await outbox(w, created.id);
    expect(events.map((e) => e.type)).toEqual(["post.published"]);
    // The event's summary: the post after the move, its url the thread's first item.
    expect(events[0]!.payload).toMatchObject({
      id: created.id,
      state: "published",
      published_at: post.published_at,
      url: post.receipts[0].url,
      error: null,
      content: { body: ["first", "second"] },
    });
    const analytics = await rows(
      "SELECT state, published_at FROM post_analytics WHERE post_id = ?",
      created.id,
    );
    expect(analytics.map((a) => [a.state, Number(a.published_at)])).toEqual([
      ["pending", Date.parse(post.published_at)],
    ]);
    const lease = await rows("SELECT lease_owner, lease_expires_at FROM posts WHERE id = ?", created.id);
    expect(lease).toEqual([{ lease_owner: null, lease_expires_at: null }]);
  });

  test("that cannot be stored whole writes none of it (the receipt's item is taken)", async () => {
    const created = await createOne("taken", ["only"]);
    const slow = await startSlowRun(w, created.id, 0, 800);
    // While the create is at the network, a receipt for the same item appears (the unique index
    // refuses the run's own): the outcome written with it must not half-apply.
    await engineOf(w.s.herald.db).query(
      "INSERT INTO receipts (id, post_id, item_index, provider_object_id, url, extra, state, published_at) " +
        "VALUES (?, ?, 0, 'planted', 'https://example.test/planted', '{}', 'published', 1)",
      [`rcpt_planted_${created.id}`, created.id],
    );
    await slow.drain();
    const [row] = await rows("SELECT state, lease_owner FROM posts WHERE id = ?", created.id);
    expect(row).toEqual({ state: "processing", lease_owner: slow.owner });
    const attempts = await rows("SELECT status, finished_at FROM attempts WHERE post_id = ?", created.id);
    expect(attempts).toEqual([{ status: "started", finished_at: null }]);
    const receipts = await rows("SELECT provider_object_id FROM receipts WHERE post_id = ?", created.id);
    expect(receipts).toEqual([{ provider_object_id: "planted" }]);
    expect(await outbox(w, created.id)).toEqual([]);
    expect(await rows("SELECT post_id FROM post_analytics WHERE post_id = ?", created.id)).toEqual([]);
    expect(w.s.logs.some((l) => l.includes("publishing crashed") && l.includes(created.id))).toBe(true);
    // The post stays `processing` under the dead run's lease; its destination publishes one post at a
    // time, so the next test's post would wait for the lease to run out: this one is set aside.
    await rows(
      "UPDATE posts SET state = 'cancelled', lease_owner = NULL, lease_expires_at = NULL WHERE id = ?",
      created.id,
    );
  });

  test("of a run whose lease was taken over while its only item was at the network is not written", async () => {
    const created = await createOne("lost", ["late answer"]);
    const slow = await startSlowRun(w, created.id, 0, 1500);
    w.s.clock.advance(w.s.herald.config.engine.leaseMs + 1000);
    await w.s.server.engine.runUntilIdle(); // recovery re-queues it (idempotent creates) and publishes
    await slow.drain(); // the late answer arrives: its receipt and outcome are not written
    const post = await getPost(w, created.id, true);
    expect(post).toMatchObject({ state: "published", attempt_count: 2 });
    expect(post.attempts.map((a: { trigger: string; status: string }) => [a.trigger, a.status])).toEqual([
      ["initial", "failed"],
      ["recovery", "succeeded"],
    ]);
    expect(post.receipts).toHaveLength(1);
    expect((await outbox(w, created.id)).map((e) => e.type)).toEqual(["post.published"]);
    expect(await rows("SELECT post_id FROM post_analytics WHERE post_id = ?", created.id)).toHaveLength(1);
    expect(w.s.logs.some((l) => l.includes("lease lost while publishing") && l.includes(created.id))).toBe(
      true,
    );
  });
});
