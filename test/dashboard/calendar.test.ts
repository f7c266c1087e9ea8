// The week calendar: Monday to Sunday in the workspace's time zone, each post on its local day (across
// the DST change of Europe/Berlin), published posts dimmed, queue windows ahead, week navigation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { weekStart } from "../../src/http/dashboard/calendar.ts";
import { expectDashboardPage } from "./support.ts";
import { pathIn, postsWorld, type PostsWorld } from "./posts-world.ts";

let w: PostsWorld;
beforeAll(async () => {
  w = await postsWorld();
  await w.setTimeZone("Europe/Berlin");
});
afterAll(() => w.stop());

/** The markup of each day column of a calendar page, by local date. */
function days(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const parts = text.split(/<li id="day-/).slice(1);
  for (const part of parts) out.set(part.slice(0, 10), part.split("</ol>")[0]!);
  return out;
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
      "2026-03-23",
      "2026-03-24",
      "2026-03-25",
      "2026-03-26",
      "2026-03-27",
      "2026-03-28",
      "2026-03-29",
    ]);
    expect(week.get("2026-03-28")).toContain(`posts/${saturday.id}"`);
    expect(week.get("2026-03-28")).toContain(">23:30</time>");
    const sunday = week.get("2026-03-29")!;
    expect(sunday).toContain("<h2>Sun 29 Mar</h2>");
    expect(sunday).toContain(`posts/${sundayEarly.id}"`);
    expect(sunday).toContain(`posts/${sundayLate.id}"`);
    expect(sunday.indexOf(sundayEarly.id)).toBeLessThan(sunday.indexOf(sundayLate.id));
    expect(sunday).toContain('<time datetime="2026-03-28T23:30:00.000Z">00:30</time>');
    expect(sunday).toContain('<time datetime="2026-03-29T21:30:00.000Z">23:30</time>');
    expect(r.text).not.toContain(mondayEarly.id);

    const next = await browser.get(pathIn(w.ws, "calendar?week=2026-03-30"));
    const monday = days(next.text).get("2026-03-30")!;
    expect(monday).toContain(`posts/${mondayEarly.id}"`);
    expect(monday).toContain('<time datetime="2026-03-29T22:30:00.000Z">00:30</time>');
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
    expect(week.get("2026-03-01")).toMatch(
      new RegExp(`<li class="cal-post published"><a href="[^"]+${published.id}"`),
    );
    expect(r.text).toContain('<li id="day-2026-03-01" aria-current="date">');
    expect(week.get("2026-03-01")).toContain('<li class="slot">18:00 queue window</li>');
    expect(week.get("2026-02-28")).not.toContain("queue window"); // past windows are not offered
    expect(r.text).toContain(`href="${pathIn(w.ws, "calendar?week=2026-02-16")}">← Previous week`);
    expect(r.text).toContain(`href="${pathIn(w.ws, "calendar?week=2026-03-02")}">Next week →`);
  });

  test("a week that is not a date falls back to this week with a notice", async () => {
    const browser = await w.signedIn();
    const path = pathIn(w.ws, "calendar?week=someday");
    const r = await browser.get(path);
    expect(r.status).toBe(200);
    expectDashboardPage(path, r);
    expect(r.text).toContain("is not a date");
    expect(r.text).toContain('id="day-2026-02-23"');
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
