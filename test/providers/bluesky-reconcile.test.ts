// Bluesky record keys (a TID Herald derives from the post and item) and the look-up of an item whose
// createRecord went unanswered (reconcileItem: one getRecord of that key).
import { afterEach, describe, expect, test } from "bun:test";
import { newId } from "../../src/db/ids.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { createBlueskyAdapter } from "../../src/providers/bluesky/adapter.ts";
import { decodeTid, encodeTid, itemRecordKey } from "../../src/providers/bluesky/tid.ts";
import type { DestinationRef, PublishedItem } from "../../src/providers/types.ts";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { expectProviderError, publishInput } from "./support.ts";

const clock = new ManualClock(Date.parse("2026-03-01T10:00:00.000Z"));
const adapter = createBlueskyAdapter({ fetch, clock, timeoutMs: 1000 });
let fake: BlueskyFake;
afterEach(async () => fake?.stop());

async function connect(): Promise<DestinationRef> {
  fake = await startBlueskyFake();
  const account = await adapter.connectWithPassword({
    origin: fake.origin,
    identifier: "alice.test",
    password: "alice-app-pass",
  });
  const { externalId, handle, credentials, limits } = account;
  return { origin: fake.origin, externalId, handle, credentials, limits };
}

/**
 * atproto's TID rules, written out from the spec rather than from tid.ts: 13 characters of the
 * sortable base32 alphabet; as a 64-bit big-endian number the top bit is 0, then 53 bits of
 * microseconds since the epoch and 10 bits of clock id (so the first character is 2-7 or a-j).
 */
function tidParts(tid: string): { micros: bigint; clock: number } {
  const alphabet = "234567abcdefghijklmnopqrstuvwxyz";
  expect(tid).toHaveLength(13);
  expect("234567abcdefghij").toContain(tid[0]!);
  let n = 0n;
  for (const c of tid) {
    expect(alphabet).toContain(c);
    n = n * 32n + BigInt(alphabet.indexOf(c));
  }
  expect(n >> 63n).toBe(0n);
  return { micros: n >> 10n, clock: Number(n % 1024n) };
}

/** A post id's creation millisecond (its ULID's first ten characters). */
function ulidMs(postId: string): bigint {
  const crockford = "0123456789abcdefghjkmnpqrstvwxyz";
  let n = 0n;
  for (const c of postId.slice(postId.indexOf("_") + 1, postId.indexOf("_") + 11))
    n = n * 32n + BigInt(crockford.indexOf(c));
  return n;
}

const keyOf = (postId: string, itemIndex: number) =>
  itemRecordKey({ idempotencyKey: `${postId}.${itemIndex}`, itemIndex });

describe("the record key of an item", () => {
  test("is a valid TID dated at the post's creation, the same on every call", () => {
    const postId = newId("send");
    const key = keyOf(postId, 0);
    const { micros, clock: clockId } = tidParts(key);
    expect(micros / 1000n).toBe(ulidMs(postId));
    expect(clockId).toBeLessThan(1024);
    expect(keyOf(postId, 0)).toBe(key);
    expect(decodeTid(key)).toEqual({ timestampUs: micros, clockId });
    expect(encodeTid(micros, clockId)).toBe(key);
  });

  test("differs for every item of every post made in one burst, and sorts a thread in order", () => {
    const keys = new Set<string>();
    for (let p = 0; p < 2000; p++) {
      const postId = newId("send");
      const thread = [0, 1, 2, 99].map((i) => keyOf(postId, i));
      expect([...thread].sort()).toEqual(thread);
      for (const key of thread) {
        tidParts(key);
        keys.add(key);
      }
    }
    expect(keys.size).toBe(8000);
  });

  test("posts made in different milliseconds sort by creation", async () => {
    const first = newId("send");
    await Bun.sleep(3);
    const second = newId("send");
    expect(keyOf(first, 5) < keyOf(second, 0)).toBe(true);
  });

  test("a key that is not a post's is hashed into a valid, stable TID", () => {
    const a = itemRecordKey({ idempotencyKey: "interop:0", itemIndex: 0 });
    tidParts(a);
    expect(itemRecordKey({ idempotencyKey: "interop:0", itemIndex: 0 })).toBe(a);
    expect(itemRecordKey({ idempotencyKey: "interop:1", itemIndex: 1 })).not.toBe(a);
  });
});

describe("createRecord with Herald's key", () => {
  test("the record is made under the item's key; the receipt names it", async () => {
    const destination = await connect();
    const item = publishInput(destination, { idempotencyKey: `${newId("send")}.0` });
    const published = await adapter.publishItem(item);
    const rkey = itemRecordKey(item);
    expect(fake.records.map((r) => r.rkey)).toEqual([rkey]);
    expect(published.providerObjectId).toBe(`at://${destination.externalId}/app.bsky.feed.post/${rkey}`);
    expect(published.url).toBe(`https://bsky.app/profile/alice.test/post/${rkey}`);
  });

  test("a second create under the same key (the PDS's 500) is outcome_unknown and makes no second record", async () => {
    const destination = await connect();
    const item = publishInput(destination, { idempotencyKey: `${newId("send")}.0` });
    await adapter.publishItem(item);
    const error = await expectProviderError(adapter.publishItem(item), "outcome_unknown");
    expect(error.statusCode).toBe(500);
    expect(fake.records).toHaveLength(1);
  });

  test("the fake refuses a key that is not a TID as the PDS does (400 InvalidRequest)", async () => {
    const destination = await connect();
    const response = await fetch(`${fake.origin}/xrpc/com.atproto.repo.createRecord`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${destination.credentials.accessJwt}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        repo: destination.externalId,
        collection: "app.bsky.feed.post",
        rkey: "kaaaaaaaaaaaa",
        record: { $type: "app.bsky.feed.post", text: "x", createdAt: new Date().toISOString() },
      }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: "InvalidRequest",
      message: 'Invalid record key for app.bsky.feed.post: Invalid TID string (got "kaaaaaaaaaaaa") at $',
    });
  });
});

describe("reconcileItem: what became of an unanswered create", () => {
  const since = clock.now();

  test("the record exists (the create was received, never answered): published, the receipt publishItem gives", async () => {
    const destination = await connect();
    const item = publishInput(destination, { text: "maybe", idempotencyKey: `${newId("send")}.0` });
    fake.hangAfterReceive = true;
    const hasty = createBlueskyAdapter({ fetch, clock, timeoutMs: 150 });
    await expectProviderError(hasty.publishItem(item), "outcome_unknown");
    fake.hangAfterReceive = false;
    const found = await adapter.reconcileItem!({ item, since });
    const record = fake.records[0]!;
    expect(found).toEqual({
      state: "published",
      item: {
        providerObjectId: record.uri,
        url: `https://bsky.app/profile/alice.test/post/${record.rkey}`,
        extra: { uri: record.uri, cid: record.cid },
        provider: { operation: "com.atproto.repo.getRecord", requestId: null, statusCode: 200 },
      },
    });
  });

  test("a reply is found with the strong ref the next item needs", async () => {
    const destination = await connect();
    const postId = newId("send");
    const root = await adapter.publishItem(publishInput(destination, { idempotencyKey: `${postId}.0` }));
    const reply = publishInput(destination, {
      text: "second",
      itemIndex: 1,
      root,
      parent: root,
      idempotencyKey: `${postId}.1`,
    });
    const published = await adapter.publishItem(reply);
    const found = await adapter.reconcileItem!({ item: reply, since });
    expect(found.state).toBe("published");
    const item = (found as { item: PublishedItem }).item;
    expect([item.providerObjectId, item.url, item.extra]).toEqual([
      published.providerObjectId,
      published.url,
      published.extra,
    ]);
  });

  test("RecordNotFound: absent; sending again makes exactly one record", async () => {
    const destination = await connect();
    const item = publishInput(destination, { idempotencyKey: `${newId("send")}.0` });
    const found = await adapter.reconcileItem!({ item, since });
    expect(found).toEqual({
      state: "absent",
      reason: `the PDS has no record at://${destination.externalId}/app.bsky.feed.post/${itemRecordKey(item)}`,
    });
    await adapter.publishItem(item);
    expect(fake.records).toHaveLength(1);
  });

  test("the key holds something else (other text, or not the thread's reply): unknown, with the reason", async () => {
    const destination = await connect();
    const postId = newId("send");
    await adapter.publishItem(
      publishInput(destination, { text: "what was sent", idempotencyKey: `${postId}.0` }),
    );
    const other = publishInput(destination, { text: "what Herald has", idempotencyKey: `${postId}.0` });
    const found = await adapter.reconcileItem!({ item: other, since });
    expect(found).toEqual({
      state: "unknown",
      reason: `the record ${fake.records[0]!.uri} under Herald's key holds other text`,
    });

    const root = await adapter.publishItem(
      publishInput(destination, { idempotencyKey: `${newId("send")}.0` }),
    );
    const asReply = publishInput(destination, {
      text: "what was sent",
      root,
      parent: root,
      idempotencyKey: `${postId}.0`,
    });
    expect(await adapter.reconcileItem!({ item: asReply, since })).toMatchObject({
      state: "unknown",
      reason: expect.stringContaining("does not reply to the thread's previous item") as unknown as string,
    });
  });

  test("a PDS that cannot answer (503, 502) is transient: the engine asks again later", async () => {
    const destination = await connect();
    const item = publishInput(destination, { idempotencyKey: `${newId("send")}.0` });
    for (const status of [503, 502]) {
      fake.failNext(1, { path: "getRecord", status });
      const error = await expectProviderError(adapter.reconcileItem!({ item, since }), "transient");
      expect(error.statusCode).toBe(status);
    }
  });

  test("the read needs no session: expired tokens do not stand in the way", async () => {
    const destination = await connect();
    const item = publishInput(destination, { idempotencyKey: `${newId("send")}.0` });
    await adapter.publishItem(item);
    fake.expireAccessTokens();
    expect((await adapter.reconcileItem!({ item, since })).state).toBe("published");
  });

  test("any other refusal of the read is unknown, with the PDS's message", async () => {
    const destination = await connect();
    const item = publishInput(destination, { idempotencyKey: `${newId("send")}.0` });
    fake.failNext(1, {
      path: "getRecord",
      status: 400,
      body: { error: "RepoDeactivated", message: "Repo has been deactivated" },
    });
    expect(await adapter.reconcileItem!({ item, since })).toEqual({
      state: "unknown",
      reason:
        `reading at://${destination.externalId}/app.bsky.feed.post/${itemRecordKey(item)} ` +
        "answered HTTP 400 (Repo has been deactivated)",
    });
  });
});
