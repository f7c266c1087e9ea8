// The review page a client opens from a review link (/review/{token}), signed out, without JavaScript:
// each post of the group as its network will show it, "Approve" and "Request changes" as plain forms
// with a CSRF token bound to the browser and the link, 404 for unknown, expired and deleted links,
// failed lookups limited per address, and the token kept out of logs and Referer headers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TestBrowser, hiddenFields, pathOf } from "../helpers/browser.ts";
import { attributeOf, screenOf, textOf } from "../helpers/screen.ts";
import { idem } from "../posts/helpers.ts";
import { insertAsset } from "../posts/fixtures.ts";
import { postsWorld, type PostsWorld } from "../dashboard/posts-world.ts";

let world: PostsWorld;
let ws: string;
let memberKey: string;
let groups = 0;

beforeAll(async () => {
  world = await postsWorld();
  ws = world.ws;
  const current = await world.call("GET", `/v1/workspaces/${ws}`);
  const patched = await world.call(
    "PATCH",
    `/v1/workspaces/${ws}`,
    { approval_required: true },
    { "if-match": current.headers.get("etag")!, ...idem() },
  );
  expect({ status: patched.status, text: patched.text }).toMatchObject({ status: 200 });
  // A member's key: it may write posts but not approve them.
  memberKey = await world.s.createKey({
    accountId: world.owner.accountId,
    scopes: ["posts:read", "posts:write", "assets:read", "assets:write", "destinations:read"],
  });
});
afterAll(() => world?.stop());

/** A group of posts awaiting approval (a thread with an image on Bluesky), and its review link's path. */
async function reviewedGroup(body: string[] = ["Launch day: the new composer", "Second item"], when = "now") {
  const group = `review-${++groups}`;
  const image = await insertAsset(world.s, ws, { width: 64, height: 48 });
  const created = await world.s.request("POST", `/v1/workspaces/${ws}/posts`, {
    key: memberKey,
    headers: idem(),
    body: {
      when,
      confirmed: true,
      group,
      posts: [
        {
          destination_id: world.destinationId,
          body,
          media_items: [{ asset_id: image, item_index: 0 }],
          destination_options: {
            bluesky: { alt_text_by_asset_id: { [image]: "The composer, with two previews" } },
          },
        },
      ],
    },
  });
  expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
  const link = await world.call("POST", `/v1/workspaces/${ws}/review-links`, { group }, idem());
  expect({ status: link.status, text: link.text }).toMatchObject({ status: 201 });
  return {
    group,
    postId: created.body.posts[0].id as string,
    path: pathOf(link.body.url),
    id: link.body.id as string,
  };
}

describe("the review page", () => {
  test("shows each post as its network will, signed out, with two plain forms and strict headers", async () => {
    const { path } = await reviewedGroup();
    const browser = new TestBrowser(world.s);
    const page = await browser.get(path);
    expect(page.status).toBe(200);
    const screen = screenOf(page.text);
    expect(screen.nameOf(screen.getByRole("heading", { level: 1 }))).toBe("Review posts for Acme");
    const region = screen.within(screen.getByRole("region", { name: "Bluesky preview" }));
    expect(region.getAllByRole("article").map((a) => screen.nameOf(a))).toEqual([
      "Bluesky post 1 of 2",
      "Bluesky post 2 of 2",
    ]);
    expect(region.text()).toContain("Launch day: the new composer");
    expect(region.namesOf("img")).toEqual(["The composer, with two previews"]);
    expect(screen.text()).toContain("Awaiting approval: goes out as soon as it is approved");
    expect(screen.getByRole("form", { name: "Approve" })).toBeDefined();
    expect(screen.getByRole("form", { name: "Request changes" })).toBeDefined();
    expect(screen.getByLabelText("What should change")).toBeDefined();
    // The image loads for a signed-out reader, from where the page's CSP allows.
    const src = attributeOf(screen.getAllByRole("img")[0]!, "src")!;
    const media = await fetch(new URL(src, world.s.url));
    expect({ status: media.status, type: media.headers.get("content-type") }).toEqual({
      status: 200,
      type: "image/png",
    });
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain(`img-src 'self' ${new URL(src, world.s.url).origin}`);
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain("script-src");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page.headers.get("x-robots-tag")).toBe("noindex, nofollow");
    expect(page.headers.get("cache-control")).toBe("no-store");
    const robots = screen.elements("meta").find((m) => attributeOf(m, "name") === "robots");
    expect(attributeOf(robots!, "content")).toBe("noindex, nofollow");
    // No link on the page leads elsewhere with the token in a Referer: there is no Referer at all.
    expect(screen.elements("script")).toHaveLength(0);
  });

  test("Approve (with a name and a comment) approves the group; sending it again changes nothing", async () => {
    const { path, postId } = await reviewedGroup();
    const browser = new TestBrowser(world.s);
    const done = await browser.submit(
      path,
      { name: "Client Carla", comment: "Looks great" },
      `${path}/approve`,
    );
    expect(done.status).toBe(200);
    const screen = screenOf(done.text);
    const status = screen.getByRole("status");
    expect(screen.nameOf(status)).toContain("You approved 1 post: they go out as planned.");
    expect(screen.nameOf(status)).toContain("Your comment was sent to the team.");
    expect(screen.text()).toContain("Approved");
    const post = await world.call("GET", `/v1/workspaces/${ws}/posts/${postId}`);
    expect(post.body.approval.status).toBe("approved");
    const comments = await world.call("GET", `/v1/workspaces/${ws}/posts/${postId}/comments`);
    expect(comments.body.data.map((c: any) => [c.author.kind, c.author.name, c.body])).toContainEqual([
      "reviewer",
      "Client Carla",
      "Looks great",
    ]);
    // The same form again: nothing is waiting any more, and no second comment.
    const again = await browser.post(`${path}/approve`, {
      ...hiddenFields(done.text, `${path}/approve`),
      name: "Client Carla",
      comment: "Looks great",
    });
    expect(screenOf(again.text).nameOf(screenOf(again.text).getByRole("status"))).toContain(
      "No post was waiting for approval",
    );
    const after = await world.call("GET", `/v1/workspaces/${ws}/posts/${postId}/comments`);
    expect(after.body.data.length).toBe(comments.body.data.length);
  });

  test("Request changes needs a comment, then sends the posts back with it", async () => {
    const { path, postId } = await reviewedGroup();
    const browser = new TestBrowser(world.s);
    const empty = await browser.submit(path, { name: "Carla", comment: "  " }, `${path}/request-changes`);
    expect(empty.status).toBe(400);
    const refused = screenOf(empty.text);
    expect(textOf(refused.getByRole("alert"))).toContain("Comment: is required");
    const field = refused.getByLabelText("What should change");
    expect(attributeOf(field, "aria-invalid")).toBe("true");
    expect(refused.descriptionOf(field)).toContain("is required");
    // The name typed is kept.
    expect(attributeOf(refused.getAllByRole("textbox", { name: "Your name (optional)" })[1]!, "value")).toBe(
      "Carla",
    );
    const sent = await browser.post(`${path}/request-changes`, {
      ...hiddenFields(empty.text, `${path}/request-changes`),
      comment: "Please use the new logo",
    });
    expect(sent.status).toBe(200);
    const screen = screenOf(sent.text);
    expect(screen.nameOf(screen.getByRole("status"))).toContain(
      "1 post went back to the team with your comment.",
    );
    const post = await world.call("GET", `/v1/workspaces/${ws}/posts/${postId}`);
    expect(post.body.approval.status).toBe("changes_requested");
    expect(screen.text()).toContain("Changes requested");
  });

  test("forms need this browser's token for this link (CSRF)", async () => {
    const first = await reviewedGroup();
    const second = await reviewedGroup();
    const browser = new TestBrowser(world.s);
    const page = await browser.get(first.path);
    const fields = hiddenFields(page.text, `${first.path}/approve`);
    // No token; a token of another link; the token from another browser.
    expect((await browser.post(`${first.path}/approve`, { comment: "x" })).status).toBe(403);
    const other = await browser.get(second.path);
    const foreign = hiddenFields(other.text, `${second.path}/approve`);
    expect((await browser.post(`${first.path}/approve`, foreign)).status).toBe(403);
    const stranger = new TestBrowser(world.s);
    await stranger.get(first.path);
    expect((await stranger.post(`${first.path}/approve`, fields)).status).toBe(403);
    const post = await world.call("GET", `/v1/workspaces/${ws}/posts/${first.postId}`);
    expect(post.body.approval.status).toBe("requested");
  });

  test("unknown, deleted and expired links are a 404 page; forms to them too", async () => {
    const browser = new TestBrowser(world.s);
    const unknown = await browser.get(`/review/${"A".repeat(43)}`);
    expect(unknown.status).toBe(404);
    const screen = screenOf(unknown.text);
    expect(screen.nameOf(screen.getByRole("heading", { level: 1 }))).toBe("This review link does not work");
    expect(unknown.headers.get("x-robots-tag")).toBe("noindex, nofollow");

    const deleted = await reviewedGroup();
    const opened = await browser.get(deleted.path);
    const gone = await world.call("DELETE", `/v1/workspaces/${ws}/review-links/${deleted.id}`);
    expect(gone.status).toBeLessThan(300);
    expect((await browser.get(deleted.path)).status).toBe(404);
    const late = await browser.post(
      `${deleted.path}/approve`,
      hiddenFields(opened.text, `${deleted.path}/approve`),
    );
    expect(late.status).toBe(404);
    const post = await world.call("GET", `/v1/workspaces/${ws}/posts/${deleted.postId}`);
    expect(post.body.approval.status).toBe("requested");

    const expiring = await reviewedGroup();
    expect((await browser.get(expiring.path)).status).toBe(200);
    world.s.clock.advance(31 * 24 * 60 * 60 * 1000);
    expect((await browser.get(expiring.path)).status).toBe(404);
  });

  test("the token stays out of the logs", async () => {
    const { path } = await reviewedGroup();
    const token = path.split("/").pop()!;
    const browser = new TestBrowser(world.s);
    await browser.submit(path, { comment: "Fine by me" }, `${path}/approve`);
    const lines = world.s.logs.filter((l) => l.includes("/review/"));
    expect(lines.some((l) => l.includes('"/review/:token"'))).toBe(true);
    expect(world.s.logs.some((l) => l.includes(token))).toBe(false);
  });

  test("failed lookups are limited per address, like failed keys: then even a good link waits", async () => {
    world.s.clock.advance(60_000);
    const { path } = await reviewedGroup();
    const browser = new TestBrowser(world.s);
    for (let i = 0; i < 20; i++)
      expect((await browser.get(`/review/${"B".repeat(40)}${i}`)).status).toBe(404);
    const limited = await browser.get(path);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    world.s.clock.advance(60_000);
    expect((await browser.get(path)).status).toBe(200);
  });

  test("a post that can no longer go out is named with the reason; the others are approved", async () => {
    const at = new Date(world.s.clock.now() + 60 * 60 * 1000).toISOString();
    const { path, postId } = await reviewedGroup(["At a set time"], at);
    const browser = new TestBrowser(world.s);
    const page = screenOf((await browser.get(path)).text);
    expect(page.text()).toContain(`Awaiting approval: planned for ${at.slice(0, 16).replace("T", " ")} UTC`);
    world.s.clock.advance(2 * 60 * 60 * 1000);
    const done = await browser.submit(path, {}, `${path}/approve`);
    const screen = screenOf(done.text);
    const status = textOf(screen.getByRole("status"));
    expect(status).toContain("Some posts could not be approved");
    expect(status).toContain("The Bluesky post could not be approved:");
    const post = await world.call("GET", `/v1/workspaces/${ws}/posts/${postId}`);
    expect(post.body.approval.status).toBe("requested");
  });
});
