// Approvals on the dashboard: the workspace's "Require approval" setting, a member's publish sent for
// approval, the "Awaiting approval" view with a decision per group, and the post page's approval,
// history, comments, approve / request-changes forms and review links (shown once, listed, deleted).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { idem } from "../posts/helpers.ts";
import { attributeOf, expectDashboardPage, headingOf, noticesOf, screenOf, textOf } from "./support.ts";
import { pathIn, postsWorld, type PostsWorld } from "./posts-world.ts";
import { csrfTokenOf, type TestBrowser } from "../helpers/browser.ts";

let w: PostsWorld;
let member: TestBrowser;
let owner: TestBrowser;
beforeAll(async () => {
  w = await postsWorld();
  member = await w.signedInAs("member");
  owner = await w.signedIn();
  const on = await w.call("PATCH", `/v1/workspaces/${w.ws}`, { approval_required: true }, idem());
  expect(on.status).toBe(200);
});
afterAll(() => w.stop());

const detail = (id: string) => pathIn(w.ws, `posts/${id}`);
const settings = () => pathIn(w.ws, "settings");
const approvals = () => pathIn(w.ws, "approvals");
let groups = 0;

/** A draft on the Bluesky destination, made with the owner's key. */
async function draft(text: string): Promise<any> {
  const r = await w.call(
    "POST",
    `/v1/workspaces/${w.ws}/posts`,
    {
      when: "draft",
      group: `page-approval-${++groups}`,
      posts: [{ destination_id: w.destinationId, body: [text] }],
    },
    idem(),
  );
  expect(r.status).toBe(201);
  return r.body.posts[0];
}

/** The member publishes a draft at a time from its page: it is sent for approval. */
async function sentForApproval(text: string): Promise<any> {
  const post = await draft(text);
  const r = await member.submit(
    detail(post.id),
    { destination_id: w.destinationId, when_mode: "at", when_at: "2026-03-10T09:00" },
    `${detail(post.id)}/publish`,
  );
  expect({ status: r.status, location: r.location }).toEqual({
    status: 303,
    location: `${detail(post.id)}?notice=sent-for-approval`,
  });
  return w.post(post.id);
}

describe("composing while approval is required", () => {
  test("a member's post from Compose is stored awaiting approval, and the page says it was sent for it", async () => {
    const compose = pathIn(w.ws, "posts/new");
    const fields = {
      destination_ids: w.destinationId,
      item_0_text: "composed by the member",
      when: "at",
      at: "2026-03-12T09:00",
      op: "create",
    };
    const r = await member.submit(compose, fields, compose);
    expect(r.status).toBe(303);
    const id = /\/posts\/([^/?]+)\?notice=sent-for-approval$/.exec(r.location ?? "")?.[1];
    expect({ location: r.location, id: typeof id }).toEqual({ location: r.location, id: "string" });
    expect(noticesOf(await member.get(r.location!))).toContain(
      "The post is sent for approval: it goes out once an owner or admin approves it.",
    );
    expect(await w.post(id!)).toMatchObject({ state: "draft", approval: { status: "requested" } });
  });
});

describe("the workspace setting", () => {
  test("an owner turns approval off and on; a member sees it but cannot change it", async () => {
    const page = await owner.get(settings());
    expectDashboardPage(settings(), page);
    const box = screenOf(page.text).getByRole("checkbox", { name: "Require approval before posts go out" });
    expect(box.attribs.checked).toBeDefined();
    const off = await owner.submit(settings(), {}, `${settings()}/approval`);
    expect(off.status).toBe(303);
    expect((await w.call("GET", `/v1/workspaces/${w.ws}`)).body.approval_required).toBe(false);
    const unchecked = screenOf((await owner.get(settings())).text);
    expect(
      unchecked.getByRole("checkbox", { name: "Require approval before posts go out" }).attribs.checked,
    ).toBeUndefined();
    const r = await owner.submit(settings(), { approval_required: "yes" }, `${settings()}/approval`);
    expect(r.location).toBe(`${settings()}?notice=approval-saved`);
    const after = await owner.get(r.location!);
    expect(noticesOf(after)).toContain("Saved: the approval setting of the workspace.");
    expect(
      screenOf(after.text).getByRole("checkbox", { name: "Require approval before posts go out" }).attribs
        .checked,
    ).toBeDefined();
    const seen = screenOf((await member.get(settings())).text);
    expect(seen.queryByRole("checkbox", { name: "Require approval before posts go out" })).toBeNull();
    expect(textOf(seen.getByRole("main"))).toContain("Approval is required in this workspace.");
  });
});

describe("a member's post awaiting approval", () => {
  test("the post page shows the approval, its history and no decision forms to the member", async () => {
    const post = await sentForApproval("member wants this out");
    expect(post).toMatchObject({ state: "draft", approval: { status: "requested" } });
    const page = await member.get(`${detail(post.id)}?notice=sent-for-approval`);
    expectDashboardPage(detail(post.id), page);
    const screen = screenOf(page.text);
    expect(noticesOf(page)).toContain(
      "The post is sent for approval: it goes out once an owner or admin approves it.",
    );
    expect(screen.getByRole("heading", { level: 2, name: "Approval" })).toBeDefined();
    expect(screen.namesOf("listitem").some((t) => t.startsWith("Approval requested by"))).toBe(true);
    expect(screen.queryByRole("button", { name: "Approve the post" })).toBeNull();
    expect(screen.queryByRole("heading", { name: "Review links" })).toBeNull();
    expect(textOf(screen.getByRole("main"))).toContain("An owner or admin approves it or requests changes.");
  });

  test("the owner approves it from the post page: scheduled, with a notice and the history", async () => {
    const post = await sentForApproval("approve me");
    const r = await owner.submit(detail(post.id), {}, `${detail(post.id)}/approve`);
    expect(r.location).toBe(`${detail(post.id)}?notice=approved`);
    expect(await w.post(post.id)).toMatchObject({ state: "scheduled", approval: { status: "approved" } });
    const after = await owner.get(r.location!);
    expect(noticesOf(after)).toContain("The post is approved: it goes out as requested.");
    expect(
      screenOf(after.text)
        .namesOf("listitem")
        .some((t) => t.startsWith("Approved by")),
    ).toBe(true);
  });

  test("approving a version the page did not show is refused with the post as it is now", async () => {
    const post = await sentForApproval("stale");
    const r = await owner.submit(
      detail(post.id),
      { version: String(post.version + 5) },
      `${detail(post.id)}/approve`,
    );
    expect(r.status).toBe(409);
    expect(textOf(screenOf(r.text).getByRole("alert"))).toContain(
      "The page below shows the post as it is now.",
    );
  });

  test("requesting changes needs a comment; the comment then shows among the comments", async () => {
    const post = await sentForApproval("too loud");
    const empty = await owner.submit(detail(post.id), { comment: " " }, `${detail(post.id)}/reject`);
    expect(empty.status).toBe(400);
    const screen = screenOf(empty.text);
    expect(screen.getByRole("textbox", { name: "What should change" }).attribs["aria-invalid"]).toBe("true");
    const r = await owner.submit(detail(post.id), { comment: "Softer, please" }, `${detail(post.id)}/reject`);
    expect(r.location).toBe(`${detail(post.id)}?notice=changes-requested`);
    const after = screenOf((await member.get(detail(post.id))).text);
    expect(textOf(after.getByRole("region", { name: "Comments" }))).toContain("Softer, please");
  });

  test("the Awaiting approval view lists groups; the owner approves a group, the member cannot", async () => {
    const post = await sentForApproval("in the view");
    const view = await owner.get(approvals());
    expectDashboardPage(approvals(), view);
    expect(headingOf(view)).toBe("Awaiting approval");
    const screen = screenOf(view.text);
    expect(screen.getByRole("link", { name: "Awaiting approval" }).attribs["aria-current"]).toBe("page");
    const region = screen.getByRole("region", { name: `Group ${post.group}` });
    expect(textOf(region)).toContain("in the view");
    const memberView = screenOf((await member.get(approvals())).text);
    expect(memberView.getByRole("region", { name: `Group ${post.group}` })).toBeDefined();
    expect(memberView.queryByRole("button", { name: `Approve the group ${post.group}` })).toBeNull();
    const action = `${approvals()}/approve`;
    const opened = await owner.get(approvals());
    const fields = hiddenOf(opened.text, action, post.group);
    const r = await owner.post(action, fields);
    expect(r.location).toBe(`${approvals()}?notice=approved&group=${encodeURIComponent(post.group)}`);
    expect((await w.post(post.id)).approval.status).toBe("approved");
    const after = await owner.get(r.location!);
    expect(noticesOf(after)).toContain("The group is approved: its posts go out as requested.");
    expect(screenOf(after.text).queryByRole("region", { name: `Group ${post.group}` })).toBeNull();
  });

  test("requesting changes to a group without a comment shows the problem next to the field", async () => {
    const post = await sentForApproval("group reject");
    const opened = await owner.get(approvals());
    const action = `${approvals()}/reject`;
    const r = await owner.post(action, { ...hiddenOf(opened.text, action, post.group), comment: "" });
    expect(r.status).toBe(400);
    const ok = await owner.post(action, {
      ...hiddenOf(opened.text, action, post.group),
      comment: "Fix the link",
    });
    expect(ok.status).toBe(303);
    expect((await w.post(post.id)).approval.status).toBe("changes_requested");
  });
});

describe("webhook endpoints", () => {
  test("the new endpoint form offers the approval events unchecked (opt-in), the contract's four checked", async () => {
    const screen = screenOf((await owner.get(pathIn(w.ws, "webhooks"))).text);
    const checked = (name: string) => screen.getByRole("checkbox", { name }).attribs.checked !== undefined;
    for (const type of ["post.published", "post.failed", "post.awaiting-provider", "post.needs-attention"])
      expect({ type, checked: checked(type) }).toEqual({ type, checked: true });
    for (const type of ["post.approval-requested", "post.approved", "post.changes-requested"])
      expect({ type, checked: checked(type) }).toEqual({ type, checked: false });
  });
});

describe("refusals", () => {
  test("every approval form is refused without this browser's CSRF token and changes nothing", async () => {
    const post = await sentForApproval("csrf");
    for (const [action, fields] of [
      [`${detail(post.id)}/approve`, { version: String(post.version) }],
      [`${detail(post.id)}/reject`, { comment: "no" }],
      [`${detail(post.id)}/comments`, { body: "no" }],
      [`${detail(post.id)}/review-links`, { expires_in_days: "7" }],
      [`${approvals()}/approve`, { group: post.group, post_0: `${post.id}:${post.version}` }],
      [`${settings()}/approval`, {}],
    ] as const) {
      const r = await owner.post(action, fields);
      expect({ action, status: r.status }).toEqual({ action, status: 403 });
    }
    expect(await w.post(post.id)).toMatchObject({ state: "draft", approval: { status: "requested" } });
    expect((await w.call("GET", `/v1/workspaces/${w.ws}`)).body.approval_required).toBe(true);
    expect((await w.call("GET", `/v1/workspaces/${w.ws}/posts/${post.id}/comments`)).body.data).toEqual([]);
  });

  test("a member's forged approve gets the API's 403 and the post still awaits approval", async () => {
    const post = await sentForApproval("forged");
    const page = await member.get(detail(post.id));
    const csrf = csrfTokenOf(page.text);
    const r = await member.post(`${detail(post.id)}/approve`, {
      csrf_token: csrf,
      version: String(post.version),
    });
    expect(r.status).toBe(403);
    expect(headingOf(r)).toBe("Not allowed");
    expect((await w.post(post.id)).approval.status).toBe("requested");
  });
});

describe("comments and review links on the post page", () => {
  test("a member comments; the comment is listed with its author", async () => {
    const post = await draft("comment on me");
    const r = await member.submit(
      detail(post.id),
      { body: "Can we add a photo?" },
      `${detail(post.id)}/comments`,
    );
    expect(r.location).toBe(`${detail(post.id)}?notice=commented`);
    const page = await member.get(r.location!);
    expect(noticesOf(page)).toContain("Your comment is added.");
    expect(textOf(screenOf(page.text).getByRole("region", { name: "Comments" }))).toContain(
      "Can we add a photo?",
    );
  });

  test("the owner creates a review link: shown once with a copy button, listed, then deleted", async () => {
    const post = await sentForApproval("for the client");
    const r = await owner.submit(
      detail(post.id),
      { expires_in_days: "7" },
      `${detail(post.id)}/review-links`,
    );
    expect(r.status).toBe(201);
    expectDashboardPage(`${detail(post.id)}/review-links`, r);
    const shown = screenOf(r.text);
    const copy = shown.getByRole("button", { name: "Copy", hidden: true });
    const url = textOf(shown.byId(attributeOf(copy, "data-copy")!)!);
    expect(url).toMatch(new RegExp(`^${w.s.herald.config.baseUrl}/review/[0-9A-Za-z]{43}$`));
    expect(shown.text()).toContain("Copy the address now: it will not be shown again.");
    const opened = await owner.get(detail(post.id));
    const page = screenOf(opened.text);
    const table = page.getByRole("table", { name: `Review links of the group ${post.group}` });
    expect(page.recordsOf(table)).toHaveLength(1);
    expect(opened.text).not.toContain(url);
    expect(page.getByRole("button", { name: /^Delete the review link created / })).toBeDefined();
    const links = await w.call("GET", `/v1/workspaces/${w.ws}/review-links`);
    const id = links.body.data[0].id;
    const action = `${detail(post.id)}/review-links/${id}/delete`;
    const gone = await owner.submit(detail(post.id), {}, action);
    expect(gone.location).toBe(`${detail(post.id)}?notice=review-link-deleted`);
    expect((await w.call("GET", `/v1/workspaces/${w.ws}/review-links`)).body.data).toEqual([]);
  });
});

/** The hidden fields of the group form posting to `action` whose `group` field is `group`. */
function hiddenOf(html: string, action: string, group: string): Record<string, string> {
  const pattern = new RegExp(
    `<form[^>]*action="${action.replace(/[/]/g, "\\/")}"[^>]*>([\\s\\S]*?)</form>`,
    "g",
  );
  for (const match of html.matchAll(pattern)) {
    const fields: Record<string, string> = {};
    for (const input of match[1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      fields[input[1]!] = input[2]!.replaceAll("&amp;", "&");
    if (fields.group === group) return fields;
  }
  throw new Error(`no form to ${action} for group ${group}`);
}
