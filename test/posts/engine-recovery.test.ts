// Recovery after a dead publisher (in-process and a real SIGKILL of `herald serve`), missed posts,
// and the publishing pace (daily cap, minimum spacing).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PublishingEngine } from "../../src/modules/publishing/engine.ts";
import { getPost, startPostsWorld, type PostsWorld } from "./helpers.ts";
import {
  apiClient,
  bootstrapCli,
  connectMastodonVia,
  onNth,
  outbox,
  posted,
  publish,
  startEngineWorld,
  startHerald,
  startMastodonFake,
  tempDataDir,
  waitFor,
  type EngineWorld,
  type HeraldProcess,
} from "./engine-helpers.ts";

const HOUR = 3600_000;
// A short lease (HERALD_LEASE_SECONDS) so the restarted server examines the dead one's post soon.
const CRASH_LEASE_SECONDS = 10;
const MINUTE = 60_000;

describe("a post whose publisher died (expired lease, attempt left started)", () => {
  let w: EngineWorld;
  beforeAll(async () => {
    w = await startEngineWorld({ HERALD_PROVIDER_TIMEOUT_SECONDS: "2" });
  });
  afterAll(async () => {
    await w.stop();
  });

  /**
   * Another engine on the same database claims the post and sends the create; the fake stores it and
   * never answers; that engine then stops (no more ticks, no lease renewal), like a dead process.
   */
  async function claimAndDie(created: { id: string }, arrived: () => boolean): Promise<PublishingEngine> {
    const other = new PublishingEngine(w.s.herald);
    await other.tick();
    other.stop();
    await waitFor("the create to reach the network", () => (arrived() ? true : undefined));
    const stuck = await getPost(w, created.id, true);
    expect(stuck.state).toBe("processing");
    expect(stuck.attempts.map((a: any) => a.status)).toEqual(["started"]);
    return other;
  }

  test("Bluesky (its own record key): re-queued as recovery; the key is read back, the record is the receipt", async () => {
    const created = await publish(w, w.blueskyId, ["maybe posted"]);
    w.bluesky.hangAfterReceive = true;
    const other = await claimAndDie(created, () =>
      w.bluesky.records.some((r) => r.record.text === "maybe posted"),
    );
    // Within the lease the main engine leaves it alone.
    await w.s.server.engine.tick();
    expect((await getPost(w, created.id)).state).toBe("processing");
    w.s.clock.advance(w.s.herald.config.engine.leaseMs + 1000);
    await w.s.server.engine.runUntilIdle();
    w.bluesky.hangAfterReceive = false;
    const post = await getPost(w, created.id, true);
    const records = w.bluesky.records.filter((r) => r.record.text === "maybe posted");
    expect(records).toHaveLength(1);
    expect(post).toMatchObject({ state: "published", attempt_count: 2, last_error: null });
    expect(post.receipts.map((r: any) => [r.provider_object_id, r.url])).toEqual([
      [records[0]!.uri, `https://bsky.app/profile/alice.test/post/${records[0]!.rkey}`],
    ]);
    expect(post.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
      ["initial", "outcome_unknown"],
      ["recovery", "succeeded"],
    ]);
    expect(post.attempts[0]).toMatchObject({
      retry_safety: "unsafe",
      error: { code: "publishing_interrupted" },
    });
    expect(posted(w.bluesky, "createRecord").filter((r) => r.path.endsWith("createRecord"))).toHaveLength(1);
    expect((await outbox(w, created.id)).map((e) => [e.type, e.payload.state])).toEqual([
      ["post.published", "published"],
    ]);
    // The dead run's late timeout writes nothing: the lease is no longer its own.
    await other.drain();
    expect(await getPost(w, created.id, true)).toMatchObject({ state: "published", attempt_count: 2 });
    expect(w.bluesky.records.filter((r) => r.record.text === "maybe posted")).toHaveLength(1);
  });

  test("Mastodon (idempotent create): re-queued with trigger recovery; the same Idempotency-Key leaves one status per item", async () => {
    const body = ["r1", "r2", "r3"];
    const created = await publish(w, w.destinationId, body);
    onNth(w.mastodon, "/api/v1/statuses", 2, () => (w.mastodon.hangAfterReceive = true)); // item 2 is stored, never answered
    const other = await claimAndDie(created, () => w.mastodon.statuses.some((s) => s.text === "r2"));
    w.mastodon.hangAfterReceive = false;
    expect((await getPost(w, created.id)).receipts.map((r: any) => r.item_index)).toEqual([0]);
    w.s.clock.advance(w.s.herald.config.engine.leaseMs + 1000);
    await w.s.server.engine.runUntilIdle();
    const post = await getPost(w, created.id, true);
    expect(post).toMatchObject({ state: "published", attempt_count: 2, retry_safety: "safe" });
    expect(post.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
      ["initial", "failed"],
      ["recovery", "succeeded"],
    ]);
    expect(post.attempts[0].error.code).toBe("publishing_interrupted");
    const statuses = body.map((text) => w.mastodon.statuses.filter((s) => s.text === text));
    expect(statuses.map((s) => s.length)).toEqual([1, 1, 1]);
    const [a, b, c] = statuses.map((s) => s[0]!);
    expect([b!.inReplyToId, c!.inReplyToId]).toEqual([a!.id, b!.id]);
    expect(post.receipts.map((r: any) => r.provider_object_id)).toEqual([a!.id, b!.id, c!.id]);
    expect(
      posted(w.mastodon, "/api/v1/statuses").filter(
        (r) => r.headers["idempotency-key"] === `${created.id}.1`,
      ),
    ).toHaveLength(2);
    await other.drain();
    expect(await getPost(w, created.id)).toMatchObject({ state: "published", attempt_count: 2 });
  });
});

test("a real crash: SIGKILL of `herald serve` mid-thread, restart, no item twice", async () => {
  const data = await tempDataDir();
  const fake = await startMastodonFake({ mediaProcessingPolls: 0 });
  let server: HeraldProcess | null = null;
  try {
    const { workspaceId, apiKey } = await bootstrapCli(data);
    server = await startHerald(data, { HERALD_LEASE_SECONDS: String(CRASH_LEASE_SECONDS) });
    const api = apiClient(() => server!.url, apiKey);
    const destinationId = await connectMastodonVia(api, workspaceId, fake);
    const body = ["crash 1", "crash 2", "crash 3", "crash 4", "crash 5"];
    fake.delayMs = 400;
    const created = await api(
      "POST",
      `/workspaces/${workspaceId}/posts`,
      { when: "now", confirmed: true, group: "crash", posts: [{ destination_id: destinationId, body }] },
      { "idempotency-key": "crash-thread" },
    );
    expect(created.status).toBe(202);
    const postPath = `/workspaces/${workspaceId}/posts/${created.body.posts[0].id}?include=attempts`;
    // Two statuses exist and the third item is on its way (received, not yet answered): kill.
    await waitFor(
      "the third create",
      () => (posted(fake, "/api/v1/statuses").length >= 3 ? true : undefined),
      20_000,
      5,
    );
    await server.kill("SIGKILL");
    expect(fake.statuses.length).toBe(2);
    fake.delayMs = 0;
    server = await startHerald(data, { HERALD_LEASE_SECONDS: String(CRASH_LEASE_SECONDS) });
    // The lease of the dead process has not expired: the restarted server must not re-run the post yet.
    const early = await api("GET", postPath);
    expect(early.body.state).toBe("processing");
    expect(early.body.attempts.map((a: any) => a.status)).toEqual(["started"]);
    const requestsAfterRestart = posted(fake, "/api/v1/statuses").length;
    const post = await waitFor(
      "the post to be published or need attention",
      async () => {
        const r = await api("GET", postPath);
        return r.body.state === "published" || r.body.state === "needs-attention" ? r.body : undefined;
      },
      CRASH_LEASE_SECONDS * 1000 + 30_000,
      250,
    );
    expect({ state: post.state, error: post.last_error }).toEqual({ state: "published", error: null });
    const texts = fake.statuses.map((s) => s.text);
    expect(texts).toEqual(body); // each once, in order
    for (let i = 1; i < fake.statuses.length; i++)
      expect(fake.statuses[i]!.inReplyToId).toBe(fake.statuses[i - 1]!.id);
    expect(post.receipts.map((r: any) => r.provider_object_id)).toEqual(fake.statuses.map((s) => s.id));
    expect(post.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
      ["initial", "failed"],
      ["recovery", "succeeded"],
    ]);
    const postId = created.body.posts[0].id;
    // Item 3 was sent before the kill and again after it, with the same key: the network kept one.
    expect(
      posted(fake, "/api/v1/statuses").filter((r) => r.headers["idempotency-key"] === `${postId}.2`),
    ).toHaveLength(2);
    const keys = posted(fake, "/api/v1/statuses")
      .slice(requestsAfterRestart)
      .map((r) => r.headers["idempotency-key"]);
    expect(new Set(keys).size).toBe(keys.length); // after the restart each item was sent at most once
  } catch (error) {
    if (server) console.error(server.log());
    throw error;
  } finally {
    await server?.kill();
    await fake.stop();
    await data.cleanup();
  }
}, 120_000);

describe("missed: a scheduled post found too late is not sent late", () => {
  const worlds = new Map<string, PostsWorld>();
  afterAll(async () => {
    for (const w of worlds.values()) await w.stop();
  });
  const world = async (tolerance: string | null) => {
    const key = tolerance ?? "default";
    if (!worlds.has(key))
      worlds.set(key, await startPostsWorld(tolerance ? { HERALD_MISSED_TOLERANCE_MINUTES: tolerance } : {}));
    return worlds.get(key)!;
  };
  const cases: { tolerance: string | null; lateMinutes: number; missed: boolean }[] = [
    { tolerance: null, lateMinutes: 31, missed: true },
    { tolerance: null, lateMinutes: 29, missed: false },
    { tolerance: "5", lateMinutes: 6, missed: true },
    { tolerance: "5", lateMinutes: 4, missed: false },
  ];
  for (const c of cases) {
    test(`${c.lateMinutes} min late with tolerance ${c.tolerance ?? "30 (default)"} → ${c.missed ? "missed" : "published"}`, async () => {
      const w = await world(c.tolerance);
      const at = w.s.clock.now() + HOUR;
      const text = `scheduled ${c.tolerance} ${c.lateMinutes}`;
      const created = await publish(w, w.destinationId, [text], new Date(at).toISOString());
      expect(created.state).toBe("scheduled");
      w.s.clock.set(at + c.lateMinutes * MINUTE); // the server was down: no tick until now
      await w.s.server.engine.runUntilIdle();
      const post = await getPost(w, created.id, true);
      const onNetwork = () => w.mastodon.statuses.filter((s) => s.text === text).length;
      if (!c.missed) {
        expect(post).toMatchObject({
          state: "published",
          missed_at: null,
          attempts: [{ trigger: "initial", status: "succeeded" }],
        });
        expect(onNetwork()).toBe(1);
        return;
      }
      expect(post).toMatchObject({
        state: "missed",
        missed_at: new Date(w.s.clock.now()).toISOString(),
        action_required: true,
        terminal: false,
        next_action_at: null,
        attempt_count: 0,
        attempts: [],
      });
      expect(post.available_actions).toEqual(expect.arrayContaining(["retry", "reschedule"]));
      expect(post.last_error.user_action).toBe("reschedule");
      expect((await outbox(w, created.id)).map((e) => [e.type, e.payload.state])).toEqual([
        ["post.needs-attention", "missed"],
      ]);
      expect(onNetwork()).toBe(0);
      // It waits for the user, however long.
      w.s.clock.advance(HOUR);
      await w.s.server.engine.runUntilIdle();
      expect((await getPost(w, created.id)).state).toBe("missed");
      const retried = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts/${created.id}/retry`, {
        body: { confirmed: true },
      });
      expect(retried.status).toBe(200);
      await w.s.server.engine.runUntilIdle();
      expect(await getPost(w, created.id, true)).toMatchObject({
        state: "published",
        missed_at: null,
        attempts: [{ trigger: "manual_retry", status: "succeeded" }],
      });
      expect(onNetwork()).toBe(1);
    });
  }
});

describe("publishing pace", () => {
  test("daily cap: the third due post is deferred until the first publication is 24 h old", async () => {
    const w = await startPostsWorld({ HERALD_DAILY_CAP_MASTODON: "2" });
    try {
      const created = [];
      for (const n of [1, 2, 3]) created.push(await publish(w, w.destinationId, [`capped ${n}`]));
      await w.s.server.engine.runUntilIdle();
      const posts = await Promise.all(created.map((p) => getPost(w, p.id)));
      const published = posts.filter((p) => p.state === "published");
      const waiting = posts.filter((p) => p.state !== "published");
      expect(published).toHaveLength(2);
      expect(waiting).toHaveLength(1);
      expect(w.mastodon.statuses).toHaveLength(2);
      const first = Math.min(...published.map((p) => Date.parse(p.published_at)));
      const until = new Date(first + 24 * HOUR).toISOString();
      expect(waiting[0]).toMatchObject({
        state: "ready",
        attempt_count: 0,
        next_action_at: until,
        deferred: { reason: "publishing_velocity", until },
      });
      w.s.clock.set(Date.parse(until) - MINUTE);
      await w.s.server.engine.runUntilIdle();
      expect((await getPost(w, waiting[0].id)).state).toBe("ready");
      w.s.clock.set(Date.parse(until) + 1000);
      await w.s.server.engine.runUntilIdle();
      expect(await getPost(w, waiting[0].id)).toMatchObject({
        state: "published",
        deferred: null,
        attempt_count: 1,
      });
      expect(w.mastodon.statuses).toHaveLength(3);
    } finally {
      await w.stop();
    }
  });

  test("minimum spacing: two posts due at once go out 10 minutes apart", async () => {
    const w = await startPostsWorld({ HERALD_MIN_SPACING_SECONDS: "600" });
    try {
      const a = await publish(w, w.destinationId, ["spaced a"]);
      const b = await publish(w, w.destinationId, ["spaced b"]);
      const start = w.s.clock.now();
      await w.s.server.engine.runUntilIdle();
      const [pa, pb] = [await getPost(w, a.id), await getPost(w, b.id)];
      const [done, waiting] = pa.state === "published" ? [pa, pb] : [pb, pa];
      expect(done.state).toBe("published");
      const until = new Date(Date.parse(done.published_at) + 10 * MINUTE).toISOString();
      expect(waiting).toMatchObject({
        state: "ready",
        next_action_at: until,
        deferred: { reason: "publishing_velocity", until },
      });
      expect(w.mastodon.statuses).toHaveLength(1);
      w.s.clock.set(start + 10 * MINUTE - 1000);
      await w.s.server.engine.runUntilIdle();
      expect((await getPost(w, waiting.id)).state).toBe("ready");
      w.s.clock.set(Date.parse(until));
      await w.s.server.engine.runUntilIdle();
      const later = await getPost(w, waiting.id);
      expect(later).toMatchObject({ state: "published", deferred: null });
      expect(Date.parse(later.published_at) - Date.parse(done.published_at)).toBe(10 * MINUTE);
      expect(w.mastodon.statuses).toHaveLength(2);
    } finally {
      await w.stop();
    }
  });
});
