// Analytics over time: posts bucketed by their local publication date in the workspace's time zone,
// per day or ISO week (Monday start), across a DST change and a week boundary, and the validation of
// the date range.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectProblem } from "../helpers/problems.ts";
import { startEngineWorld, type EngineWorld } from "../posts/engine-helpers.ts";
import { idem } from "../posts/helpers.ts";

let w: EngineWorld;

// Berlin leaves CET (UTC+1) for CEST (UTC+2) at 2026-03-29T01:00Z; 2026-03-30 is a Monday.
const PUBLISHED = [
  { at: "2026-03-28T22:30:00Z", text: "saturday 23:30", likes: 1 }, // local 2026-03-28
  { at: "2026-03-28T23:30:00Z", text: "sunday 00:30", likes: 2 }, // local 2026-03-29 (still CET)
  { at: "2026-03-29T21:30:00Z", text: "sunday 23:30", likes: 4 }, // local 2026-03-29 (CEST)
  { at: "2026-03-29T22:30:00Z", text: "monday 00:30", likes: 8 }, // local 2026-03-30, the next ISO week
];

beforeAll(async () => {
  w = await startEngineWorld();
  const current = await w.s.request("GET", `/v1/workspaces/${w.ws}`);
  const patched = await w.s.request("PATCH", `/v1/workspaces/${w.ws}`, {
    headers: { "if-match": current.headers.get("etag")!, ...idem() },
    body: { time_zone: "Europe/Berlin" },
  });
  expect({ status: patched.status, text: patched.text }).toMatchObject({ status: 200 });
  for (const [i, p] of PUBLISHED.entries()) {
    w.s.clock.set(p.at);
    const r = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, {
      headers: idem(),
      body: {
        when: "now",
        confirmed: true,
        group: `series-${i}`,
        posts: [{ destination_id: w.destinationId, body: [p.text] }],
      },
    });
    expect(r.status).toBe(202);
    await w.s.server.engine.runUntilIdle();
    w.mastodon.statuses.find((s) => s.text === p.text)!.counts = { favourites: p.likes };
  }
  w.s.clock.set("2026-03-31T12:00:00Z");
  await w.s.server.scheduler.runNow("analytics-refresh");
});
afterAll(async () => {
  await w.stop();
});

const series = (query: string) => w.s.request("GET", `/v1/workspaces/${w.ws}/analytics/posts?${query}`);

describe("analytics over time", () => {
  test("by local day across the DST change: every day listed, posts in their local day", async () => {
    const r = await series("from=2026-03-27&until=2026-04-01");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: "analytics_series", bucket: "day", time_zone: "Europe/Berlin" });
    expect(r.body.series.map((b: any) => [b.start, b.posts, b.metrics.reactions])).toEqual([
      ["2026-03-27", 0, 0],
      ["2026-03-28", 1, 1],
      ["2026-03-29", 2, 6],
      ["2026-03-30", 1, 8],
      ["2026-03-31", 0, 0],
    ]);
  });

  test("by ISO week: Monday starts; from is included and until excluded", async () => {
    const r = await series("from=2026-03-28&until=2026-03-30&bucket=week");
    expect(r.body.series.map((b: any) => [b.start, b.posts, b.metrics.reactions])).toEqual([
      ["2026-03-23", 3, 7],
    ]);
    const both = await series("from=2026-03-23&until=2026-04-06&bucket=week");
    expect(both.body.series.map((b: any) => [b.start, b.posts, b.metrics.reactions])).toEqual([
      ["2026-03-23", 3, 7],
      ["2026-03-30", 1, 8],
    ]);
  });

  test("channel and destination filters", async () => {
    const bluesky = await series("from=2026-03-27&until=2026-04-01&channel=bluesky");
    expect(bluesky.body.series.every((b: any) => b.posts === 0)).toBe(true);
    const mastodon = await series(`from=2026-03-27&until=2026-04-01&destination_id=${w.destinationId}`);
    expect(mastodon.body.series.reduce((sum: number, b: any) => sum + b.posts, 0)).toBe(4);
  });

  test.each([
    ["until=2026-04-01", "/from"],
    ["from=2026-03-01", "/until"],
    ["from=2026-02-30&until=2026-04-01", "/from"],
    ["from=27.03.2026&until=2026-04-01", "/from"],
    ["from=2026-04-01&until=2026-04-01", "/until"],
    ["from=2026-04-02&until=2026-04-01", "/until"],
    ["from=2025-01-01&until=2026-01-03", "/until"],
    ["from=2026-03-01&until=2026-04-01&bucket=month", "/bucket"],
  ])("%s is 400 pointing at %s", async (query, pointer) => {
    expectProblem(await series(query), 400, "public_invalid_request", [pointer]);
  });

  test("366 days is the longest range", async () => {
    expect((await series("from=2025-01-01&until=2026-01-02")).status).toBe(200);
  });
});
