// events_outbox does not grow for ever: fanned-out events older than 30 days are deleted daily,
// never the newest row (the dispatch cursor is a rowid) and never one not yet fanned out.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createPosts, startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { count, mustCreateEndpoint, startReceiver, type Receiver } from "./helpers.ts";

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

const DAY = 24 * 60 * 60 * 1000;

async function publishOne(group: string): Promise<void> {
  const r = await createPosts(w, {
    when: "now",
    confirmed: true,
    group,
    posts: [{ destination_id: w.destinationId, body: [group] }],
  });
  expect(r.status).toBe(202);
  await w.s.server.engine.runUntilIdle();
}

test("old fanned-out events go; the newest and undispatched ones stay; redelivery still works", async () => {
  const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url });
  await publishOne("first");
  await publishOne("second");
  await w.s.server.scheduler.runNow("webhook-deliveries");
  expect(count(w.s.herald, "events_outbox")).toBe(2);

  w.s.clock.advance(31 * DAY);
  await publishOne("third"); // newer, and not fanned out yet
  await w.s.server.scheduler.runNow("events-outbox-cleanup");
  // "first" and "second" are old and fanned out: gone. "third" is not fanned out yet: kept.
  const left = w.s.herald.db.$client
    .query<{ body: string }, []>(
      "SELECT json_extract(payload, '$.content.body[0]') AS body FROM events_outbox ORDER BY rowid",
    )
    .all()
    .map((r) => r.body);
  expect(left).toEqual(["third"]);

  // The deliveries keep their own copy of the event: an old one can still be redelivered.
  const deliveries = w.s.herald.db.$client
    .query<{ id: string }, []>("SELECT id FROM webhook_deliveries ORDER BY created_at LIMIT 1")
    .all();
  const redelivered = await w.s.request(
    "POST",
    `/v1/workspaces/${w.ws}/webhook-endpoints/${endpoint.id}/deliveries/${deliveries[0]!.id}/redeliver`,
  );
  expect(redelivered.status).toBe(202);

  // Once everything is fanned out the newest row is still kept (the cursor points at it).
  await w.s.server.scheduler.runNow("webhook-deliveries");
  w.s.clock.advance(31 * DAY);
  await w.s.server.scheduler.runNow("events-outbox-cleanup");
  expect(count(w.s.herald, "events_outbox")).toBe(1);
});
