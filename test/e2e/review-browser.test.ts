// A client approving from a review link, end to end in headless Chromium: a member's thread with an
// image awaits approval, the owner makes a review link, the client opens it signed out, sees the
// preview (the image loads under the page's CSP), approves with a name and a comment, and reads the
// result. axe-clean (light and dark) at 1280 and 375 px; HERALD_DOCS_SCREENSHOTS=1 refreshes
// docs/dashboard/review.png.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { postsWorld, type PostsWorld } from "../dashboard/posts-world.ts";
import { pathOf } from "../helpers/browser.ts";
import { ROOT } from "../helpers/process.ts";
import { insertAsset, makePng } from "../posts/fixtures.ts";
import { idem } from "../posts/helpers.ts";
import { launchChromium, lookAt } from "./dashboard-kit.ts";

const ARTIFACTS = join(ROOT, "test-artifacts", "review");
const DOCS = join(ROOT, "docs", "dashboard");
const BROWSER_TEST_MS = 120_000;

let world: PostsWorld;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  world = await postsWorld();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});
afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

/** A member's two-item thread with an image, awaiting approval; the review link's path. */
async function awaitingGroup(): Promise<{ path: string; postId: string }> {
  const ws = world.ws;
  const current = await world.call("GET", `/v1/workspaces/${ws}`);
  const patched = await world.call(
    "PATCH",
    `/v1/workspaces/${ws}`,
    { approval_required: true },
    { "if-match": current.headers.get("etag")!, ...idem() },
  );
  expect(patched.status).toBe(200);
  const member = await world.s.createKey({
    accountId: world.owner.accountId,
    scopes: ["posts:read", "posts:write"],
  });
  const image = await insertAsset(world.s, ws, { bytes: makePng(480, 270), width: 480, height: 270 });
  const created = await world.s.request("POST", `/v1/workspaces/${ws}/posts`, {
    key: member,
    headers: idem(),
    body: {
      when: "now",
      confirmed: true,
      group: "spring-launch",
      posts: [
        {
          destination_id: world.destinationId,
          body: [
            "Spring launch: the new composer shows each network's preview as you type. #herald https://example.com/spring",
            "Drag images in, write alt text for each, and send the review link to your client.",
          ],
          media_items: [{ asset_id: image, item_index: 0 }],
          destination_options: {
            bluesky: { alt_text_by_asset_id: { [image]: "The composer with two previews" } },
          },
        },
      ],
    },
  });
  expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
  const link = await world.call(
    "POST",
    `/v1/workspaces/${ws}/review-links`,
    { group: "spring-launch" },
    idem(),
  );
  expect(link.status).toBe(201);
  return { path: pathOf(link.body.url), postId: created.body.posts[0].id };
}

test(
  "a client opens the review link, sees the previews and approves",
  async () => {
    const { path, postId } = await awaitingGroup();
    const response = await page.goto(world.s.url + path);
    expect(response?.status()).toBe(200);
    expect(await page.getByRole("heading", { level: 1 }).innerText()).toBe("Review posts for Acme");
    const preview = page.getByRole("region", { name: "Bluesky preview" });
    expect(await preview.getByRole("article").count()).toBe(2);
    const image = preview.getByRole("img", { name: "The composer with two previews" });
    // The image really loads (signed link, allowed by the page's CSP).
    await image.evaluate((img) => (img as unknown as { decode(): Promise<void> }).decode());
    expect(await image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(
      480,
    );
    await lookAt(page, ARTIFACTS, "review");
    if (process.env.HERALD_DOCS_SCREENSHOTS === "1") {
      mkdirSync(DOCS, { recursive: true });
      copyFileSync(join(ARTIFACTS, "review-1280.png"), join(DOCS, "review.png"));
    }

    const approve = page.getByRole("form", { name: "Approve" });
    await approve.getByLabel("Your name (optional)").fill("Carla from Client Co");
    await approve.getByLabel("Comment (optional)").fill("Lovely, go ahead.");
    await approve.getByRole("button", { name: "Approve" }).click();
    await page.waitForLoadState();
    const status = page.getByRole("status");
    expect(await status.innerText()).toContain("You approved 1 post: they go out as planned.");
    expect(await page.getByText("Approved", { exact: true }).count()).toBe(1);
    await lookAt(page, ARTIFACTS, "review-approved");

    const post = await world.call("GET", `/v1/workspaces/${world.ws}/posts/${postId}`);
    expect(post.body.approval.status).toBe("approved");
  },
  BROWSER_TEST_MS,
);
