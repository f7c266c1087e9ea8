// Recycling evergreen posts: `recycle` at Create Post (checks and pointers), the chain of copies the
// engine schedules after each publication on a manual clock (variations in turn, count, group,
// recycled_from), a cancelled copy ending the chain, drafts, queue windows, the pace, and exactly
// one copy per number when a publication is retried or recorded twice.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { inTransaction } from "../../src/db/transaction.ts";
import { newId } from "../../src/db/ids.ts";
import { findPostById } from "../../src/modules/posts/repo.ts";
import { enterPosts } from "../../src/modules/posts/transition.ts";
import { scheduleNextRecycledCopy } from "../../src/modules/recycling/schedule.ts";
import { listRecycledCopies } from "../../src/modules/recycling/repo.ts";
import { PublishingEngine } from "../../src/modules/publishing/engine.ts";
import { tables } from "../helpers/tables.ts";
import { waitFor } from "../posts/engine-helpers.ts";
import { expectProblem } from "../helpers/problems.ts";
import { api, daily, ok } from "../posts/fixtures.ts";
import { idem, startPostsWorld, type PostsWorld } from "../posts/helpers.ts";

const DAY = 24 * 3600_000;

let w: PostsWorld;
let a: ReturnType<typeof api>;

beforeAll(async () => {
  // A hung create times out after 2 s (the dead publisher of the crash test).
  w = await startPostsWorld({ HERALD_PROVIDER_TIMEOUT_SECONDS: "2" });
  a = api(w.s, w.ws);
});
afterAll(async () => {
  await w.stop();
});

/** Publishes now with a recycling plan; returns the original as the engine left it. */
async function publishRecycled(group: string, body: string[], recycle: Record<string, unknown>) {
  const created = ok(
    await a.create({
      when: "now",
      confirmed: true,
      group,
      posts: [{ destination_id: w.destinationId, body, recycle }],
    }),
    202,
  );
  await w.s.server.engine.runUntilIdle();
  return ok(await a.get(created.body.posts[0].id), 200).body;
}

/** The group's posts, oldest first. */
async function groupPosts(group: string): Promise<any[]> {
  const r = ok(await a.list(`?group=${group}&limit=100`), 200);
  return [...r.body.data].sort((x: any, y: any) => (x.recycle_number ?? 0) - (y.recycle_number ?? 0));
}

/** Moves the clock to a post's time and lets the engine publish what is due. */
async function runAt(at: string) {
  w.s.clock.set(at);
  await w.s.server.engine.runUntilIdle();
}

function statusesWith(text: string) {
  return w.mastodon.statuses.filter((s) => s.text === text);
}

describe("recycle at Create Post", () => {
  test("x, tiktok and youtube refuse it: 422 public_unpublishable at /posts/<i>/recycle", async () => {
    const recycle = { every_days: 7, count: 2 };
    const r = await a.create({
      when: "draft",
      group: "no-repeats",
      posts: [
        { channel: "mastodon", body: ["fine here"], recycle },
        { channel: "x", body: ["no"], recycle },
        { channel: "tiktok", body: ["no"], recycle },
        { channel: "youtube", body: ["no"], recycle },
      ],
    });
    expectProblem(r, 422, "public_unpublishable", [
      "/posts/1/recycle",
      "/posts/2/recycle",
      "/posts/3/recycle",
    ]);
    expect(r.body.errors[0].detail).toContain("duplicates");
  });

  test("every_days and count out of range are 400 with their pointers", async () => {
    for (const [recycle, pointer] of [
      [{ every_days: 0, count: 2 }, "/posts/0/recycle/every_days"],
      [{ every_days: 366, count: 2 }, "/posts/0/recycle/every_days"],
      [{ every_days: 7, count: 53 }, "/posts/0/recycle/count"],
      [{ every_days: 7, count: 0 }, "/posts/0/recycle/count"],
      [{ every_days: 7 }, "/posts/0/recycle/count"],
    ] as const) {
      const r = await a.create({
        when: "now",
        confirmed: true,
        group: "ranges",
        posts: [{ destination_id: w.destinationId, body: ["x"], recycle }],
      });
      expectProblem(r, 400, "public_invalid_request");
      expect(r.body.errors.map((e: any) => e.pointer)).toContain(pointer);
    }
  });

  test("variations are checked like the body: 422 at /posts/<i>/recycle/variations/<v>/<item>", async () => {
    const r = await a.create({
      when: "now",
      confirmed: true,
      group: "bad-variations",
      posts: [
        {
          destination_id: w.destinationId,
          body: ["the original"],
          recycle: { every_days: 7, count: 3, variations: [["fine"], ["ok", "  "], ["y".repeat(501)]] },
        },
      ],
    });
    expectProblem(r, 422, "public_unpublishable", [
      "/posts/0/recycle/variations/1/1",
      "/posts/0/recycle/variations/2/0",
    ]);
    expect(await groupPosts("bad-variations")).toEqual([]);
  });

  test("a draft's variations warn in the dry run, like its body", async () => {
    const r = ok(
      await a.validate({
        when: "draft",
        group: "draft-warnings",
        posts: [
          {
            destination_id: w.destinationId,
            body: ["ok"],
            recycle: { every_days: 7, count: 1, variations: [["z".repeat(501)]] },
          },
        ],
      }),
      200,
    );
    expect(r.body.valid).toBe(true);
    expect(r.body.warnings.map((x: any) => x.pointer)).toEqual(["/posts/0/recycle/variations/0/0"]);
  });

  test("publishing a draft checks its variations against the destination (422 with their pointers)", async () => {
    const draft = ok(
      await a.create({
        when: "draft",
        group: "draft-long-variation",
        posts: [
          {
            channel: "mastodon",
            body: ["ok"],
            recycle: { every_days: 7, count: 1, variations: [["q".repeat(501)]] },
          },
        ],
      }),
    ).body.posts[0];
    const r = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts/publish`, {
      body: {
        when: "now",
        confirmed: true,
        posts: [{ id: draft.id, version: draft.version, destination_id: w.destinationId }],
      },
      headers: idem(),
    });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/recycle/variations/0/0"]);
    expect(ok(await a.get(draft.id), 200).body.state).toBe("draft");
  });
});

describe("the chain through the engine", () => {
  test("copy n follows the publication before it by every_days, variations in turn, count copies", async () => {
    const original = await publishRecycled("chain", ["evergreen original"], {
      every_days: 7,
      count: 3,
      variations: [["variation A"], ["variation B"]],
    });
    expect(original.state).toBe("published");
    expect(original.recycled_from).toBeNull();
    const first = Date.parse(original.published_at) + 7 * DAY;
    expect(original.recycle).toMatchObject({
      every_days: 7,
      count: 3,
      variations: [["variation A"], ["variation B"]],
      copies_published: 0,
      next_copy_at: new Date(first).toISOString(),
    });

    let posts = await groupPosts("chain");
    expect(posts).toHaveLength(2);
    const copy1 = posts[1];
    expect(original.recycle.next_copy_id).toBe(copy1.id);
    expect(copy1).toMatchObject({
      state: "scheduled",
      group: "chain",
      destination_id: w.destinationId,
      recycled_from: original.id,
      recycle_number: 1,
      recycle: null,
      schedule_mode: "exact",
      scheduled_at: new Date(first).toISOString(),
      payload: { body: ["variation A"] },
    });

    await runAt(copy1.scheduled_at);
    expect(statusesWith("variation A")).toHaveLength(1);
    posts = await groupPosts("chain");
    expect(posts.map((p) => [p.recycle_number, p.state, p.payload.body[0]])).toEqual([
      [null, "published", "evergreen original"],
      [1, "published", "variation A"],
      [2, "scheduled", "variation B"],
    ]);
    expect(posts[2].scheduled_at).toBe(new Date(Date.parse(posts[1].published_at) + 7 * DAY).toISOString());
    expect(posts[2].recycled_from).toBe(original.id);

    await runAt(posts[2].scheduled_at);
    posts = await groupPosts("chain");
    // Copy 3 takes variations[(3-1) mod 2]: the first again.
    expect(posts[3]).toMatchObject({
      recycle_number: 3,
      state: "scheduled",
      payload: { body: ["variation A"] },
    });
    await runAt(posts[3].scheduled_at);

    // Count reached: nothing after copy 3, even weeks later.
    w.s.clock.advance(30 * DAY);
    await w.s.server.engine.runUntilIdle();
    posts = await groupPosts("chain");
    expect(posts.map((p) => [p.recycle_number, p.state])).toEqual([
      [null, "published"],
      [1, "published"],
      [2, "published"],
      [3, "published"],
    ]);
    expect(statusesWith("variation A")).toHaveLength(2);
    expect(statusesWith("variation B")).toHaveLength(1);
    const done = ok(await a.get(original.id), 200).body;
    expect(done.recycle).toMatchObject({ copies_published: 3, next_copy_at: null, next_copy_id: null });
  });

  test("without variations the copies repeat the original body", async () => {
    const original = await publishRecycled("same-body", ["said again"], { every_days: 1, count: 1 });
    const [, copy] = await groupPosts("same-body");
    expect(copy.payload.body).toEqual(["said again"]);
    await runAt(copy.scheduled_at);
    expect(statusesWith("said again")).toHaveLength(2);
    expect(ok(await a.get(original.id), 200).body.recycle.copies_published).toBe(1);
  });

  test("cancelling a copy stops the chain", async () => {
    const original = await publishRecycled("stopped", ["stop me"], { every_days: 2, count: 5 });
    const copyId = original.recycle.next_copy_id;
    ok(await a.action(copyId, "cancel", { confirmed: true }), 200);
    const after = ok(await a.get(original.id), 200).body;
    expect(after.recycle).toMatchObject({ copies_published: 0, next_copy_at: null, next_copy_id: null });
    w.s.clock.advance(20 * DAY);
    await w.s.server.engine.runUntilIdle();
    expect((await groupPosts("stopped")).map((p) => [p.recycle_number, p.state])).toEqual([
      [null, "published"],
      [1, "cancelled"],
    ]);
  });

  test("a draft keeps its plan and recycles once published", async () => {
    const draft = ok(
      await a.create({
        when: "draft",
        group: "draft-recycle",
        posts: [{ channel: "mastodon", body: ["drafted evergreen"], recycle: { every_days: 3, count: 1 } }],
      }),
    ).body.posts[0];
    expect(draft.recycle).toMatchObject({ every_days: 3, count: 1, copies_published: 0, next_copy_at: null });
    expect(await groupPosts("draft-recycle")).toHaveLength(1);
    ok(
      await w.s.request("POST", `/v1/workspaces/${w.ws}/posts/publish`, {
        body: {
          when: "now",
          confirmed: true,
          posts: [{ id: draft.id, version: draft.version, destination_id: w.destinationId }],
        },
        headers: idem(),
      }),
      202,
    );
    await w.s.server.engine.runUntilIdle();
    const posts = await groupPosts("draft-recycle");
    expect(posts.map((p) => [p.recycle_number, p.state])).toEqual([
      [null, "published"],
      [1, "scheduled"],
    ]);
    expect(posts[1].scheduled_at).toBe(new Date(Date.parse(posts[0].published_at) + 3 * DAY).toISOString());
  });
});

describe("exactly one copy per number", () => {
  test("a publication retried after a transient failure schedules one copy", async () => {
    w.mastodon.failNext(1, { status: 503, path: "/api/v1/statuses" });
    const created = ok(
      await a.create({
        when: "now",
        confirmed: true,
        group: "retried",
        posts: [
          {
            destination_id: w.destinationId,
            body: ["retried evergreen"],
            recycle: { every_days: 5, count: 2 },
          },
        ],
      }),
      202,
    ).body.posts[0];
    await w.s.server.engine.runUntilIdle();
    const waiting = ok(await a.get(created.id, "?include=attempts"), 200).body;
    expect(waiting.state).toBe("ready");
    expect(waiting.attempts.map((x: any) => x.status)).toEqual(["failed"]);
    expect(waiting.recycle.next_copy_id).toBeNull();
    await runAt(waiting.next_action_at);
    const posts = await groupPosts("retried");
    expect(posts.map((p) => [p.recycle_number, p.state])).toEqual([
      [null, "published"],
      [1, "scheduled"],
    ]);
  });

  test("a publisher that died mid-publication: recovered, published once, one copy", async () => {
    const created = ok(
      await a.create({
        when: "now",
        confirmed: true,
        group: "crashed",
        posts: [
          {
            destination_id: w.destinationId,
            body: ["crashed evergreen"],
            recycle: { every_days: 6, count: 2 },
          },
        ],
      }),
      202,
    ).body.posts[0];
    // Another engine claims it and sends the create; Mastodon stores it and never answers; that engine
    // then stops (no ticks, no lease renewal), like a process that died.
    w.mastodon.hangAfterReceive = true;
    const dead = new PublishingEngine(w.s.herald);
    await dead.tick();
    dead.stop();
    await waitFor("the create to reach Mastodon", () =>
      statusesWith("crashed evergreen").length ? true : undefined,
    );
    w.mastodon.hangAfterReceive = false;
    expect(ok(await a.get(created.id), 200).body.state).toBe("processing");
    expect(await listRecycledCopies(w.s.herald.db, [created.id])).toEqual([]);
    // Past the lease, recovery re-queues it (idempotent network) and it is published with its one copy.
    w.s.clock.advance(w.s.herald.config.engine.leaseMs + 1000);
    await w.s.server.engine.runUntilIdle();
    const original = ok(await a.get(created.id), 200).body;
    expect(original.state).toBe("published");
    expect(statusesWith("crashed evergreen")).toHaveLength(1);
    expect((await listRecycledCopies(w.s.herald.db, [created.id])).map((c) => c.recycleNumber)).toEqual([1]);
    // The dead run's late answer writes nothing, and schedules nothing.
    await dead.drain();
    expect((await listRecycledCopies(w.s.herald.db, [created.id])).map((c) => c.recycleNumber)).toEqual([1]);
    expect(original.recycle.next_copy_at).toBe(
      new Date(Date.parse(original.published_at) + 6 * DAY).toISOString(),
    );
  });

  test("a publication recorded twice (a crash replayed) still leaves one copy; the index refuses a second", async () => {
    const original = await publishRecycled("replayed", ["replayed evergreen"], { every_days: 4, count: 2 });
    const row = (await findPostById(w.s.herald.db, original.id))!;
    const again = await inTransaction(w.s.herald.db, (tx) =>
      scheduleNextRecycledCopy(w.s.herald, tx, row, w.s.clock.now()),
    );
    expect(again).toBeNull();
    const copies = await listRecycledCopies(w.s.herald.db, [original.id]);
    expect(copies.map((c) => c.recycleNumber)).toEqual([1]);
    const copy = (await findPostById(w.s.herald.db, copies[0]!.id))!;
    const duplicate = inTransaction(w.s.herald.db, (tx) =>
      tx.insert(tables.posts).values({ ...copy, id: `${copy.id}x` }),
    );
    await expect(duplicate).rejects.toThrow();
    expect(await listRecycledCopies(w.s.herald.db, [original.id])).toHaveLength(1);
  });

  test("a copy a unique index refuses (taken meanwhile) is left out, and the transaction goes on", async () => {
    const original = await publishRecycled("unless-taken", ["taken meanwhile"], { every_days: 9, count: 3 });
    const [first] = await listRecycledCopies(w.s.herald.db, [original.id]);
    const copy = (await findPostById(w.s.herald.db, first!.id))!;
    const stored = await inTransaction(w.s.herald.db, async (tx) => {
      const enter = (recycleNumber: number) =>
        enterPosts({
          tx,
          rows: [{ ...copy, id: newId("send"), recycleNumber }],
          xLimit: 50,
          unlessTaken: true,
        });
      return [(await enter(1)).length, (await enter(2)).length];
    });
    expect(stored).toEqual([0, 1]);
    const copies = await listRecycledCopies(w.s.herald.db, [original.id]);
    expect(copies.map((c) => c.recycleNumber)).toEqual([1, 2]);
  });
});

describe("queue windows and the pace", () => {
  test("a queued original's copies take the first free window at or after their time", async () => {
    ok(await a.putQueue(daily("09:00")), 200);
    const created = ok(
      await a.create({
        when: "queue",
        confirmed: true,
        group: "queued",
        posts: [
          {
            destination_id: w.destinationId,
            body: ["queued evergreen"],
            recycle: { every_days: 2, count: 1 },
          },
        ],
      }),
    ).body.posts[0];
    // Published five minutes after its window: two days later 09:05 has passed that day's window.
    w.s.clock.set(Date.parse(created.scheduled_at) + 5 * 60_000);
    await w.s.server.engine.runUntilIdle();
    const [original, copy] = await groupPosts("queued");
    expect(original.state).toBe("published");
    const windowAt = Date.parse(created.scheduled_at) + 3 * DAY;
    expect(copy).toMatchObject({
      state: "scheduled",
      schedule_mode: "queue",
      scheduled_at: new Date(windowAt).toISOString(),
      recycled_from: original.id,
    });
    expect(copy.queue_window_id).toBeTruthy();
    ok(await a.putQueue([]), 200);
  });

  test("a copy due while its destination is paced waits like any post (publishing_velocity)", async () => {
    const original = await publishRecycled("paced", ["paced evergreen"], { every_days: 1, count: 1 });
    const copyAt = Date.parse(original.recycle.next_copy_at);
    w.s.herald.config.engine.minSpacingMs = 3600_000;
    try {
      // Another post on the destination goes out ten minutes before the copy is due.
      w.s.clock.set(copyAt - 10 * 60_000);
      ok(
        await a.create({
          when: "now",
          confirmed: true,
          group: "pace-other",
          posts: [{ destination_id: w.destinationId, body: ["just before"] }],
        }),
        202,
      );
      await w.s.server.engine.runUntilIdle();
      await runAt(new Date(copyAt).toISOString());
      const copy = ok(await a.get(original.recycle.next_copy_id), 200).body;
      expect(copy.state).toBe("ready");
      expect(copy.deferred).toEqual({
        reason: "publishing_velocity",
        until: new Date(copyAt + 50 * 60_000).toISOString(),
      });
      await runAt(copy.deferred.until);
      expect(ok(await a.get(copy.id), 200).body.state).toBe("published");
    } finally {
      w.s.herald.config.engine.minSpacingMs = 0;
    }
  });
});
