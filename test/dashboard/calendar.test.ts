// The week calendar: Monday to Sunday in the workspace's time zone, each post on its local day (across
// the DST change of Europe/Berlin), published posts dimmed, queue windows ahead, week navigation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { weekStart } from "../../src/http/dashboard/calendar.ts";
import type { Element } from "domhandler";
import type { Screen } from "../helpers/screen.ts";
import { attributeOf, expectDashboardPage, screenOf, textOf } from "./support.ts";
import { pathIn, postsWorld, type PostsWorld } from "./posts-world.ts";

let w: PostsWorld;
beforeAll(async () => {
  w = await postsWorld();
  await w.setTimeZone("Europe/Berlin");
});
afterAll(() => w.stop());

/** Each day column of a calendar page, by its heading as shown ("Sun 29 Mar"). */
function days(text: string): Map<string, Screen & { item: Element }> {
  const screen = screenOf(text);
  const out = new Map<string, Screen & { item: Element }>();
  for (const heading of screen.getAllByRole("heading", { level: 2 })) {
    const item = heading.parent as Element;
    if (item.name === "li") out.set(textOf(heading), Object.assign(screen.within(item), { item }));
  }
  return out;
}

/** A day's entry of a post: the link to it, its time as shown and the instant it stands for. */
function entry(day: Screen, postId: string) {
  const links = day.getAllByRole("link").filter((a) => attributeOf(a, "href")!.endsWith(`/posts/${postId}`));
  if (links.length !== 1) return null;
  const time = day.within(links[0]!).getByRole("time");
  return { link: links[0]!, shown: textOf(time), instant: attributeOf(time, "datetime") };
}

describe("weekStart", () => {
  test("is the local Monday of any day of the week, or null for what is not a date", () => {
    const now = Date.parse("2026-03-01T12:00:00Z");
    expect(weekStart("2026-03-29", "Europe/Berlin", now)!.toISO()).toBe("2026-03-23T00:00:00.000+01:00");
    expect(weekStart("2026-03-30", "Europe/Berlin", now)!.toISO()).toBe("2026-03-30T00:00:00.000+02:00");
    expect(weekStart(null, "Europe/Berlin", now)!.toISODate()).toBe("2026-02-23");
    expect(weekStart("2026-02-30", "UTC", now)).toBeNull();
    expect(weekStart("yesterday", "UTC", now)).toBeNull();
  });
});

describe("the week", () => {
  test("puts each post on its local day across the DST change", async () => {
    // Berlin leaves CET (UTC+1) for CEST (UTC+2) at 2026-03-29T01:00Z.
    const sundayEarly = await w.create("2026-03-28T23:30:00Z", "sunday 00:30 CET");
    const sundayLate = await w.create("2026-03-29T21:30:00Z", "sunday 23:30 CEST");
    const mondayEarly = await w.create("2026-03-29T22:30:00Z", "monday 00:30 CEST");
    const saturday = await w.create("2026-03-28T22:30:00Z", "saturday 23:30 CET");
    const browser = await w.signedIn();

    const path = pathIn(w.ws, "calendar?week=2026-03-25");
    const r = await browser.get(path);
    expect(r.status).toBe(200);
    expectDashboardPage(path, r);
    const week = days(r.text);
    expect([...week.keys()]).toEqual([
      "Mon 23 Mar",
      "Tue 24 Mar",
      "Wed 25 Mar",
      "Thu 26 Mar",
      "Fri 27 Mar",
      "Sat 28 Mar",
      "Sun 29 Mar",
    ]);
    expect(entry(week.get("Sat 28 Mar")!, saturday.id)).toMatchObject({ shown: "23:30" });
    const sunday = week.get("Sun 29 Mar")!;
    expect(entry(sunday, sundayEarly.id)).toMatchObject({
      shown: "00:30",
      instant: "2026-03-28T23:30:00.000Z",
    });
    expect(entry(sunday, sundayLate.id)).toMatchObject({
      shown: "23:30",
      instant: "2026-03-29T21:30:00.000Z",
    });
    const sundayLinks = sunday.getAllByRole("link");
    expect(sundayLinks.indexOf(entry(sunday, sundayEarly.id)!.link)).toBeLessThan(
      sundayLinks.indexOf(entry(sunday, sundayLate.id)!.link),
    );
    for (const day of week.values()) expect(entry(day, mondayEarly.id)).toBeNull();
    expect(r.text).not.toContain(mondayEarly.id);

    const next = await browser.get(pathIn(w.ws, "calendar?week=2026-03-30"));
    const monday = days(next.text).get("Mon 30 Mar")!;
    expect(entry(monday, mondayEarly.id)).toMatchObject({
      shown: "00:30",
      instant: "2026-03-29T22:30:00.000Z",
    });
    expect(next.text).not.toContain(sundayLate.id);
  });

  test("published posts are dimmed; queue windows ahead show as empty slots", async () => {
    const put = await w.call("PUT", `/v1/workspaces/${w.ws}/queue`, {
      windows: [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, local_time: "18:00" })),
    });
    expect(put.status).toBe(200);
    const published = await w.create("now", "out on sunday");
    await w.run();
    const browser = await w.signedIn();
    // Now is Sunday 2026-03-01 13:00 in Berlin: this week is 23 February to 1 March.
    const r = await browser.get(pathIn(w.ws, "calendar"));
    expectDashboardPage(pathIn(w.ws, "calendar"), r);
    const week = days(r.text);
    const sunday = week.get("Sun 1 Mar")!;
    const shown = entry(sunday, published.id)!;
    expect(attributeOf(shown.link.parent as Element, "class")).toBe("cal-post published");
    const current = [...week].filter(([, day]) => attributeOf(day.item, "aria-current") === "date");
    expect(current.map(([name]) => name)).toEqual(["Sun 1 Mar"]);
    expect(sunday.getAllByRole("listitem", { name: "Free · 18:00" })).toHaveLength(1);
    // Past windows are not offered.
    expect(week.get("Sat 28 Feb")!.getAllByRole("listitem", { name: /^Free/ })).toEqual([]);
    const screen = screenOf(r.text);
    const weeks = screen.within(screen.getByRole("navigation", { name: "Weeks" }));
    expect(attributeOf(weeks.getByRole("link", { name: "← Previous week" }), "href")).toBe(
      pathIn(w.ws, "calendar?week=2026-02-16"),
    );
    expect(attributeOf(weeks.getByRole("link", { name: "Next week →" }), "href")).toBe(
      pathIn(w.ws, "calendar?week=2026-03-02"),
    );
  });

  test("a week that is not a date falls back to this week with a notice", async () => {
    const browser = await w.signedIn();
    const path = pathIn(w.ws, "calendar?week=someday");
    const r = await browser.get(path);
    expect(r.status).toBe(200);
    expectDashboardPage(path, r);
    const screen = screenOf(r.text);
    expect(screen.within(screen.getByRole("status")).text()).toBe(
      "someday is not a date (YYYY-MM-DD); this is the current week.",
    );
    expect([...days(r.text).keys()][0]).toBe("Mon 23 Feb");
  });

  test("a member sees the calendar; a foreign workspace is 404", async () => {
    const member = await w.signedInAs("member");
    expect((await member.get(pathIn(w.ws, "calendar?week=2026-03-25"))).status).toBe(200);
    const path = pathIn(w.foreignWorkspaceId, "calendar");
    const r = await member.get(path);
    expect(r.status).toBe(404);
    expectDashboardPage(path, r);
  });
});
