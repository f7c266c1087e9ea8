// Moving posts on the week calendar without the script: each scheduled post has a Move form (a day, and
// a time or none) that calls the API's move (a queued post to the day's first free window) or
// reschedule (an exact time), checked through the API afterwards; free queue windows show as labelled
// slots; a stale page, a forged form and a bad day change nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Element } from "domhandler";
import type { TestBrowser } from "../helpers/browser.ts";
import { attributeOf, expectDashboardPage, noticesOf, screenOf, textOf } from "./support.ts";
import { pathIn, postsWorld, type PostsWorld } from "./posts-world.ts";

let w: PostsWorld;
beforeAll(async () => {
  w = await postsWorld();
  await w.setTimeZone("Europe/Berlin");
  // Now is Sunday 1 March 2026, 13:00 in Berlin.
  const put = await w.call("PUT", `/v1/workspaces/${w.ws}/queue`, {
    windows: [1, 2, 3, 4, 5, 6, 7].flatMap((weekday) => [
      { weekday, local_time: "09:00" },
      { weekday, local_time: "18:00" },
    ]),
  });
  expect(put.status).toBe(200);
});
afterAll(() => w.stop());

const week = (day: string) => pathIn(w.ws, `calendar?week=${day}`);

/** A day column of a calendar page by its heading ("Mon 2 Mar"). */
function day(text: string, heading: string) {
  const screen = screenOf(text);
  const h2 = screen.getAllByRole("heading", { level: 2 }).find((h) => textOf(h) === heading)!;
  return screen.within(h2.parent as Element);
}

/** The Move form of a post on a calendar page: its action and its fields as the page fills them. */
function moveFormOf(text: string, postId: string): { action: string; fields: Record<string, string> } | null {
  const screen = screenOf(text);
  const form = screen.elements("form").find((f) =>
    screen
      .within(f)
      .elements("input")
      .some((i) => attributeOf(i, "name") === "post_id" && attributeOf(i, "value") === postId),
  );
  if (!form) return null;
  const fields: Record<string, string> = {};
  for (const input of screen.within(form).elements("input"))
    fields[attributeOf(input, "name")!] = attributeOf(input, "value") ?? "";
  return { action: attributeOf(form, "action")!, fields };
}

/** Opens `page` and sends the post's Move form with `fields` (as a browser without the script would). */
async function move(browser: TestBrowser, page: string, postId: string, fields: Record<string, string>) {
  const opened = await browser.get(page);
  expect(opened.status).toBe(200);
  const form = moveFormOf(opened.text, postId);
  expect(form).not.toBeNull();
  return browser.post(form!.action, { ...form!.fields, ...fields });
}

describe("free queue windows", () => {
  test("each free window ahead is a labelled slot; a taken or past one is not", async () => {
    const queued = await w.create("queue", "queued for sunday evening");
    expect(queued.scheduled_at).toBe("2026-03-01T17:00:00.000Z");
    const browser = await w.signedIn();
    const r = await browser.get(week("2026-03-01"));
    expectDashboardPage(week("2026-03-01"), r);
    // Sunday: 09:00 is past and 18:00 taken by the queued post.
    expect(day(r.text, "Sun 1 Mar").getAllByRole("listitem", { name: /^Free/ })).toEqual([]);
    const next = await browser.get(week("2026-03-02"));
    expect(
      day(next.text, "Mon 2 Mar")
        .namesOf("listitem")
        .filter((n) => n.startsWith("Free")),
    ).toEqual(["Free · 09:00", "Free · 18:00"]);
    await w.call("POST", `/v1/workspaces/${w.ws}/posts/${queued.id}/cancel`, { confirmed: true });
  });
});

describe("the Move form", () => {
  test("a queued post moved to a day takes that day's first free window", async () => {
    const queued = await w.create("queue", "queued, to move");
    const browser = await w.signedIn();
    const page = week("2026-03-01");
    const shown = await browser.get(page);
    const sunday = day(shown.text, "Sun 1 Mar");
    // The form is named for its post; its day starts at the post's own day, its time empty.
    const button = sunday.getByRole("button", {
      name: "Move the bluesky · alice.test post of Sun 1 Mar 18:00",
    });
    expect(button).toBeDefined();
    expect(attributeOf(sunday.getByLabelText("Day"), "value")).toBe("2026-03-01");
    expect(sunday.descriptionOf(sunday.getByLabelText("Time"))).toBe(
      "Empty: the day's first free queue window.",
    );

    const r = await move(browser, page, queued.id, { local_date: "2026-03-03", local_time: "" });
    expect({ status: r.status, location: r.location }).toEqual({
      status: 303,
      location: `${week("2026-03-03")}&notice=moved`,
    });
    expect(await w.post(queued.id)).toMatchObject({
      state: "scheduled",
      schedule_mode: "queue",
      scheduled_at: "2026-03-03T08:00:00.000Z",
      queue_local_date: "2026-03-03",
    });
    const after = await browser.get(r.location!);
    expectDashboardPage(r.location!, after);
    expect(noticesOf(after)).toContain("The post was moved; it is shown at its new time.");
    const tuesday = day(after.text, "Tue 3 Mar");
    expect(tuesday.getByRole("link", { name: /^09:00 bluesky: queued, to move$/ })).toBeDefined();
    expect(tuesday.namesOf("listitem").filter((n) => n.startsWith("Free"))).toEqual(["Free · 18:00"]);
  });

  test("a post at an exact time keeps its time of day, or takes the time given", async () => {
    const exact = await w.create("2026-03-04T09:30:00Z", "exact, to move");
    const browser = await w.signedIn();
    const first = await move(browser, week("2026-03-04"), exact.id, { local_date: "2026-03-05" });
    expect(first.status).toBe(303);
    expect(await w.post(exact.id)).toMatchObject({ scheduled_at: "2026-03-05T09:30:00.000Z" });
    const second = await move(browser, week("2026-03-05"), exact.id, {
      local_date: "2026-03-06",
      local_time: "14:15",
    });
    expect(second.status).toBe(303);
    expect(await w.post(exact.id)).toMatchObject({
      state: "scheduled",
      schedule_mode: "exact",
      scheduled_at: "2026-03-06T13:15:00.000Z",
    });
  });

  test("a queued post dropped on a free slot takes exactly that slot's time", async () => {
    const queued = await w.create("queue", "queued, to a slot");
    const browser = await w.signedIn();
    const before = await w.post(queued.id);
    const page = week(before.queue_local_date);
    const r = await move(browser, page, queued.id, { local_date: "2026-03-07", local_time: "18:00" });
    expect(r.status).toBe(303);
    expect(await w.post(queued.id)).toMatchObject({
      schedule_mode: "exact",
      scheduled_at: "2026-03-07T17:00:00.000Z",
    });
  });

  test("a post that moved since the page was shown is not moved again", async () => {
    const exact = await w.create("2026-03-10T08:00:00Z", "moved elsewhere meanwhile");
    const browser = await w.signedIn();
    const page = week("2026-03-10");
    const stale = moveFormOf((await browser.get(page)).text, exact.id)!;
    const elsewhere = await w.call("POST", `/v1/workspaces/${w.ws}/posts/${exact.id}/reschedule`, {
      confirmed: true,
      scheduled_at: "2026-03-11T08:00:00Z",
    });
    expect(elsewhere.status).toBe(200);
    const r = await browser.post(stale.action, { ...stale.fields, local_date: "2026-03-12" });
    expect(r.status).toBe(409);
    expectDashboardPage(stale.action, r);
    const screen = screenOf(r.text);
    expect(textOf(screen.getByRole("alert"))).toBe(
      "The post changed since the calendar was shown: here it is as it is now.",
    );
    // The week shown is the one the person was on, with the post where it is now.
    expect(day(r.text, "Wed 11 Mar").getByRole("link", { name: /moved elsewhere meanwhile/ })).toBeDefined();
    expect((await w.post(exact.id)).scheduled_at).toBe("2026-03-11T08:00:00.000Z");
  });

  test("the API's refusal is shown; a bad day and a forged form change nothing", async () => {
    const exact = await w.create("2026-03-16T08:00:00Z", "stays put");
    const browser = await w.signedIn();
    const page = week("2026-03-16");
    const past = await move(browser, page, exact.id, { local_date: "2026-02-01", local_time: "10:00" });
    expect(past.status).toBe(422);
    expectDashboardPage(pathIn(w.ws, "calendar/move"), past);
    expect(textOf(screenOf(past.text).getByRole("alert"))).toBe("The new time is in the past.");
    const bad = await move(browser, page, exact.id, { local_date: "2026-02-30" });
    expect(bad.status).toBe(422);
    expect(textOf(screenOf(bad.text).getByRole("alert"))).toBe("Choose the day to move the post to.");
    const form = moveFormOf((await browser.get(page)).text, exact.id)!;
    const forged = await browser.post(form.action, {
      ...form.fields,
      csrf_token: "forged",
      local_date: "2026-03-17",
    });
    expect(forged.status).toBe(403);
    expect((await w.post(exact.id)).scheduled_at).toBe("2026-03-16T08:00:00.000Z");
  });

  test("a published post has no Move form", async () => {
    const published = await w.create("now", "out already");
    await w.run();
    const browser = await w.signedIn();
    const r = await browser.get(week("2026-03-01"));
    expect(moveFormOf(r.text, published.id)).toBeNull();
    expect(day(r.text, "Sun 1 Mar").getByRole("link", { name: /out already/ })).toBeDefined();
  });
});
