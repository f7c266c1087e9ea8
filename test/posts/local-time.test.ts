// A local time with a time zone is what people type (issue 26, point 8). The contract's `when` and
// `scheduled_at` are times with a UTC offset, so the API keeps requiring one (and says how to add
// it); the command line and the dashboard read a local time in the zone before sending. A time the
// zone skips is refused naming the change; a time it has twice is the first of the two.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { localTimeInZone } from "../../src/lib/local-time.ts";
import { failed, herald, removeTempDirs, succeeded, tempDir } from "../cli/helpers.ts";
import { expectProblem } from "../helpers/problems.ts";
import { api, ok } from "./fixtures.ts";
import { startPostsWorld, type PostsWorld } from "./helpers.ts";

describe("localTimeInZone", () => {
  const cases: [local: string, zone: string, result: ReturnType<typeof localTimeInZone>][] = [
    ["2026-11-29T10:00", "Europe/Berlin", { ok: true, iso: "2026-11-29T10:00:00+01:00" }],
    ["2026-07-01T10:00:30", "Europe/Berlin", { ok: true, iso: "2026-07-01T10:00:30+02:00" }],
    ["2026-06-01T12:00", "Asia/Kolkata", { ok: true, iso: "2026-06-01T12:00:00+05:30" }],
    // Clocks back: 02:30 happens twice; the first (summer time) is meant.
    ["2026-10-25T02:30", "Europe/Berlin", { ok: true, iso: "2026-10-25T02:30:00+02:00" }],
    ["2026-11-01T01:30", "America/New_York", { ok: true, iso: "2026-11-01T01:30:00-04:00" }],
    // Clocks forward: the hour (or half hour) does not exist.
    [
      "2026-03-29T02:30",
      "Europe/Berlin",
      {
        ok: false,
        detail:
          "2026-03-29T02:30 does not exist in Europe/Berlin: the clocks move forward from +01:00 to +02:00 that day",
      },
    ],
    [
      "2026-10-04T02:15",
      "Australia/Lord_Howe",
      {
        ok: false,
        detail:
          "2026-10-04T02:15 does not exist in Australia/Lord_Howe: the clocks move forward from +10:30 to +11:00 that day",
      },
    ],
    ["2027-02-30T10:00", "UTC", { ok: false, detail: "2027-02-30T10:00 is not a date that exists" }],
    [
      "2026-06-01T12:00",
      "Mars/Olympus",
      { ok: false, detail: '"Mars/Olympus" is not an IANA time zone such as Europe/Berlin' },
    ],
    ["tomorrow", "UTC", { ok: false, detail: "tomorrow is not a date and time like 2026-11-29T10:00" }],
  ];
  for (const [local, zone, result] of cases)
    test(`${local} in ${zone}`, () => expect(localTimeInZone(local, zone)).toEqual(result));
});

describe("the API and the command line", () => {
  let w: PostsWorld;
  let a: ReturnType<typeof api>;
  let env: Record<string, string>;
  beforeAll(async () => {
    w = await startPostsWorld();
    a = api(w.s, w.ws);
    env = {
      HERALD_API_URL: w.s.url,
      HERALD_API_KEY: w.s.owner.apiKey,
      HERALD_CONFIG_DIR: `${tempDir()}/config`,
    };
  });
  afterAll(async () => {
    await w.stop();
    removeTempDirs();
  });

  const post = (when: string, extra: Record<string, unknown> = {}) => ({
    when,
    confirmed: true,
    group: `local-${Math.random().toString(36).slice(2, 8)}`,
    posts: [{ destination_id: w.destinationId, body: ["local"] }],
    ...extra,
  });

  test("the API keeps requiring an offset (the contract's when), saying how to add one", async () => {
    const r = await a.create(post("2026-11-29T10:00", { time_zone: "Europe/Berlin" }));
    expectProblem(r, 400, "public_invalid_request", ["/when"]);
    expect(r.body.errors[0].detail).toBe(
      "2026-11-29T10:00 has no UTC offset: add one (like 2026-11-29T10:00+01:00); time_zone does not supply it",
    );
    const scheduled = ok(await a.create(post("2026-11-29T10:00:00+01:00"))).body.posts[0];
    const moved = await a.action(scheduled.id, "reschedule", {
      confirmed: true,
      scheduled_at: "2026-11-30T10:00",
      time_zone: "Europe/Berlin",
    });
    expectProblem(moved, 400, "public_invalid_request", ["/scheduled_at"]);
    expect(moved.body.errors[0].detail).toStartWith("2026-11-30T10:00 has no UTC offset: add one");
  });

  test("herald posts create --when LOCAL --time-zone ZONE schedules at that local time", async () => {
    const out = succeeded(
      await herald(
        [
          "posts",
          "create",
          "Local",
          "--when",
          "2026-11-29T10:00",
          "--time-zone",
          "Europe/Berlin",
          "--yes",
          "--json",
        ],
        env,
      ),
    );
    const [created] = JSON.parse(out).posts;
    expect(created).toMatchObject({
      state: "scheduled",
      scheduled_at: "2026-11-29T09:00:00.000Z",
      time_zone: "Europe/Berlin",
    });
  });

  test("a local time without --time-zone is refused, saying to add an offset or a zone", async () => {
    const r = await herald(["posts", "create", "Local", "--when", "2026-11-29T10:00", "--yes"], env);
    expect(failed(r, 2)).toBe(
      "herald: --when 2026-11-29T10:00 has no UTC offset: add one (like 2026-11-29T10:00+01:00) or give " +
        "--time-zone (like --time-zone Europe/Berlin) to read it in that zone",
    );
  });

  test("a local time the zone skips is refused, naming the change; nothing is sent", async () => {
    const before = (await a.list("?limit=100")).body.data.length;
    const r = await herald(
      ["posts", "create", "Gap", "--when", "2026-03-29T02:30", "--time-zone", "Europe/Berlin", "--yes"],
      env,
    );
    expect(failed(r, 2)).toBe(
      "herald: --when: 2026-03-29T02:30 does not exist in Europe/Berlin: the clocks move forward from +01:00 " +
        "to +02:00 that day; choose another time or give a UTC offset",
    );
    expect((await a.list("?limit=100")).body.data.length).toBe(before);
  });

  test("herald posts reschedule ID LOCAL --time-zone ZONE; a time that happens twice is the first", async () => {
    const scheduled = ok(await a.create(post("2026-10-20T10:00:00+02:00"))).body.posts[0];
    const out = succeeded(
      await herald(
        [
          "posts",
          "reschedule",
          scheduled.id,
          "2026-10-25T02:30",
          "--time-zone",
          "Europe/Berlin",
          "--yes",
          "--json",
        ],
        env,
      ),
    );
    expect(JSON.parse(out)).toMatchObject({
      scheduled_at: "2026-10-25T00:30:00.000Z",
      time_zone: "Europe/Berlin",
    });
    const bare = await herald(["posts", "reschedule", scheduled.id, "2026-10-26T10:00", "--yes"], env);
    expect(failed(bare, 2)).toContain("herald: TIME 2026-10-26T10:00 has no UTC offset: add one");
  });
});
