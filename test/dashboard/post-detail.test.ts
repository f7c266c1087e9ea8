// A post's page: its content, attempts and receipts, and the actions its state allows (cancel, retry
// with the duplicate-risk acknowledgement, reschedule in the workspace's time zone, publish or schedule
// a draft, delete a draft), each working without JavaScript and refused without the CSRF token.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectDashboardPage, hiddenFields } from "./support.ts";
import { pathIn, postsWorld, type PostsWorld } from "./posts-world.ts";

let w: PostsWorld;
beforeAll(async () => {
  w = await postsWorld();
  await w.setTimeZone("Europe/Berlin");
});
afterAll(() => w.stop());

const detail = (id: string) => pathIn(w.ws, `posts/${id}`);

/** A post whose last attempt reached Bluesky but never got an answer (outcome unknown). */
async function needingAttention(text: string): Promise<any> {
  w.bluesky.hangAfterReceive = true;
  const post = await w.create("now", text);
  try {
    await w.run();
  } finally {
    w.bluesky.hangAfterReceive = false;
  }
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
    expect(r.text).toContain("<h1>hello from the dashboard</h1>");
    expect(r.text).toContain("and a reply");
    expect(r.text).toContain('<span class="badge ok">published</span>');
    expect(r.text).toContain('<caption class="visually-hidden">Publishing attempts</caption>');
    expect(r.text).toMatch(/<td>1<\/td><td>initial<\/td><td>succeeded<\/td>/);
    expect(r.text).toContain('<caption class="visually-hidden">Published items</caption>');
    expect(r.text).toContain("<code>https://bsky.app/profile/alice.test/post/");
    expect(r.text).toContain("<h2>Other posts of the group</h2>");
    expect(r.text).toContain(`href="${detail(sibling.id)}"`);
    expect(r.text).toContain(`href="${pathIn(w.ws, `analytics/${post.group}`)}"`);
    expect(r.text).toContain("Times shown in</dt><dd>Europe/Berlin");
    // A published post has no actions.
    expect(r.text).not.toContain("<h2>Actions</h2>");
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
    expect(after.text).toContain("The post was cancelled.");
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
    expect(page.text).toContain("may already be on the network");
    expect(page.text).toContain('id="f-acknowledge_duplicate_risk" type="checkbox"');

    const refused = await browser.submit(path, {}, `${path}/retry`);
    expect(refused.status).toBe(409);
    expectDashboardPage(`${path}/retry`, refused);
    expect(refused.text).toMatch(
      new RegExp(
        '<p class="error" id="f-acknowledge_duplicate_risk-error">must be true[^<]*</p>\\s*' +
          '<div class="choice"><input id="f-acknowledge_duplicate_risk"[^>]*aria-invalid="true"',
      ),
    );
    expect(refused.text).toContain('<a href="#f-acknowledge_duplicate_risk">Duplicate risk: must be true');
    expect((await w.post(post.id)).state).toBe("needs-attention");

    const sent = await browser.submit(path, { acknowledge_duplicate_risk: "yes" }, `${path}/retry`);
    expect({ status: sent.status, location: sent.location }).toEqual({
      status: 303,
      location: `${path}?notice=retried`,
    });
    expect((await w.post(post.id)).state).toBe("ready");
    await w.run();
    const again = await browser.get(path);
    expect(again.text).toMatch(/<td>2<\/td><td>manual retry<\/td>/);
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
    expect(page.text).toContain('<span class="badge danger">failed</span>');
    expect(page.text).toContain("nope");
    expect(page.text).not.toContain('type="checkbox"');
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
    expect(page.text).toContain('name="scheduled_at" type="datetime-local" value="2026-03-20T11:00"');

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
    expect(past.text).toContain('<p class="error" id="f-scheduled_at-error">is in the past</p>');
    expect(past.text).toContain('value="2026-02-01T09:00"'); // the value entered is kept

    const empty = await browser.submit(path, { scheduled_at: "" }, `${path}/reschedule`);
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('<p class="error" id="f-scheduled_at-error">Enter a date and time.</p>');
    expect((await w.post(post.id)).scheduled_at).toBe("2026-03-30T07:15:00.000Z");
  });

  test("a draft publishes now, or is scheduled at a local time", async () => {
    const browser = await w.signedIn();
    const now = await w.create("draft", "draft to publish");
    const path = detail(now.id);
    const page = await browser.get(path);
    expectDashboardPage(path, page);
    expect(page.text).toContain(`<option value="${w.destinationId}" selected>`);
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
    expect(missing.text).toContain('<p class="error" id="f-when-error">Enter a date and time.</p>');
    const past = await browser.submit(
      laterPath,
      { destination_id: w.destinationId, when_mode: "at", when_at: "2026-01-01T08:00" },
      `${laterPath}/publish`,
    );
    expect(past.status).toBe(422);
    expect(past.text).toContain('<p class="error" id="f-when-error">is in the past</p>');
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
    expect(refused.text).toContain("The post changed since this page was opened.");
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
    expect(page.text).toContain("Cancel the post");
    const r = await member.submit(detail(post.id), {}, `${detail(post.id)}/cancel`);
    expect(r.status).toBe(303);
    expect((await w.post(post.id)).state).toBe("cancelled");
  });
});
