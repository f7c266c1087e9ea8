// Every failure kind of the engine, on Mastodon and Bluesky: the post's state and fields through the
// API, the attempts, the events outbox, and what the fake network received.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engineOf } from "../../src/db/engine.ts";
import { MAX_AUTOMATIC_RETRIES } from "../../src/modules/publishing/failures.ts";
import type { FailSpec } from "../fakes/shared.ts";
import { expectProblem } from "../helpers/problems.ts";
import { createPosts, getPost } from "./helpers.ts";
import { itemRecordKey } from "../../src/providers/bluesky/tid.ts";
import {
  destinationOf,
  failNth,
  outbox,
  posted,
  publish,
  replaceBlueskyRecord,
  startEngineWorld,
  type EngineWorld,
  whileHanging,
} from "./engine-helpers.ts";

// One-second provider timeout: the hanging-create cases answer quickly.
const ENV = { HERALD_PROVIDER_TIMEOUT_SECONDS: "1" };
const CREATE = { mastodon: "/api/v1/statuses", bluesky: "createRecord" } as const;
type Channel = keyof typeof CREATE;

let w: EngineWorld;
beforeAll(async () => {
  w = await startEngineWorld(ENV);
});
afterAll(async () => {
  await w.stop();
});

let texts = 0;
const unique = (label: string) => `${label} #${++texts}`;
/** Items of a channel's fake holding `text`. */
function onNetwork(v: EngineWorld, channel: Channel, text: string): number {
  return channel === "mastodon"
    ? v.mastodon.statuses.filter((s) => s.text === text).length
    : v.bluesky.records.filter((r) => r.record.text === text).length;
}
function fakeOf(v: EngineWorld, channel: Channel) {
  return channel === "mastodon" ? v.mastodon : v.bluesky;
}
const run = (v: EngineWorld = w) => v.s.server.engine.runUntilIdle();
/** Moves the clock 1 s past a post's next_action_at. */
function passNextAction(v: EngineWorld, post: any): void {
  v.s.clock.set(Date.parse(post.next_action_at) + 1000);
}

describe("transient failures are retried automatically with backoff", () => {
  const cases: { name: string; channel: Channel; spec: FailSpec }[] = [
    { name: "Mastodon 503", channel: "mastodon", spec: { status: 503 } },
    { name: "Mastodon 500 (the create is idempotent)", channel: "mastodon", spec: { status: 500 } },
    { name: "Bluesky 503", channel: "bluesky", spec: { status: 503 } },
    { name: "Bluesky 502", channel: "bluesky", spec: { status: 502 } },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const text = unique(c.name);
      fakeOf(w, c.channel).failNext(1, { path: CREATE[c.channel], ...c.spec });
      const created = await publish(w, destinationOf(w, c.channel), [text]);
      const failedAt = w.s.clock.now();
      await run();
      const retrying = await getPost(w, created.id, true);
      expect(retrying).toMatchObject({
        state: "ready",
        attempt_count: 1,
        terminal: false,
        action_required: false,
        deferred: null,
      });
      expect(retrying.last_error).toMatchObject({
        retryable: true,
        retry_safety: "safe",
        user_action: "retry",
      });
      const delay = Date.parse(retrying.next_action_at) - failedAt;
      expect(delay).toBeGreaterThanOrEqual(12_000); // 15 s ± 20 %: the first retry within 30 s
      expect(delay).toBeLessThanOrEqual(18_000);
      expect(retrying.attempts).toHaveLength(1);
      expect(retrying.attempts[0]).toMatchObject({
        number: 1,
        trigger: "initial",
        status: "failed",
        provider: { status_code: c.spec.status },
      });
      expect(onNetwork(w, c.channel, text)).toBe(0);

      w.s.clock.set(failedAt + delay - 1000); // not yet due: nothing happens
      await run();
      expect((await getPost(w, created.id)).state).toBe("ready");

      passNextAction(w, retrying);
      await run();
      const done = await getPost(w, created.id, true);
      expect(done).toMatchObject({ state: "published", attempt_count: 2, last_error: null, terminal: true });
      expect(done.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
        ["initial", "failed"],
        ["automatic_retry", "succeeded"],
      ]);
      expect(onNetwork(w, c.channel, text)).toBe(1);
      expect((await outbox(w, created.id)).map((e) => [e.type, e.payload.state])).toEqual([
        ["post.published", "published"],
      ]);
    });
  }

  test(`after ${MAX_AUTOMATIC_RETRIES} automatic retries the post is failed, with a post.failed event`, async () => {
    const text = unique("gives up");
    w.mastodon.failNext(MAX_AUTOMATIC_RETRIES + 1, { path: CREATE.mastodon, status: 503 });
    const created = await publish(w, w.destinationId, [text]);
    const delays: number[] = [];
    for (let attempt = 1; attempt <= MAX_AUTOMATIC_RETRIES; attempt++) {
      const before = w.s.clock.now();
      await run();
      const post = await getPost(w, created.id);
      expect(post).toMatchObject({ state: "ready", attempt_count: attempt });
      delays.push(Date.parse(post.next_action_at) - before);
      passNextAction(w, post);
    }
    await run();
    const failed = await getPost(w, created.id, true);
    expect(failed).toMatchObject({
      state: "failed",
      terminal: true,
      action_required: false,
      attempt_count: MAX_AUTOMATIC_RETRIES + 1,
      next_action_at: null,
    });
    expect(failed.available_actions).toEqual(expect.arrayContaining(["retry", "reschedule"]));
    expect(failed.last_error.message).toContain(`gave up after ${MAX_AUTOMATIC_RETRIES} automatic retries`);
    expect(failed.attempts.map((a: any) => a.trigger)).toEqual([
      "initial",
      ...Array(MAX_AUTOMATIC_RETRIES).fill("automatic_retry"),
    ]);
    expect(failed.attempts.every((a: any) => a.status === "failed")).toBe(true);
    expect(delays[0]).toBeLessThanOrEqual(30_000);
    for (let i = 1; i < delays.length; i++) expect(delays[i]!).toBeGreaterThan(delays[i - 1]!); // backoff grows
    expect(
      posted(w.mastodon, CREATE.mastodon).filter((r) => r.headers["idempotency-key"] === `${created.id}.0`),
    ).toHaveLength(MAX_AUTOMATIC_RETRIES + 1);
    expect(onNetwork(w, "mastodon", text)).toBe(0);
    const events = await outbox(w, created.id);
    expect(events.map((e) => [e.type, e.post_id, e.payload.state])).toEqual([
      ["post.failed", created.id, "failed"],
    ]);
    expect(events[0]!.payload.error.code).toBe("provider_unavailable");
  });
});

describe("429 waits for the network's reset time", () => {
  const cases: { channel: Channel; headers: (resetMs: number) => Record<string, string> }[] = [
    // Mastodon: ISO 8601 with microseconds; Bluesky: unix seconds.
    {
      channel: "mastodon",
      headers: (ms) => ({
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": new Date(ms).toISOString().replace("Z", "123Z"),
      }),
    },
    {
      channel: "bluesky",
      headers: (ms) => ({ "ratelimit-remaining": "0", "ratelimit-reset": String(ms / 1000) }),
    },
  ];
  for (const c of cases) {
    test(c.channel, async () => {
      const text = unique(`429 ${c.channel}`);
      const reset = Math.ceil((w.s.clock.now() + 10 * 60_000) / 1000) * 1000;
      fakeOf(w, c.channel).failNext(1, { path: CREATE[c.channel], status: 429, headers: c.headers(reset) });
      const created = await publish(w, destinationOf(w, c.channel), [text]);
      await run();
      const deferred = await getPost(w, created.id, true);
      const until = new Date(reset).toISOString();
      expect(deferred).toMatchObject({
        state: "ready",
        attempt_count: 1,
        next_action_at: until,
        deferred: { reason: "provider_rate_limit", until },
      });
      expect(deferred.last_error.retryable).toBe(true);
      expect(deferred.attempts[0]).toMatchObject({ status: "failed", provider: { status_code: 429 } });
      w.s.clock.advance(60_000); // past the usual backoff, before the reset: still waiting
      await run();
      expect((await getPost(w, created.id)).state).toBe("ready");
      w.s.clock.set(reset + 1000);
      await run();
      expect(await getPost(w, created.id)).toMatchObject({
        state: "published",
        deferred: null,
        attempt_count: 2,
      });
      expect(onNetwork(w, c.channel, text)).toBe(1);
    });
  }
});

describe("a thread whose second item fails resumes at the second item", () => {
  for (const channel of ["mastodon", "bluesky"] as Channel[]) {
    test(channel, async () => {
      const body = [unique("t1"), unique("t2"), unique("t3")];
      const fake = fakeOf(w, channel);
      const before = posted(fake, CREATE[channel]).length;
      failNth(fake, CREATE[channel], 2, { status: 503 });
      const created = await publish(w, destinationOf(w, channel), body);
      await run();
      const half = await getPost(w, created.id);
      expect(half).toMatchObject({ state: "ready", attempt_count: 1 });
      expect(half.receipts.map((r: any) => r.item_index)).toEqual([0]);
      passNextAction(w, half);
      await run();
      const done = await getPost(w, created.id);
      expect(done).toMatchObject({ state: "published", attempt_count: 2 });
      expect(done.receipts.map((r: any) => r.item_index)).toEqual([0, 1, 2]);
      expect(posted(fake, CREATE[channel]).length - before).toBe(4); // t1, t2 (503), t2, t3
      for (const text of body) expect(onNetwork(w, channel, text)).toBe(1);
      if (channel === "mastodon") {
        const [a, b, c] = body.map((t) => w.mastodon.statuses.find((s) => s.text === t)!);
        expect([a!.inReplyToId, b!.inReplyToId, c!.inReplyToId]).toEqual([null, a!.id, b!.id]);
        expect(done.receipts.map((r: any) => r.provider_object_id)).toEqual([a!.id, b!.id, c!.id]);
      } else {
        const [a, b, c] = body.map((t) => w.bluesky.records.find((r) => r.record.text === t)!);
        expect(a!.record.reply).toBeUndefined();
        expect(b!.record.reply).toEqual({
          root: { uri: a!.uri, cid: a!.cid },
          parent: { uri: a!.uri, cid: a!.cid },
        });
        expect(c!.record.reply).toEqual({
          root: { uri: a!.uri, cid: a!.cid },
          parent: { uri: b!.uri, cid: b!.cid },
        });
      }
    });
  }
});

describe("credentials", () => {
  test("Bluesky: an expired access token is refreshed once, stored, and the post goes out", async () => {
    const count = (nsid: string) => posted(w.bluesky, nsid).length;
    const [refreshes, logins, creates] = [
      count("refreshSession"),
      count("createSession"),
      count(CREATE.bluesky),
    ];
    w.bluesky.expireAccessTokens();
    const text = unique("expired");
    const created = await publish(w, w.blueskyId, [text]);
    await run();
    expect(await getPost(w, created.id)).toMatchObject({
      state: "published",
      attempt_count: 1,
      last_error: null,
    });
    expect(count("refreshSession") - refreshes).toBe(1);
    expect(count("createSession") - logins).toBe(0);
    expect(count(CREATE.bluesky) - creates).toBe(2); // ExpiredToken, then the same item with the new token
    expect(onNetwork(w, "bluesky", text)).toBe(1);
    // The rotated session was stored: the next post needs no refresh and no login.
    const next = await publish(w, w.blueskyId, [unique("after refresh")]);
    await run();
    expect((await getPost(w, next.id)).state).toBe("published");
    expect(count("refreshSession") - refreshes).toBe(1);
    expect(count("createSession") - logins).toBe(0);
    const destination = await w.s.request("GET", `/v1/workspaces/${w.ws}/destinations/${w.blueskyId}`);
    expect(destination.body.status).toBe("ready");
  });

  test("Bluesky: a revoked session whose refresh fails is recovered with one login using the app password", async () => {
    const count = (nsid: string) => posted(w.bluesky, nsid).length;
    const [refreshes, logins] = [count("refreshSession"), count("createSession")];
    w.bluesky.revokeTokens();
    const created = await publish(w, w.blueskyId, [unique("revoked session")]);
    await run();
    expect(await getPost(w, created.id)).toMatchObject({ state: "published", attempt_count: 1 });
    expect([count("refreshSession") - refreshes, count("createSession") - logins]).toEqual([1, 1]);
  });

  const revoked: { channel: Channel; revoke: (v: EngineWorld) => void }[] = [
    { channel: "mastodon", revoke: (v) => v.mastodon.revokeTokens() },
    {
      channel: "bluesky",
      revoke: (v) => {
        v.bluesky.revokeTokens();
        v.bluesky.revokeAppPassword("alice.test");
      },
    },
  ];
  for (const c of revoked) {
    test(`${c.channel}: a revoked grant needs reauthorization; the destination turns unavailable`, async () => {
      const v = await startEngineWorld(ENV); // this breaks the destination: a world of its own
      try {
        const dest = destinationOf(v, c.channel);
        const later = await publish(
          v,
          dest,
          ["due in an hour"],
          new Date(v.s.clock.now() + 3600_000).toISOString(),
        );
        c.revoke(v);
        const created = await publish(v, dest, ["revoked"]);
        await run(v);
        const post = await getPost(v, created.id, true);
        expect(post).toMatchObject({
          state: "needs-attention",
          action_required: true,
          terminal: false,
          attempt_count: 1,
          retry_safety: "safe",
        });
        expect(post.last_error).toMatchObject({
          code: "destination_reauthorization_required",
          user_action: "reauthorize_destination",
        });
        expect(post.attempts[0].status).toBe("failed");
        expect((await outbox(v, created.id)).map((e) => [e.type, e.payload.state])).toEqual([
          ["post.needs-attention", "needs-attention"],
        ]);
        const destination = await v.s.request("GET", `/v1/workspaces/${v.ws}/destinations/${dest}`);
        expect(destination.body).toMatchObject({
          status: "unavailable",
          unavailable_reason: "reauthorization_required",
        });
        expectProblem(
          await createPosts(v, {
            when: "now",
            confirmed: true,
            group: "after-revoke",
            posts: [{ destination_id: dest, body: ["no"] }],
          }),
          422,
          "public_unpublishable",
          ["/posts/0/destination_id"],
        );
        // A post already scheduled there needs attention at its time without calling the network.
        const calls = posted(fakeOf(v, c.channel), CREATE[c.channel]).length;
        v.s.clock.advance(3600_000);
        await run(v);
        const due = await getPost(v, later.id);
        expect(due).toMatchObject({
          state: "needs-attention",
          last_error: { user_action: "reauthorize_destination" },
        });
        expect(posted(fakeOf(v, c.channel), CREATE[c.channel]).length).toBe(calls);
      } finally {
        await v.stop();
      }
    });
  }
});

describe("rejected content fails with the network's message", () => {
  const cases: { channel: Channel; spec: FailSpec; message: string }[] = [
    {
      channel: "mastodon",
      spec: {
        status: 422,
        body: { error: "Validation failed: Text contains a word this instance does not allow" },
      },
      message: "Validation failed: Text contains a word this instance does not allow",
    },
    {
      channel: "bluesky",
      spec: {
        status: 400,
        body: { error: "InvalidRequest", message: "Invalid app.bsky.feed.post record: grapheme too big" },
      },
      message: "Invalid app.bsky.feed.post record: grapheme too big",
    },
  ];
  for (const c of cases) {
    test(c.channel, async () => {
      fakeOf(w, c.channel).failNext(1, { path: CREATE[c.channel], ...c.spec });
      const created = await publish(w, destinationOf(w, c.channel), [unique("rejected")]);
      await run();
      const post = await getPost(w, created.id, true);
      expect(post).toMatchObject({ state: "failed", terminal: true, attempt_count: 1, next_action_at: null });
      expect(post.last_error).toMatchObject({
        code: "provider_rejected",
        retryable: false,
        retry_safety: "not_retryable",
        user_action: "edit_post",
      });
      expect(post.last_error.message).toContain(c.message);
      expect(post.attempts[0]).toMatchObject({
        status: "failed",
        retry_safety: "not_retryable",
        provider: { status_code: c.spec.status },
      });
      expect(
        (await outbox(w, created.id)).map((e) => [e.type, e.payload.state, e.payload.error.message]),
      ).toEqual([["post.failed", "failed", post.last_error.message]]);
      w.s.clock.advance(3600_000); // nothing retries a rejection by itself
      await run();
      expect((await getPost(w, created.id)).attempt_count).toBe(1);
    });
  }
});

describe("outcome unknown", () => {
  test("Bluesky: a create received but never answered is looked up a minute later; the record found is the receipt", async () => {
    const text = unique("hang");
    const created = await whileHanging(w.bluesky, async () => {
      const made = await publish(w, w.blueskyId, [text]);
      await run();
      return made;
    });
    const waiting = await getPost(w, created.id, true);
    expect(waiting).toMatchObject({ state: "ready", retry_safety: "unsafe", attempt_count: 1 });
    expect(waiting.last_error).toMatchObject({ code: "provider_outcome_unknown", user_action: "none" });
    expect(waiting.last_error.message).toContain("Herald will look for it on the network");
    expect(waiting.attempts[0]).toMatchObject({ status: "outcome_unknown", retry_safety: "unsafe" });
    expect(Date.parse(waiting.next_action_at) - w.s.clock.now()).toBeGreaterThanOrEqual(60_000);
    expect(onNetwork(w, "bluesky", text)).toBe(1); // it did reach the network
    const creates = posted(w.bluesky, CREATE.bluesky).length;

    passNextAction(w, waiting);
    await run();
    const done = await getPost(w, created.id, true);
    expect(done).toMatchObject({ state: "published", retry_safety: "safe", last_error: null });
    expect(done.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
      ["initial", "outcome_unknown"],
      ["recovery", "succeeded"],
    ]);
    const record = w.bluesky.records.find((r) => r.record.text === text)!;
    expect(onNetwork(w, "bluesky", text)).toBe(1);
    expect(posted(w.bluesky, CREATE.bluesky).length).toBe(creates); // found, not sent again
    expect(done.receipts.map((r: any) => r.provider_object_id)).toEqual([record.uri]);
    expect((await outbox(w, created.id)).map((e) => e.type)).toEqual(["post.published"]);
  });

  test("Bluesky: a look-up that cannot tell needs attention; a retry needs acknowledging, makes no 2nd record", async () => {
    const text = unique("replaced");
    const created = await whileHanging(w.bluesky, async () => {
      const made = await publish(w, w.blueskyId, [text]);
      await run();
      return made;
    });
    await replaceBlueskyRecord(w.bluesky, created.id, "edited by another app");
    passNextAction(w, await getPost(w, created.id));
    await run();
    const post = await getPost(w, created.id, true);
    expect(post).toMatchObject({
      state: "needs-attention",
      action_required: true,
      retry_safety: "unsafe",
      attempt_count: 2,
    });
    expect(post.last_error).toMatchObject({
      code: "provider_outcome_unknown",
      retryable: true,
      retry_safety: "unsafe",
      user_action: "inspect_resource",
    });
    expect(post.last_error.message).toContain("could not tell whether Bluesky made it");
    expect(post.last_error.message).toContain("under Herald's key holds other text");
    expect(post.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
      ["initial", "outcome_unknown"],
      ["recovery", "outcome_unknown"],
    ]);
    expect((await outbox(w, created.id)).map((e) => [e.type, e.payload.state])).toEqual([
      ["post.needs-attention", "needs-attention"],
    ]);

    const path = `/v1/workspaces/${w.ws}/posts/${created.id}/retry`;
    expectProblem(await w.s.request("POST", path, { body: { confirmed: true } }), 409, "public_conflict", [
      "/acknowledge_duplicate_risk",
    ]);
    expectProblem(
      await w.s.request("POST", path, { body: { confirmed: true, acknowledge_duplicate_risk: false } }),
      409,
      "public_conflict",
    );
    const retried = await w.s.request("POST", path, {
      body: { confirmed: true, acknowledge_duplicate_risk: true },
    });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ state: "ready", retry_safety: "safe" });
    await run();
    // The key is taken (the PDS's 500): an unknown outcome again, looked up, never a second record.
    const again = await getPost(w, created.id, true);
    expect(again).toMatchObject({ state: "ready", retry_safety: "unsafe" });
    expect(again.attempts.at(-1)).toMatchObject({
      trigger: "manual_retry",
      status: "outcome_unknown",
      provider: { status_code: 500 },
    });
    const key = itemRecordKey({ idempotencyKey: `${created.id}.0`, itemIndex: 0 });
    expect(w.bluesky.records.filter((r) => r.rkey === key)).toHaveLength(1);
    expect(onNetwork(w, "bluesky", text)).toBe(0);
  });

  test("Bluesky: a 500 on create may have been acted on: looked up, not found (RecordNotFound), sent again once", async () => {
    const text = unique("bsky 500");
    w.bluesky.failNext(1, { path: CREATE.bluesky, status: 500 });
    const created = await publish(w, w.blueskyId, [text]);
    await run();
    const waiting = await getPost(w, created.id, true);
    expect(waiting).toMatchObject({ state: "ready", retry_safety: "unsafe" });
    expect(waiting.attempts[0]).toMatchObject({ status: "outcome_unknown", provider: { status_code: 500 } });
    passNextAction(w, waiting);
    await run();
    const done = await getPost(w, created.id, true);
    expect(done).toMatchObject({ state: "published", attempt_count: 2 });
    expect(done.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
      ["initial", "outcome_unknown"],
      ["recovery", "succeeded"],
    ]);
    const records = w.bluesky.records.filter((r) => r.record.text === text);
    expect(records).toHaveLength(1);
    expect(done.receipts.map((r: any) => r.provider_object_id)).toEqual([records[0]!.uri]);
  });

  test("Mastodon: an unanswered create is retried with the same Idempotency-Key, so the status exists once", async () => {
    const text = unique("mastodon hang");
    const created = await whileHanging(w.mastodon, async () => {
      const made = await publish(w, w.destinationId, [text]);
      await run();
      return made;
    });
    const waiting = await getPost(w, created.id);
    expect(waiting).toMatchObject({
      state: "ready",
      retry_safety: "safe",
      attempt_count: 1,
      last_error: { retryable: true },
    });
    passNextAction(w, waiting);
    await run();
    expect(await getPost(w, created.id)).toMatchObject({ state: "published", attempt_count: 2 });
    const keys = posted(w.mastodon, CREATE.mastodon)
      .map((r) => r.headers["idempotency-key"])
      .filter((k) => k === `${created.id}.0`);
    expect(keys).toHaveLength(2);
    expect(onNetwork(w, "mastodon", text)).toBe(1);
  });
});

test("events carry the post id and state (published, failed, needs-attention)", async () => {
  const all = await engineOf(w.s.herald.db).query<{ type: string; post_id: string; payload: string }>(
    "SELECT type, post_id, payload FROM events_outbox",
  );
  const types = new Set(all.map((e) => e.type));
  for (const t of ["post.published", "post.failed", "post.needs-attention"]) expect(types.has(t)).toBe(true);
  for (const e of all) {
    const payload = JSON.parse(e.payload);
    expect(payload).toMatchObject({ id: e.post_id, object: "post" });
    expect(`post.${payload.state}`).toBe(e.type);
  }
});
