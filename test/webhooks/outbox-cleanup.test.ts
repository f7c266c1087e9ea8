// Each outbox event carries its own dispatch mark (`dispatched_at`), not a position behind a
// cursor: an event whose transaction committed after newer ones were fanned out is still fanned
// out, and events_outbox does not grow for ever (fanned-out events older than 30 days are deleted
// daily, never one not yet fanned out).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { asc } from "drizzle-orm";
import { newId } from "../../src/db/ids.ts";
import { tables } from "../helpers/tables.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { createPosts, startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { count, deliveriesOf, mustCreateEndpoint, startReceiver, type Receiver } from "./helpers.ts";

const { eventsOutbox } = tables;

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

/** The outbox, oldest id first: each event's body text and whether it was fanned out. */
async function outbox(): Promise<{ id: string; body: string; dispatched: boolean }[]> {
  const rows = await w.s.herald.db
    .select({ id: eventsOutbox.id, payload: eventsOutbox.payload, dispatchedAt: eventsOutbox.dispatchedAt })
    .from(eventsOutbox)
    .orderBy(asc(eventsOutbox.id));
  return rows.map((r) => ({
    id: r.id,
    body: ((r.payload.content as { body?: string[] } | undefined)?.body ?? [])[0] ?? "",
    dispatched: r.dispatchedAt !== null,
  }));
}

/** Writes a post.published event with a chosen id, as a publication's transaction would. */
async function writeEvent(id: string, body: string, createdAt: number): Promise<void> {
  await inTransaction(w.s.herald.db, async (tx) => {
    await tx.insert(eventsOutbox).values({
      id,
      workspaceId: w.ws,
      type: "post.published",
      postId: null,
      destinationId: w.destinationId,
      createdAt,
      dispatchedAt: null,
      payload: {
        id: newId("send"),
        object: "post",
        group: body,
        channel: "mastodon",
        destination_id: w.destinationId,
        state: "published",
        scheduled_at: null,
        published_at: new Date(createdAt).toISOString(),
        url: "https://mastodon.example/@late/1",
        error: null,
        content: { headline: "", body: [body] },
      },
    });
  });
}

test("an event committed after newer ones were fanned out is still fanned out, once", async () => {
  const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url });
  // A transaction takes its event id, then commits only after a newer event was fanned out.
  const lateId = newId("evt");
  const lateCreatedAt = w.s.clock.now();
  await publishOne("newer");
  await w.s.server.scheduler.runNow("webhook-dispatch");
  const before = await outbox();
  expect(before.map((e) => [e.body, e.dispatched])).toEqual([["newer", true]]);
  expect(lateId < before[0]!.id).toBe(true);

  await writeEvent(lateId, "late", lateCreatedAt);
  expect((await outbox()).map((e) => [e.body, e.dispatched])).toEqual([
    ["late", false],
    ["newer", true],
  ]);
  const health = await w.s.request("GET", "/health", { key: null });
  expect(health.body.webhooks.undispatched_events).toBe(1);

  await w.s.server.scheduler.runNow("webhook-deliveries");
  expect((await outbox()).every((e) => e.dispatched)).toBe(true);
  const deliveries = await deliveriesOf(w.s, endpoint.id);
  expect(deliveries.map((d) => d.event_id).sort()).toEqual([lateId, before[0]!.id].sort());
  expect(deliveries.every((d) => d.status === "succeeded")).toBe(true);
  expect(receiver.eventIds()).toEqual(new Set([lateId, before[0]!.id]));

  // Fanned out once: another dispatch creates nothing.
  await w.s.server.scheduler.runNow("webhook-dispatch");
  expect(await count(w.s.herald, "webhook_deliveries", `endpoint_id = '${endpoint.id}'`)).toBe(2);
  expect((await w.s.request("GET", "/health", { key: null })).body.webhooks.undispatched_events).toBe(0);
});

test("old fanned-out events go; undispatched ones stay, however old; redelivery still works", async () => {
  // A clean outbox (the events of the test before are fanned out, and would go below too).
  await inTransaction(w.s.herald.db, async (tx) => {
    await tx.delete(eventsOutbox);
  });
  const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url });
  await publishOne("first");
  await publishOne("second");
  await w.s.server.scheduler.runNow("webhook-deliveries");
  expect(await count(w.s.herald, "events_outbox")).toBe(2);

  // Nothing fanned out less than 30 days ago goes.
  w.s.clock.advance(29 * DAY);
  await w.s.server.scheduler.runNow("events-outbox-cleanup");
  expect(await count(w.s.herald, "events_outbox")).toBe(2);

  w.s.clock.advance(2 * DAY);
  await publishOne("third"); // not fanned out yet
  // An event older than 30 days that was never fanned out (its dispatcher was down all along).
  await writeEvent(newId("evt"), "stuck", w.s.clock.now() - 40 * DAY);
  await w.s.server.scheduler.runNow("events-outbox-cleanup");
  // "first" and "second" are old and fanned out: gone. The other two are not fanned out: kept.
  expect((await outbox()).map((e) => [e.body, e.dispatched])).toEqual([
    ["third", false],
    ["stuck", false],
  ]);

  // The deliveries keep their own copy of the event: an old one can still be redelivered.
  const [oldest] = (await deliveriesOf(w.s, endpoint.id)).sort((a, b) => (a.id < b.id ? -1 : 1));
  const redelivered = await w.s.request(
    "POST",
    `/v1/workspaces/${w.ws}/webhook-endpoints/${endpoint.id}/deliveries/${oldest.id}/redeliver`,
  );
  expect(redelivered.status).toBe(202);

  // Once everything is fanned out and 30 days old, nothing is kept (no cursor needs a newest row).
  await w.s.server.scheduler.runNow("webhook-deliveries");
  expect(await count(w.s.herald, "events_outbox", "dispatched_at IS NULL")).toBe(0);
  w.s.clock.advance(31 * DAY);
  await w.s.server.scheduler.runNow("events-outbox-cleanup");
  expect(await count(w.s.herald, "events_outbox")).toBe(0);
});
