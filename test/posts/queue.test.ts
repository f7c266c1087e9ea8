// Queue windows (GET/PUT /workspaces/{id}/queue), `when: queue` placement across destinations and
// DST changes, and moving queued posts (POST …/posts/move).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { expectProblem } from "../helpers/problems.ts";
import { api, connectBluesky, daily, ok } from "./fixtures.ts";
import { startPostsWorld, type PostsWorld } from "./helpers.ts";

let w: PostsWorld;
let bluesky: BlueskyFake;
let blueskyId: string;
let a: ReturnType<typeof api>;

beforeAll(async () => {
  w = await startPostsWorld();
  bluesky = await startBlueskyFake();
  blueskyId = await connectBluesky(w.s, bluesky, w.ws);
  a = api(w.s, w.ws);
});
afterAll(async () => {
  await w.stop();
  await bluesky.stop();
});

/** Queues one post per destination in one request; returns the created posts. */
async function queue(group: string, ...destinationIds: string[]) {
  const r = ok(
    await a.create({
      when: "queue",
      confirmed: true,
      group,
      posts: destinationIds.map((destination_id) => ({ destination_id, body: [`queued ${group}`] })),
    }),
  );
  return r.body.posts as any[];
}

/** The id of the window on a weekday at a local time. */
async function windowId(weekday: number, localTime: string): Promise<string> {
  const q = ok(await a.getQueue(), 200);
  const found = q.body.windows.find((x: any) => x.weekday === weekday && x.local_time === localTime);
  expect(found).toBeDefined();
  return found.id;
}

describe("queue windows", () => {
  test("a new workspace has an empty queue in UTC", async () => {
    const r = ok(await a.getQueue(), 200);
    expect(r.body).toEqual({ object: "queue", time_zone: "UTC", windows: [] });
    expect(r.headers.get("etag")).toBeTruthy();
  });

  test("without windows, when: queue is 422 on /when", async () => {
    const r = await a.create({
      when: "queue",
      confirmed: true,
      group: "nowin",
      posts: [{ destination_id: w.destinationId, body: ["q"] }],
    });
    expectProblem(r, 422, "public_unpublishable", ["/when"]);
  });

  test("PUT stores the windows in weekday and time order; unchanged windows keep their ids", async () => {
    const first = ok(
      await a.putQueue([
        { weekday: 3, local_time: "18:30" },
        { weekday: 1, local_time: "09:00" },
        { weekday: 1, local_time: "08:15" },
      ]),
      200,
    );
    expect(first.body.object).toBe("queue");
    expect(first.body.time_zone).toBe("UTC");
    expect(first.body.windows.map((x: any) => [x.weekday, x.local_time])).toEqual([
      [1, "08:15"],
      [1, "09:00"],
      [3, "18:30"],
    ]);
    for (const x of first.body.windows) expect(x.id).toMatch(/^qw_[0-9a-z]+$/);
    expect(ok(await a.getQueue(), 200).body).toEqual(first.body);

    const ids = Object.fromEntries(
      first.body.windows.map((x: any) => [`${x.weekday} ${x.local_time}`, x.id]),
    );
    const second = ok(
      await a.putQueue([
        { weekday: 1, local_time: "09:00" },
        { weekday: 7, local_time: "23:59" },
        { weekday: 3, local_time: "18:30" },
      ]),
      200,
    );
    const after = Object.fromEntries(
      second.body.windows.map((x: any) => [`${x.weekday} ${x.local_time}`, x.id]),
    );
    expect(Object.keys(after)).toEqual(["1 09:00", "3 18:30", "7 23:59"]);
    expect(after["1 09:00"]).toBe(ids["1 09:00"]);
    expect(after["3 18:30"]).toBe(ids["3 18:30"]);
    expect(Object.values(ids)).not.toContain(after["7 23:59"]);
  });

  const bad: { name: string; windows: unknown[]; pointers: string[] }[] = [
    { name: "weekday 0", windows: [{ weekday: 0, local_time: "09:00" }], pointers: ["/windows/0/weekday"] },
    {
      name: "weekday 8",
      windows: [
        { weekday: 1, local_time: "09:00" },
        { weekday: 8, local_time: "09:00" },
      ],
      pointers: ["/windows/1/weekday"],
    },
    {
      name: "weekday as a name",
      windows: [{ weekday: "monday", local_time: "09:00" }],
      pointers: ["/windows/0/weekday"],
    },
    {
      name: "time without leading zero",
      windows: [{ weekday: 1, local_time: "9:00" }],
      pointers: ["/windows/0/local_time"],
    },
    { name: "hour 24", windows: [{ weekday: 1, local_time: "24:00" }], pointers: ["/windows/0/local_time"] },
    {
      name: "minute 60",
      windows: [{ weekday: 1, local_time: "12:60" }],
      pointers: ["/windows/0/local_time"],
    },
    {
      name: "seconds",
      windows: [{ weekday: 1, local_time: "12:00:00" }],
      pointers: ["/windows/0/local_time"],
    },
    {
      name: "unknown property",
      windows: [{ weekday: 1, local_time: "12:00", label: "x" }],
      pointers: ["/windows/0/label"],
    },
    {
      name: "the same window twice",
      windows: [
        { weekday: 2, local_time: "10:00" },
        { weekday: 5, local_time: "10:00" },
        { weekday: 2, local_time: "10:00" },
      ],
      pointers: ["/windows/2"],
    },
  ];
  for (const c of bad) {
    test(`PUT refuses ${c.name} with 400 and stores nothing`, async () => {
      const before = ok(await a.getQueue(), 200).body;
      const r = await w.s.request("PUT", `/v1/workspaces/${w.ws}/queue`, { body: { windows: c.windows } });
      expectProblem(r, 400, "public_invalid_request", c.pointers);
      expect(ok(await a.getQueue(), 200).body).toEqual(before);
    });
  }
});

describe("when: queue placement (UTC workspace, now = Sunday 2026-03-01 12:00Z)", () => {
  beforeAll(async () => {
    w.s.clock.set("2026-03-01T12:00:00Z");
    ok(await a.putQueue(daily("09:00", "15:00")), 200);
  });

  test("the first queued post takes the earliest future window today", async () => {
    const [post] = await queue("q1", w.destinationId);
    expect(post).toMatchObject({
      state: "scheduled",
      schedule_mode: "queue",
      time_zone: "UTC",
      scheduled_at: "2026-03-01T15:00:00.000Z",
      next_action_at: "2026-03-01T15:00:00.000Z",
      queue_local_date: "2026-03-01",
      queue_window_id: await windowId(7, "15:00"),
      available_actions: ["cancel", "reschedule", "move"],
    });
  });

  test("a second post for the same destination takes the next window", async () => {
    const [post] = await queue("q2", w.destinationId);
    expect(post).toMatchObject({
      scheduled_at: "2026-03-02T09:00:00.000Z",
      queue_local_date: "2026-03-02",
      queue_window_id: await windowId(1, "09:00"),
    });
  });

  test("a window is per destination: another destination still gets today's window", async () => {
    const [post] = await queue("q3", blueskyId);
    expect(post).toMatchObject({
      channel: "bluesky",
      scheduled_at: "2026-03-01T15:00:00.000Z",
      queue_local_date: "2026-03-01",
    });
  });

  test("two destinations in one request share the earliest window free for both", async () => {
    const posts = await queue("q4", w.destinationId, blueskyId);
    expect(posts).toHaveLength(2);
    const windowMon15 = await windowId(1, "15:00");
    for (const p of posts)
      expect(p).toMatchObject({
        scheduled_at: "2026-03-02T15:00:00.000Z",
        queue_local_date: "2026-03-02",
        queue_window_id: windowMon15,
      });
  });

  test("a request naming one destination twice is refused", async () => {
    const r = await a.create({
      when: "queue",
      confirmed: true,
      group: "dup",
      posts: [
        { destination_id: blueskyId, body: ["a"] },
        { destination_id: blueskyId, body: ["b"] },
      ],
    });
    expectProblem(r, 400, "public_invalid_request", ["/posts"]);
  });
});

describe("queue placement across DST in Europe/Berlin (windows 02:30 and 09:00 daily)", () => {
  beforeAll(async () => {
    const patched = ok(await a.setTimeZone("Europe/Berlin"), 200);
    expect(patched.body.time_zone).toBe("Europe/Berlin");
    const q = ok(await a.putQueue(daily("02:30", "09:00")), 200);
    expect(q.body.time_zone).toBe("Europe/Berlin");
  });

  // Herald's documented rule: a window time that does not exist (spring-forward gap) moves forward by
  // the gap, 02:30 → 03:30 CEST; an ambiguous one (fall-back) is its first occurrence, 02:30 CEST.
  const seasons: { name: string; now: string; expected: [string, string][] }[] = [
    {
      name: "spring forward, 2026-03-29",
      now: "2026-03-28T06:00:00Z", // Saturday 07:00 CET: today's 02:30 is gone
      expected: [
        ["2026-03-28T08:00:00.000Z", "2026-03-28"],
        ["2026-03-29T01:30:00.000Z", "2026-03-29"],
        ["2026-03-29T07:00:00.000Z", "2026-03-29"],
        ["2026-03-30T00:30:00.000Z", "2026-03-30"],
      ],
    },
    {
      name: "fall back, 2026-10-25",
      now: "2026-10-24T06:00:00Z", // Saturday 08:00 CEST
      expected: [
        ["2026-10-24T07:00:00.000Z", "2026-10-24"],
        ["2026-10-25T00:30:00.000Z", "2026-10-25"],
        ["2026-10-25T08:00:00.000Z", "2026-10-25"],
        ["2026-10-26T01:30:00.000Z", "2026-10-26"],
      ],
    },
  ];
  for (const season of seasons) {
    test(season.name, async () => {
      w.s.clock.set(season.now);
      const got: [string, string][] = [];
      for (let i = 0; i < season.expected.length; i++) {
        const [post] = await queue(`dst-${season.now.slice(5, 7)}-${i}`, w.destinationId);
        expect(post.time_zone).toBe("Europe/Berlin");
        expect(post.schedule_mode).toBe("queue");
        got.push([post.scheduled_at, post.queue_local_date]);
      }
      expect(got).toEqual(season.expected);
    });
  }
});

describe("moving queued posts (Europe/Berlin, now = Monday 2026-11-02 07:00 CET)", () => {
  let first: any;
  let second: any;
  beforeAll(async () => {
    w.s.clock.set("2026-11-02T06:00:00Z");
    [first] = await queue("mv1", blueskyId);
    [second] = await queue("mv2", blueskyId);
  });
  const move = (
    local_date: string,
    posts: { id: string; expected_scheduled_at: string }[],
    extra: Record<string, unknown> = { confirmed: true },
  ) => a.move({ ...extra, local_date, posts });

  test("the queue placed them at 09:00 today and 02:30 tomorrow", () => {
    expect(first.scheduled_at).toBe("2026-11-02T08:00:00.000Z");
    expect(second.scheduled_at).toBe("2026-11-03T01:30:00.000Z");
  });

  test("a moved post takes the earliest free window of the date; the next one the window after", async () => {
    const r = ok(
      await move("2026-11-05", [{ id: first.id, expected_scheduled_at: "2026-11-02T09:00:00+01:00" }]),
      200,
    );
    expect(r.body.object).toBe("post_set");
    expect(r.body.posts[0]).toMatchObject({
      id: first.id,
      state: "scheduled",
      schedule_mode: "queue",
      scheduled_at: "2026-11-05T01:30:00.000Z",
      queue_local_date: "2026-11-05",
      queue_window_id: await windowId(4, "02:30"),
    });
    const again = ok(
      await move("2026-11-05", [{ id: second.id, expected_scheduled_at: second.scheduled_at }]),
      200,
    );
    expect(again.body.posts[0]).toMatchObject({
      scheduled_at: "2026-11-05T08:00:00.000Z",
      queue_local_date: "2026-11-05",
      queue_window_id: await windowId(4, "09:00"),
    });
    const got = ok(await a.get(first.id), 200).body;
    expect(got.scheduled_at).toBe("2026-11-05T01:30:00.000Z");
    expect(got.version).toBeGreaterThan(first.version);
  });

  test("the window a moved post left is free again", async () => {
    const [post] = await queue("mv3", blueskyId);
    expect(post.scheduled_at).toBe("2026-11-02T08:00:00.000Z");
  });

  test("a stale expected_scheduled_at is 409 and changes nothing", async () => {
    const r = await move("2026-11-06", [{ id: first.id, expected_scheduled_at: first.scheduled_at }]);
    expectProblem(r, 409, "public_version_conflict", ["/posts/0/expected_scheduled_at"]);
    expect(ok(await a.get(first.id), 200).body.scheduled_at).toBe("2026-11-05T01:30:00.000Z");
  });

  test("a date without a free window for the destination is 422", async () => {
    const [third] = await queue("mv4", blueskyId);
    const full = await move("2026-11-05", [{ id: third.id, expected_scheduled_at: third.scheduled_at }]);
    expectProblem(full, 422, "public_unpublishable", ["/posts/0"]);
    const past = await move("2026-11-01", [{ id: third.id, expected_scheduled_at: third.scheduled_at }]);
    expectProblem(past, 422, "public_unpublishable", ["/posts/0"]);
    expect(ok(await a.get(third.id), 200).body.scheduled_at).toBe(third.scheduled_at);
  });

  test("a post that is not queued cannot be moved (409)", async () => {
    const exact = ok(
      await a.create({
        when: "2026-11-10T12:00:00+01:00",
        confirmed: true,
        group: "mv-exact",
        posts: [{ destination_id: blueskyId, body: ["exact"] }],
      }),
    ).body.posts[0];
    expect(exact.available_actions).not.toContain("move");
    expectProblem(
      await move("2026-11-06", [{ id: exact.id, expected_scheduled_at: exact.scheduled_at }]),
      409,
      "public_conflict",
    );
  });

  test("a test key cannot move a post (403 like reschedule); the post keeps its time", async () => {
    const key = await w.s.createKey({ environment: "test" });
    const base = `/v1/workspaces/${w.ws}/posts`;
    const before = ok(await a.get(first.id), 200).body;
    const body = {
      confirmed: true,
      local_date: "2026-11-06",
      posts: [{ id: first.id, expected_scheduled_at: before.scheduled_at }],
    };
    const moved = await w.s.request("POST", `${base}/move`, { key, body });
    const rescheduled = await w.s.request("POST", `${base}/${first.id}/reschedule`, {
      key,
      body: { confirmed: true, scheduled_at: "2026-11-06T10:00:00+01:00" },
    });
    expectProblem(moved, 403, "public_live_credential_required");
    expectProblem(rescheduled, 403, "public_live_credential_required");
    const shape = (r: typeof moved) => ({ ...r.body, instance: null, request_id: null });
    expect(shape(moved)).toEqual(shape(rescheduled));
    expect(ok(await a.get(first.id), 200).body.scheduled_at).toBe(before.scheduled_at);
  });

  test("confirmed is required, and expected_scheduled_at needs an offset", async () => {
    expectProblem(
      await move("2026-11-06", [{ id: first.id, expected_scheduled_at: "2026-11-05T01:30:00.000Z" }], {}),
      400,
      "public_invalid_request",
      ["/confirmed"],
    );
    expectProblem(
      await move("2026-11-06", [{ id: first.id, expected_scheduled_at: "2026-11-05T02:30:00" }]),
      400,
      "public_invalid_request",
      ["/posts/0/expected_scheduled_at"],
    );
    for (const date of ["2026-13-45", "2026-02-30", "06.11.2026"]) {
      expectProblem(
        await move(date, [{ id: first.id, expected_scheduled_at: "2026-11-05T01:30:00.000Z" }]),
        400,
        "public_invalid_request",
        ["/local_date"],
      );
    }
  });
});
