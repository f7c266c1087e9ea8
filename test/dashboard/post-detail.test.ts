// A post's page: its content, attempts and receipts, and the actions its state allows (cancel, retry
// with the duplicate-risk acknowledgement, reschedule in the workspace's time zone, publish or schedule
// a draft, delete a draft), each working without JavaScript and refused without the CSRF token.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Screen } from "../helpers/screen.ts";
import {
  attributeOf,
  badgesIn,
  expectDashboardPage,
  headingOf,
  hiddenFields,
  noticesOf,
  screenOf,
  valueOf,
} from "./support.ts";
import { pathIn, postsWorld, type PostsWorld } from "./posts-world.ts";
import { replaceBlueskyRecord } from "../posts/engine-helpers.ts";

let w: PostsWorld;
beforeAll(async () => {
  w = await postsWorld();
  await w.setTimeZone("Europe/Berlin");
});
afterAll(() => w.stop());

const detail = (id: string) => pathIn(w.ws, `posts/${id}`);

/** A table of the page by its caption, as records by column (none when it is not shown). */
function recordsIn(screen: Screen, caption: string): Record<string, string>[] {
  const table = screen.queryByRole("table", { name: caption });
  return table ? screen.recordsOf(table) : [];
}

const ACKNOWLEDGE = "I checked the network: send it even if that makes a duplicate.";

/** A post whose last attempt reached Bluesky but never got an answer (outcome unknown). */
async function needingAttention(text: string): Promise<any> {
  w.bluesky.hangAfterReceive = true;
  const post = await w.create("now", text);
  try {
    await w.run();
  } finally {
    w.bluesky.hangAfterReceive = false;
  }
  // A minute later Herald reads its record key back and finds a record it did not write: it cannot tell.
  await replaceBlueskyRecord(w.bluesky, post.id, "edited by another app");
  w.s.clock.advance(61_000);
  await w.run();
  const read = await w.post(post.id);
  expect(read).toMatchObject({ state: "needs-attention", retry_safety: "unsafe" });
  return read;
}

describe("a post's page", () => {
  test("shows content, destination, the group's other posts, attempts, receipts, analytics", async () => {
    const post = await w.create("now", ["hello from the dashboard", "and a reply"]);
    await w.run();
    const sibling = await w.create("draft", "the same group, still a draft", { group: post.group });
    const browser = await w.signedIn();
    const path = detail(post.id);
    const r = await browser.get(path);
    expect(r.status).toBe(200);
    expectDashboardPage(path, r);
    const screen = screenOf(r.text);
    expect(headingOf(r)).toBe("hello from the dashboard");
    expect(screen.namesOf("listitem")).toEqual(
      expect.arrayContaining(["hello from the dashboard", "and a reply"]),
    );
    expect(badgesIn(screen.getByRole("main"))[0]).toEqual({ text: "published", tone: "ok" });
    expect(recordsIn(screen, "Publishing attempts")[0]).toMatchObject({
      "#": "1",
      Trigger: "initial",
      Outcome: "succeeded",
    });
    const items = recordsIn(screen, "Published items");
    expect(items.length).toBe(2);
    for (const item of items) expect(item.Address).toStartWith("https://bsky.app/profile/alice.test/post/");
    expect(screen.getByRole("heading", { level: 2, name: "Other posts of the group" })).toBeDefined();
    expect(screen.getAllByRole("link").map((a) => attributeOf(a, "href"))).toContain(detail(sibling.id));
    const analytics = screen.getByRole("link", { name: `Analytics of the group ${post.group}` });
    expect(attributeOf(analytics, "href")).toBe(pathIn(w.ws, `analytics/${post.group}`));
    expect(screen.definitions()["Times shown in"]).toBe("Europe/Berlin");
    // A published post has no actions (a comment and a review link can still be added).
    expect(screen.queryByRole("heading", { name: "Actions" })).toBeNull();
    expect(screen.getAllByRole("button").map((b) => screen.nameOf(b))).toEqual([
      "Sign out",
      "Add the comment",
      "Create a review link",
    ]);
  });

  test("an unknown post and a foreign workspace are 404", async () => {
    const browser = await w.signedIn();
    const missing = detail("send_doesnotexist");
    const r = await browser.get(missing);
    expect(r.status).toBe(404);
    expectDashboardPage(missing, r);
    const post = await w.create("draft", "mine");
    expect((await browser.get(pathIn(w.foreignWorkspaceId, `posts/${post.id}`))).status).toBe(404);
    expect(
      (await browser.post(`${pathIn(w.foreignWorkspaceId, `posts/${post.id}`)}/cancel`, {})).status,
    ).toBe(404);
  });
});

describe("actions", () => {
  test("cancel: a scheduled post is cancelled, with a notice after the redirect", async () => {
    const post = await w.create("2026-03-20T10:00:00Z", "to be cancelled");
    const browser = await w.signedIn();
    const r = await browser.submit(detail(post.id), {}, `${detail(post.id)}/cancel`);
    expect({ status: r.status, location: r.location }).toEqual({
      status: 303,
      location: `${detail(post.id)}?notice=cancelled`,
    });
    expect((await w.post(post.id)).state).toBe("cancelled");
    const after = await browser.get(r.location!);
    expectDashboardPage(r.location!, after);
    expect(noticesOf(after)).toContain("The post was cancelled.");
  });

  test("every action form is refused without this browser's CSRF token and changes nothing", async () => {
    const scheduled = await w.create("2026-03-21T10:00:00Z", "csrf scheduled");
    const draft = await w.create("draft", "csrf draft");
    const browser = await w.signedIn();
    for (const [id, action] of [
      [scheduled.id, "cancel"],
      [scheduled.id, "retry"],
      [scheduled.id, "reschedule"],
      [draft.id, "publish"],
      [draft.id, "delete"],
    ] as const) {
      const r = await browser.post(`${detail(id)}/${action}`, {
        csrf_token: "forged",
        scheduled_at: "2026-04-01T10:00",
      });
      expect({ action, status: r.status }).toEqual({ action, status: 403 });
    }
    expect((await w.post(scheduled.id)).state).toBe("scheduled");
    expect((await w.post(draft.id)).state).toBe("draft");
  });

  test("retry of an unknown outcome needs the acknowledgement: the API's error is by the box", async () => {
    const post = await needingAttention("maybe out already");
    const browser = await w.signedIn();
    const path = detail(post.id);
    const page = await browser.get(path);
    expectDashboardPage(path, page);
    const screen = screenOf(page.text);
    expect(screen.text()).toContain("may already be on the network");
    const retry = screen.within(screen.getByRole("region", { name: "Send again" }));
    expect(retry.getByRole("checkbox", { name: ACKNOWLEDGE, checked: false })).toBeDefined();

    const refused = await browser.submit(path, {}, `${path}/retry`);
    expect(refused.status).toBe(409);
    expectDashboardPage(`${path}/retry`, refused);
    const problems = screenOf(refused.text);
    const retrySection = problems.within(problems.getByRole("region", { name: "Send again" }));
    const box = retrySection.getByRole("checkbox", { name: ACKNOWLEDGE });
    expect(attributeOf(box, "aria-invalid")).toBe("true");
    expect(problems.descriptionOf(box)).toStartWith("must be true");
    const summary = problems.within(problems.getByRole("alert", { name: "There is a problem" }));
    const link = summary.getByRole("link", { name: /^Duplicate risk: must be true/ });
    expect(attributeOf(link, "href")).toBe(`#${attributeOf(box, "id")}`);
    expect((await w.post(post.id)).state).toBe("needs-attention");

    const sent = await browser.submit(path, { acknowledge_duplicate_risk: "yes" }, `${path}/retry`);
    expect({ status: sent.status, location: sent.location }).toEqual({
      status: 303,
      location: `${path}?notice=retried`,
    });
    expect((await w.post(post.id)).state).toBe("ready");
    await w.run();
    const again = await browser.get(path);
    expect(recordsIn(screenOf(again.text), "Publishing attempts")).toContainEqual(
      expect.objectContaining({ "#": "3", Trigger: "manual retry" }),
    );
  });

  test("retry of a failed post (a known outcome) needs no acknowledgement", async () => {
    w.bluesky.failNext(1, {
      path: "createRecord",
      status: 400,
      body: { error: "InvalidRequest", message: "nope" },
    });
    const post = await w.create("now", "refused once");
    await w.run();
    const browser = await w.signedIn();
    const page = await browser.get(detail(post.id));
    const screen = screenOf(page.text);
    expect(badgesIn(screen.getByRole("main"))[0]).toEqual({ text: "failed", tone: "danger" });
    expect(screen.definitions()["Last error"]).toContain("nope");
    expect(screen.getAllByRole("checkbox")).toEqual([]);
    expect(screen.getByRole("button", { name: "Send again now" })).toBeDefined();
    const r = await browser.submit(detail(post.id), {}, `${detail(post.id)}/retry`);
    expect(r.status).toBe(303);
    await w.run();
    expect((await w.post(post.id)).state).toBe("published");
  });

  test("reschedule reads the time in the workspace's zone; errors land next to the field", async () => {
    const post = await w.create("2026-03-20T10:00:00Z", "moving around");
    const browser = await w.signedIn();
    const path = detail(post.id);
    const page = await browser.get(path);
    // 10:00Z is 11:00 in Berlin (CET) on 20 March.
    const newTime = screenOf(page.text).getByLabelText("New time (Europe/Berlin)");
    expect([attributeOf(newTime, "type"), valueOf(newTime)]).toEqual(["datetime-local", "2026-03-20T11:00"]);

    // After the DST change: 30 March 09:15 in Berlin (CEST) is 07:15Z.
    const moved = await browser.submit(path, { scheduled_at: "2026-03-30T09:15" }, `${path}/reschedule`);
    expect({ status: moved.status, location: moved.location }).toEqual({
      status: 303,
      location: `${path}?notice=rescheduled`,
    });
    expect((await w.post(post.id)).scheduled_at).toBe("2026-03-30T07:15:00.000Z");

    const past = await browser.submit(path, { scheduled_at: "2026-02-01T09:00" }, `${path}/reschedule`);
    expect(past.status).toBe(422);
    expectDashboardPage(`${path}/reschedule`, past);
    const pastScreen = screenOf(past.text);
    const pastTime = pastScreen.getByLabelText("New time (Europe/Berlin)");
    expect(pastScreen.descriptionOf(pastTime)).toBe("is in the past");
    expect(valueOf(pastTime)).toBe("2026-02-01T09:00"); // the value entered is kept

    const empty = await browser.submit(path, { scheduled_at: "" }, `${path}/reschedule`);
    expect(empty.status).toBe(400);
    const emptyScreen = screenOf(empty.text);
    expect(emptyScreen.descriptionOf(emptyScreen.getByLabelText("New time (Europe/Berlin)"))).toBe(
      "Enter a date and time.",
    );
    expect((await w.post(post.id)).scheduled_at).toBe("2026-03-30T07:15:00.000Z");
  });

  test("a draft publishes now, or is scheduled at a local time", async () => {
    const browser = await w.signedIn();
    const now = await w.create("draft", "draft to publish");
    const path = detail(now.id);
    const page = await browser.get(path);
    expectDashboardPage(path, page);
    expect(valueOf(screenOf(page.text).getByLabelText("Destination"))).toBe(w.destinationId);
    const r = await browser.submit(
      path,
      { destination_id: w.destinationId, when_mode: "now" },
      `${path}/publish`,
    );
    expect({ status: r.status, location: r.location }).toEqual({
      status: 303,
      location: `${path}?notice=published`,
    });
    await w.run();
    expect((await w.post(now.id)).state).toBe("published");

    const later = await w.create("draft", "draft to schedule");
    const laterPath = detail(later.id);
    const missing = await browser.submit(laterPath, { when_mode: "at", when_at: "" }, `${laterPath}/publish`);
    expect(missing.status).toBe(400);
    const missingScreen = screenOf(missing.text);
    expect(missingScreen.descriptionOf(missingScreen.getByLabelText("Time (Europe/Berlin)"))).toBe(
      "Only when you choose At a time. Enter a date and time.",
    );
    const past = await browser.submit(
      laterPath,
      { destination_id: w.destinationId, when_mode: "at", when_at: "2026-01-01T08:00" },
      `${laterPath}/publish`,
    );
    expect(past.status).toBe(422);
    const pastScreen = screenOf(past.text);
    expect(pastScreen.descriptionOf(pastScreen.getByLabelText("Time (Europe/Berlin)"))).toBe(
      "Only when you choose At a time. is in the past",
    );
    const scheduled = await browser.submit(
      laterPath,
      { destination_id: w.destinationId, when_mode: "at", when_at: "2026-03-15T08:30" },
      `${laterPath}/publish`,
    );
    expect({ status: scheduled.status, location: scheduled.location }).toEqual({
      status: 303,
      location: `${laterPath}?notice=scheduled`,
    });
    expect(await w.post(later.id)).toMatchObject({
      state: "scheduled",
      scheduled_at: "2026-03-15T07:30:00.000Z",
    });
  });

  test("a draft is deleted with its ETag; a stale page is refused with 412", async () => {
    const browser = await w.signedIn();
    const draft = await w.create("draft", "to delete");
    const path = detail(draft.id);
    const stale = await browser.get(path);
    const patched = await w.call(
      "PATCH",
      `/v1/workspaces/${w.ws}/posts/${draft.id}`,
      { body: ["changed"] },
      {
        "if-match": `"${draft.id}.v${draft.version}"`,
      },
    );
    expect(patched.status).toBe(200);
    const refused = await browser.post(`${path}/delete`, hiddenFields(stale.text, `${path}/delete`));
    expect(refused.status).toBe(412);
    expect(screenOf(refused.text).text()).toContain("The post changed since this page was opened.");
    const r = await browser.submit(path, {}, `${path}/delete`);
    expect({ status: r.status, location: r.location }).toEqual({
      status: 303,
      location: `${pathIn(w.ws, "posts")}?view=drafts&notice=deleted`,
    });
    expect((await w.call("GET", `/v1/workspaces/${w.ws}/posts/${draft.id}`)).status).toBe(404);
  });

  test("a member acts on posts (posts:write)", async () => {
    const member = await w.signedInAs("member");
    const post = await w.create("2026-03-22T10:00:00Z", "member cancels");
    const page = await member.get(detail(post.id));
    expect(screenOf(page.text).getByRole("button", { name: "Cancel the post" })).toBeDefined();
    const r = await member.submit(detail(post.id), {}, `${detail(post.id)}/cancel`);
    expect(r.status).toBe(303);
    expect((await w.post(post.id)).state).toBe("cancelled");
  });
});
