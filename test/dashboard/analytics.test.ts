// Analytics pages: the series over a range (small SVG charts and the same numbers in a table), a
// published group's totals with coverage and its posts, the rate-limited "refresh now", and the chart
// functions on their own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { waitInWords } from "../../src/http/dashboard/analytics-group.ts";
import {
  barChart,
  chartSummary,
  niceScale,
  shortNumber,
  stackedBars,
  tickIndexes,
} from "../../src/http/dashboard/charts.ts";
import { defaultRange } from "../../src/http/dashboard/analytics.ts";
import { REFRESHES_PER_HOUR } from "../../src/modules/analytics/service.ts";
import { idem } from "../posts/helpers.ts";
import { attributeOf, expectDashboardPage, formOf, headingOf, screenOf, textOf } from "./support.ts";
import { pathIn, postsWorld, type PostsWorld } from "./posts-world.ts";

describe("chart functions", () => {
  test("the scale tops at a round number in about four whole steps", () => {
    expect([0, 1, 2, 3, 7, 11, 42, 180, 999, 1001].map((n) => niceScale(n))).toEqual([
      { top: 1, step: 1 },
      { top: 1, step: 1 },
      { top: 2, step: 1 },
      { top: 3, step: 1 },
      { top: 8, step: 2 },
      { top: 15, step: 5 },
      { top: 60, step: 20 },
      { top: 200, step: 50 },
      { top: 1000, step: 500 },
      { top: 1500, step: 500 },
    ]);
  });
  test("numbers on the axis are short", () => {
    expect([5, 1200, 3_000_000, 2_500_000_000].map(shortNumber)).toEqual(["5", "1.2k", "3M", "2.5G"]);
  });
  test("ticks: about twelve on a laptop, about five of them also on a phone", () => {
    const ticks = tickIndexes(28);
    expect(ticks.map((t) => t.index)).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 24, 27]);
    expect(ticks.filter((t) => t.narrow).map((t) => t.index)).toEqual([0, 6, 12, 18, 24]);
    expect(tickIndexes(3)).toEqual([
      { index: 0, narrow: true },
      { index: 1, narrow: true },
      { index: 2, narrow: true },
    ]);
    expect(tickIndexes(0)).toEqual([]);
  });
  test("bars stack their series, each as tall as its share of the scale", () => {
    const bars = stackedBars(
      [
        { name: "a", values: [5, 10, 0] },
        { name: "b", values: [5, 0, 0] },
      ],
      3,
      10,
      100,
    );
    expect(bars.map((segments) => segments.map((b) => [b.series, b.y, b.height]))).toEqual([
      [
        [0, 50, 50],
        [1, 0, 50],
      ],
      [[0, 0, 100]],
      [],
    ]);
    expect(bars[1]![0]!.x).toBeGreaterThan(bars[0]![0]!.x);
    expect(bars[0]![0]!.width).toBeCloseTo(23.33, 1);
  });
  test("the chart is a figure: a named image, a legend, its axis, a summary and its numbers", () => {
    const spec = {
      id: "c1",
      title: "Likes <per> day",
      unit: "likes",
      axis: "Day of publication (UTC)",
      categories: [
        { label: "Mon 2 Mar 2026", tick: "2 Mar" },
        { label: "x&y", tick: "3 Mar" },
      ],
      series: [
        { name: "Likes", values: [1, 2] },
        { name: "Boosts", values: [0, 3] },
      ],
    };
    const svg = barChart(spec).text;
    expect(svg).not.toContain("x&y");
    expect(svg).not.toMatch(/\sstyle=/);
    const screen = screenOf(svg);
    const chart = screen.getByRole("img", { name: "Likes <per> day" });
    expect(screen.descriptionOf(chart)).toBe(
      "From Mon 2 Mar 2026 to x&y: 6 likes in all, the most (5) on x&y.",
    );
    expect(chartSummary({ ...spec, series: [{ name: "Likes", values: [0, 0] }] })).toBe(
      "From Mon 2 Mar 2026 to x&y: no likes.",
    );
    // Each bar's tooltip names its day, its series and its value; the top line says the unit.
    expect(screen.within(chart).text()).toContain("x&y · Boosts: 3 of 5");
    expect(svg.match(/<rect /g)).toHaveLength(3);
    const texts = screen.elements("text").map((t) => textOf(t));
    expect(texts).toContain("6 likes");
    expect(texts).toContain("Day of publication (UTC)");
    expect(texts).toContain("2 Mar");
    expect(
      screen.within(screen.getByRole("list", { name: "Legend of Likes <per> day" })).namesOf("listitem"),
    ).toEqual(["Likes (3 in all)", "Boosts (3 in all)"]);
    expect(screen.rowsOf(screen.getByRole("table", { name: "Likes <per> day" }))).toEqual([
      ["Day of publication (UTC)", "Likes", "Boosts", "Total"],
      ["Mon 2 Mar 2026", "1", "0", "1"],
      ["x&y", "2", "3", "5"],
    ]);
  });
  test("waits read as words", () => {
    expect([1, 45, 60, 61, 600, 3600, 3900].map(waitInWords)).toEqual([
      "1 second",
      "45 seconds",
      "1 minute",
      "2 minutes",
      "10 minutes",
      "1 hour",
      "1 hour 5 minutes",
    ]);
  });
  test("the default range is the last 28 local days, today included", () => {
    expect(defaultRange("UTC", Date.parse("2026-03-01T12:00:00Z"))).toEqual({
      from: "2026-02-02",
      until: "2026-03-02",
    });
  });
});

let w: PostsWorld;
let group: string;
let ids: string[];
beforeAll(async () => {
  w = await postsWorld();
  group = "launch-day";
  const created = await w.call(
    "POST",
    `/v1/workspaces/${w.ws}/posts`,
    {
      when: "now",
      confirmed: true,
      group,
      posts: [{ destination_id: w.destinationId, body: ["launch numbers"] }],
    },
    idem(),
  );
  expect(created.status).toBe(202);
  ids = created.body.posts.map((p: { id: string }) => p.id);
  const other = await w.create("now", "second of the day");
  await w.run();
  w.bluesky.records.find((r) => r.record.text === "launch numbers")!.counts = {
    likes: 7,
    reposts: 3,
    replies: 2,
    bookmarks: 1,
  };
  w.bluesky.records.find((r) => r.record.text === "second of the day")!.counts = { likes: 4 };
  expect(other.id).toBeTruthy();
  w.s.clock.advance(10 * 60_000);
  await w.s.server.scheduler.runNow("analytics-refresh");
});
afterAll(() => w.stop());

describe("the series page", () => {
  test("shows the last 28 days by default, as charts and as a table", async () => {
    const browser = await w.signedIn();
    const path = pathIn(w.ws, "analytics");
    const r = await browser.get(path);
    expect(r.status).toBe(200);
    expectDashboardPage(path, r);
    const screen = screenOf(r.text);
    const from = screen.getByLabelText("From (included)");
    const until = screen.getByLabelText("Until (excluded)");
    expect([attributeOf(from, "type"), attributeOf(from, "value")]).toEqual(["date", "2026-02-02"]);
    expect([attributeOf(until, "type"), attributeOf(until, "value")]).toEqual(["date", "2026-03-02"]);
    expect(attributeOf(formOf(from)!, "method")).toBe("get");
    const charts = screen.namesOf("img");
    expect(charts).toEqual(["Posts published per day", "Interactions per day"]); // no views measured
    const interactions = screen.getByRole("img", { name: "Interactions per day" });
    expect(screen.descriptionOf(interactions)).toBe(
      "From Mon 2 Feb 2026 to Sun 1 Mar 2026: 17 interactions in all, the most (17) on Sun 1 Mar 2026.",
    );
    const legend = screen.getByRole("list", { name: "Legend of Interactions per day" });
    expect(screen.within(legend).namesOf("listitem")).toEqual([
      "Comments (2 in all)",
      "Reactions (11 in all)",
      "Shares (3 in all)",
      "Saves (1 in all)",
    ]);
    const axis = screen
      .within(interactions)
      .elements("text")
      .map((t) => textOf(t));
    expect(axis).toContain("Day of publication (UTC)");
    expect(axis).toContain("20 interactions");
    expect(axis).toContain("2 Feb");
    const numbers = screen.rowsOf(screen.getByRole("table", { name: "Interactions per day" }));
    expect(numbers[0]).toEqual([
      "Day of publication (UTC)",
      "Comments",
      "Reactions",
      "Shares",
      "Saves",
      "Total",
    ]);
    expect(numbers).toContainEqual(["Sun 1 Mar 2026", "2", "11", "3", "1", "17"]);
    // Sunday 1 March: two posts, 2 comments, 11 reactions, 3 shares, 1 save.
    const rows = screen.rowsOf(screen.getByRole("table", { name: "Posts and their numbers per day" }));
    expect(rows).toContainEqual(["Sun 1 Mar 2026", ...[2, 0, 0, 2, 11, 3, 1, 0].map(String)]);
    expect(rows.find((cells) => cells[0] === "Mon 2 Feb 2026")?.[1]).toBe("0");
    expect(attributeOf(screen.getByRole("link", { name: group }), "href")).toBe(
      pathIn(w.ws, `analytics/${group}`),
    );
  });

  test("by week, and an invalid range shows the API's errors next to the fields", async () => {
    const browser = await w.signedIn();
    const weekly = await browser.get(pathIn(w.ws, "analytics?from=2026-02-23&until=2026-03-09&bucket=week"));
    expect(weekly.status).toBe(200);
    const weeks = screenOf(weekly.text);
    const rows = weeks.rowsOf(weeks.getByRole("table", { name: "Posts and their numbers per week" }));
    expect(rows.find((cells) => cells[0] === "Week of 23 Feb 2026")?.[1]).toBe("2");
    expect(rows.find((cells) => cells[0] === "Week of 2 Mar 2026")?.[1]).toBe("0");
    const path = pathIn(w.ws, "analytics?from=2026-03-10&until=2026-03-01");
    const bad = await browser.get(path);
    expect(bad.status).toBe(400);
    expectDashboardPage(path, bad);
    const screen = screenOf(bad.text);
    const until = screen.getByLabelText("Until (excluded)");
    expect(attributeOf(until, "aria-invalid")).toBe("true");
    expect(screen.descriptionOf(until)).toBe("must be a later date than from");
    expect(attributeOf(screen.getByLabelText("From (included)"), "value")).toBe("2026-03-10"); // what was asked is kept
  });
});

describe("a group's page", () => {
  test("shows totals with coverage and a row per post", async () => {
    const browser = await w.signedIn();
    const path = pathIn(w.ws, `analytics/${group}`);
    const r = await browser.get(path);
    expect(r.status).toBe(200);
    expectDashboardPage(path, r);
    const screen = screenOf(r.text);
    expect(headingOf(r)).toBe(`Group ${group}`);
    const totals = screen.getByRole("table", { name: /^Totals with coverage/ });
    expect(screen.rowsOf(totals)).toContainEqual(["Reactions", "7", "1 of 1 posts read"]);
    const posts = screen.within(screen.getByRole("table", { name: /^Each post of the group/ }));
    expect(attributeOf(posts.getByRole("link", { name: "bluesky" }), "href")).toBe(
      pathIn(w.ws, `posts/${ids[0]}`),
    );
    expect(posts.getAllByRole("cell", { name: "fresh" })).toHaveLength(1);
    const totalsChart = screen.getByRole("img", { name: `Totals of the group ${group}` });
    expect(screen.descriptionOf(totalsChart)).toBe("The most: Reactions (7).");
    // Every metric named under its bar (short), the axis named, the legend without a meaningless sum.
    expect(
      screen
        .within(totalsChart)
        .elements("text")
        .map((t) => textOf(t))
        .slice(-8),
    ).toEqual([
      "views",
      "impr.",
      "comm.",
      "react.",
      "shares",
      "saves",
      "clicks",
      "Metric (all posts of the group)",
    ]);
    const legend = screen.getByRole("list", { name: `Legend of Totals of the group ${group}` });
    expect(screen.within(legend).namesOf("listitem")).toEqual(["Total of all posts"]);
    expect(screen.getByRole("button", { name: "Refresh now" })).toBeDefined();
  });

  test("refresh now asks the networks again; past the hourly limit it says when to try again", async () => {
    const browser = await w.signedIn();
    const path = pathIn(w.ws, `analytics/${group}`);
    const refused = await browser.post(`${path}/refresh`, { csrf_token: "forged" });
    expect(refused.status).toBe(403);
    const r = await browser.submit(path, {}, `${path}/refresh`);
    expect({ status: r.status, location: r.location }).toEqual({
      status: 303,
      location: `${path}?notice=refreshing`,
    });
    const after = await browser.get(r.location!);
    const notice = screenOf(after.text);
    expect(notice.within(notice.getByRole("status")).text()).toBe(
      "The networks are asked for fresh numbers; reload in a minute.",
    );
    for (let i = 1; i < REFRESHES_PER_HOUR; i++) {
      const answer = await w.call(
        "POST",
        `/v1/workspaces/${w.ws}/analytics/post-groups/${group}/refresh`,
        {},
      );
      expect(answer.status).toBe(202);
    }
    const limited = await browser.submit(path, {}, `${path}/refresh`);
    expect(limited.status).toBe(429);
    expectDashboardPage(`${path}/refresh`, limited);
    expect(screenOf(limited.text).text()).toContain("Try again in 1 hour.");
  });

  test("a member sees it and may refresh; an unknown group and a foreign workspace are 404", async () => {
    const member = await w.signedInAs("member");
    const page = await member.get(pathIn(w.ws, `analytics/${group}`));
    expect(page.status).toBe(200);
    expect(screenOf(page.text).getByRole("button", { name: "Refresh now" })).toBeDefined();
    const unknown = pathIn(w.ws, "analytics/never-published");
    const missing = await member.get(unknown);
    expect(missing.status).toBe(404);
    expectDashboardPage(unknown, missing);
    expect((await member.get(pathIn(w.foreignWorkspaceId, "analytics"))).status).toBe(404);
    expect((await member.get(pathIn(w.foreignWorkspaceId, `analytics/${group}`))).status).toBe(404);
  });
});
