import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createPosts, startPostsWorld, type PostsWorld } from "./posts/helpers.ts";

let w: PostsWorld;
beforeAll(async () => {
  w = await startPostsWorld();
});
afterAll(async () => {
  await w.stop();
});

describe("GET /health reports the work waiting", () => {
  test("due-but-unclaimed posts, the oldest due age, and undispatched webhook events", async () => {
    const before = await w.s.request("GET", "/health", { key: null });
    expect(before.status).toBe(200);
    expect(before.body.engine).toMatchObject({
      due_unclaimed_posts: 0,
      oldest_due_age_ms: null,
      in_flight: 0,
    });
    expect(before.body.webhooks).toEqual({
      pending_deliveries: 0,
      oldest_pending_age_ms: null,
      undispatched_events: 0,
    });

    const created = await createPosts(w, {
      when: "now",
      confirmed: true,
      group: "health",
      posts: [{ destination_id: w.destinationId, body: ["due"] }],
    });
    expect(created.status).toBe(202);
    w.s.clock.advance(5_000);
    const due = await w.s.request("GET", "/health", { key: null });
    expect(due.body.engine.due_unclaimed_posts).toBe(1);
    expect(due.body.engine.oldest_due_age_ms).toBe(5_000);

    await w.s.server.engine.runUntilIdle();
    const after = await w.s.request("GET", "/health", { key: null });
    expect(after.body.engine.due_unclaimed_posts).toBe(0);
    expect(after.body.engine.last_tick_at).not.toBeNull();
    // The post.published event waits in the outbox until the webhook dispatcher runs.
    expect(after.body.webhooks.undispatched_events).toBe(1);
    await w.s.server.scheduler.runNow("webhook-dispatch");
    const dispatched = await w.s.request("GET", "/health", { key: null });
    expect(dispatched.body.webhooks.undispatched_events).toBe(0);
  });
});
