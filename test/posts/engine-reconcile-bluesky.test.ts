// Bluesky items whose createRecord went unanswered, through the real server and HTTP: Herald reads
// its own record key back before sending anything again (a live timeout a minute later, a dead
// process at once), in threads too, and never makes a second record.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PublishingEngine } from "../../src/modules/publishing/engine.ts";
import { itemRecordKey } from "../../src/providers/bluesky/tid.ts";
import { getPost } from "./helpers.ts";
import {
  onNth,
  outbox,
  posted,
  publish,
  startEngineWorld,
  waitFor,
  type EngineWorld,
  whileHanging,
} from "./engine-helpers.ts";

let w: EngineWorld;
beforeAll(async () => {
  // A one-second provider timeout: the hanging creates answer quickly.
  w = await startEngineWorld({ HERALD_PROVIDER_TIMEOUT_SECONDS: "1" });
});
afterAll(async () => {
  await w.stop();
});

let texts = 0;
/** A body of `n` items unique to the test. */
const thread = (label: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${label} #${++texts} (${i + 1}/${n})`);
const run = () => w.s.server.engine.runUntilIdle();
const recordsOf = (text: string) => w.bluesky.records.filter((r) => r.record.text === text);
const creates = () => posted(w.bluesky, "com.atproto.repo.createRecord").length;
const lookUps = () => w.bluesky.requests.filter((r) => r.path.endsWith("com.atproto.repo.getRecord")).length;

/** Each item of `body` is on the fake once, each a reply to the one before; the post's receipts name them. */
function expectOneRecordPerItem(post: any, body: string[]): void {
  const records = body.map((text) => {
    const found = recordsOf(text);
    expect({ text, copies: found.length }).toEqual({ text, copies: 1 });
    return found[0]!;
  });
  records.forEach((record, i) => {
    const key = itemRecordKey({ idempotencyKey: `${post.id}.${i}`, itemIndex: i });
    expect(record.rkey).toBe(key);
    if (i === 0) return expect(record.record.reply).toBeUndefined();
    expect(record.record.reply).toEqual({
      root: { uri: records[0]!.uri, cid: records[0]!.cid },
      parent: { uri: records[i - 1]!.uri, cid: records[i - 1]!.cid },
    });
  });
  expect(post.receipts.map((r: any) => r.provider_object_id)).toEqual(records.map((r) => r.uri));
}

describe("a live create that times out", () => {
  test("item 2 of 3 stored but unanswered: ready and quiet for a minute, then found; item 1 is not sent again", async () => {
    const body = thread("live", 3);
    const before = creates();
    onNth(w.bluesky, "createRecord", 2, () => (w.bluesky.hangAfterReceive = true));
    const created = await publish(w, w.blueskyId, body);
    try {
      await run();
    } finally {
      w.bluesky.hangAfterReceive = false;
    }
    const waiting = await getPost(w, created.id, true);
    expect(waiting).toMatchObject({ state: "ready", retry_safety: "unsafe", attempt_count: 1 });
    expect(waiting.last_error).toMatchObject({
      code: "provider_outcome_unknown",
      retryable: true,
      user_action: "none",
    });
    expect(waiting.receipts.map((r: any) => r.item_index)).toEqual([0]);
    expect(creates() - before).toBe(2);

    // Not before the minute is up: nothing is read, nothing sent.
    const lookUpsBefore = lookUps();
    w.s.clock.set(Date.parse(waiting.next_action_at) - 1000);
    await run();
    expect((await getPost(w, created.id)).state).toBe("ready");
    expect(lookUps()).toBe(lookUpsBefore);

    w.s.clock.set(Date.parse(waiting.next_action_at) + 1000);
    await run();
    const post = await getPost(w, created.id, true);
    expect(post).toMatchObject({ state: "published", retry_safety: "safe", last_error: null });
    expect(post.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
      ["initial", "outcome_unknown"],
      ["recovery", "succeeded"],
    ]);
    expect(creates() - before).toBe(3); // items 1 and 2 once each, then item 3
    expect(lookUps() - lookUpsBefore).toBe(1);
    expectOneRecordPerItem(post, body);
    expect((await outbox(w, created.id)).map((e) => e.type)).toEqual(["post.published"]);
  });

  test("item 2 never reached the PDS (a 504): RecordNotFound, sent again under the same key, one record", async () => {
    const body = thread("absent", 2);
    onNth(w.bluesky, "createRecord", 2, () =>
      w.bluesky.failNext(1, { path: "createRecord", status: 504, body: { error: "GatewayTimeout" } }),
    );
    const created = await publish(w, w.blueskyId, body);
    await run();
    const waiting = await getPost(w, created.id, true);
    expect(waiting).toMatchObject({ state: "ready", retry_safety: "unsafe" });
    expect(waiting.attempts[0]).toMatchObject({ status: "outcome_unknown", provider: { status_code: 504 } });
    expect(recordsOf(body[1]!)).toHaveLength(0);

    w.s.clock.set(Date.parse(waiting.next_action_at) + 1000);
    await run();
    const post = await getPost(w, created.id, true);
    expect(post).toMatchObject({ state: "published", attempt_count: 2 });
    expectOneRecordPerItem(post, body);
  });

  test("a look-up the PDS cannot answer (503) is asked again later; then found", async () => {
    const body = thread("busy", 1);
    const created = await whileHanging(w.bluesky, async () => {
      const made = await publish(w, w.blueskyId, body);
      await run();
      return made;
    });
    const waiting = await getPost(w, created.id);
    w.bluesky.failNext(1, { path: "getRecord", status: 503 });
    w.s.clock.set(Date.parse(waiting.next_action_at) + 1000);
    await run();
    const retrying = await getPost(w, created.id, true);
    expect(retrying).toMatchObject({ state: "ready", retry_safety: "unsafe" });
    expect(retrying.attempts.map((a: any) => a.status)).toEqual(["outcome_unknown", "failed"]);
    expect(recordsOf(body[0]!)).toHaveLength(1);
    const createsBefore = creates();

    w.s.clock.set(Date.parse(retrying.next_action_at) + 1000);
    await run();
    const post = await getPost(w, created.id, true);
    expect(post).toMatchObject({ state: "published" });
    expect(post.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
      ["initial", "outcome_unknown"],
      ["recovery", "failed"],
      ["automatic_retry", "succeeded"],
    ]);
    expect(creates()).toBe(createsBefore);
    expectOneRecordPerItem(post, body);
  });
});

describe("a publisher that died mid-thread (expired lease)", () => {
  /** Another engine claims the post and sends; the fake stores item `hangAt` and never answers; that engine stops. */
  async function claimAndDie(created: { id: string }, hangAt: number, text: string) {
    onNth(w.bluesky, "createRecord", hangAt, () => (w.bluesky.hangAfterReceive = true));
    const other = new PublishingEngine(w.s.herald);
    await other.tick();
    other.stop();
    await waitFor("the create to reach the PDS", () => (recordsOf(text).length > 0 ? true : undefined));
    w.bluesky.hangAfterReceive = false;
    const stuck = await getPost(w, created.id, true);
    expect(stuck.state).toBe("processing");
    return other;
  }

  test("item 2 of 3 was stored: recovered at once, item 2 found, item 3 sent; three records", async () => {
    const body = thread("dead", 3);
    const created = await publish(w, w.blueskyId, body);
    const other = await claimAndDie(created, 2, body[1]!);
    const before = creates();
    w.s.clock.advance(w.s.herald.config.engine.leaseMs + 1000);
    await run();
    const post = await getPost(w, created.id, true);
    expect(post).toMatchObject({ state: "published", attempt_count: 2, last_error: null });
    expect(post.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
      ["initial", "outcome_unknown"],
      ["recovery", "succeeded"],
    ]);
    expect(creates() - before).toBe(1); // item 3 only
    expectOneRecordPerItem(post, body);
    await other.drain(); // the dead run's late timeout writes nothing
    expect(await getPost(w, created.id)).toMatchObject({ state: "published", attempt_count: 2 });
    expectOneRecordPerItem(await getPost(w, created.id), body);
  });
});
