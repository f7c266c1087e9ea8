// Approvals end to end in headless Chromium: the owner requires approval in the workspace's settings, a
// member publishes a draft at a time and it is sent for approval, the owner finds it under "Awaiting
// approval" and approves it from the post page. Each page is checked with axe-core at 1280 and 375 px
// (light and dark) and screenshotted into test-artifacts/approvals (HERALD_DOCS_SCREENSHOTS=1 also
// refreshes docs/dashboard/approvals.png and post-approval.png).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { ROOT } from "../helpers/process.ts";
import { idem } from "../posts/helpers.ts";
import { postsWorld, type PostsWorld } from "../dashboard/posts-world.ts";
import { PASSWORD } from "../dashboard/support.ts";
import { expectAccessible, launchChromium, lookAt } from "./dashboard-kit.ts";

const ARTIFACTS = join(ROOT, "test-artifacts", "approvals");
const DOCS = join(ROOT, "docs", "dashboard");
const BROWSER_TEST_MS = 180_000;

let world: PostsWorld;
let browser: Browser;
let ws: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  rmSync(ARTIFACTS, { recursive: true, force: true });
  world = await postsWorld();
  ws = world.owner.workspaceId;
});
afterAll(async () => {
  for (const c of contexts) await c.close();
  await browser?.close();
  await world?.stop();
});

/** A page of its own browser context, signed in as `email`; confirmation questions are accepted. */
async function signedInPage(email: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  page.on("dialog", (dialog) => void dialog.accept());
  await page.goto(`${world.s.url}/login`);
  await page.getByLabel("E-mail address").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/dashboard$/);
  return page;
}

/** axe at both widths and both schemes, screenshots; `docs` copies the 1280 px one into docs/dashboard. */
async function check(page: Page, name: string, docs = false): Promise<void> {
  await page.setViewportSize({ width: 375, height: 900 });
  await expectAccessible(page, `${name} (375 px)`);
  await page.setViewportSize({ width: 1280, height: 900 });
  await lookAt(page, ARTIFACTS, name);
  if (docs && process.env.HERALD_DOCS_SCREENSHOTS === "1") {
    mkdirSync(DOCS, { recursive: true });
    copyFileSync(join(ARTIFACTS, `${name}-1280.png`), join(DOCS, `${name}.png`));
  }
}

async function open(page: Page, path: string): Promise<void> {
  const response = await page.goto(world.s.url + path);
  expect({ path, status: response?.status() }).toEqual({ path, status: 200 });
}

describe("approvals in a browser", () => {
  test(
    "a member's post awaiting approval is approved by the owner",
    async () => {
      const owner = await signedInPage(world.owner.email);
      // The owner requires approval in the workspace's settings.
      await open(owner, `/dashboard/workspaces/${ws}/settings`);
      await owner.getByRole("checkbox", { name: "Require approval before posts go out" }).check();
      await owner.getByRole("form", { name: "Approval" }).getByRole("button", { name: "Save" }).click();
      await owner.waitForURL(/notice=approval-saved/);
      await check(owner, "workspace-settings-approval");

      // A member's draft, published at a time from its page: sent for approval.
      const memberEmail = "member-e2e@example.com";
      await world.signedInAs("member", memberEmail);
      const created = await world.call(
        "POST",
        `/v1/workspaces/${ws}/posts`,
        {
          when: "draft",
          group: "spring-launch",
          posts: [{ destination_id: world.destinationId, body: ["Spring launch: doors open at nine"] }],
        },
        idem(),
      );
      expect(created.status).toBe(201);
      const postId = created.body.posts[0].id as string;
      const member = await signedInPage(memberEmail);
      await open(member, `/dashboard/workspaces/${ws}/posts/${postId}`);
      await member.getByRole("radio", { name: "At a time" }).check();
      await member.getByLabel(/^Time \(/).fill("2026-03-10T09:00");
      await member.getByRole("button", { name: "Publish" }).click();
      await member.waitForURL(/notice=sent-for-approval/);
      await expect(member.getByRole("status").first().textContent()).resolves.toContain("sent for approval");
      await member.getByRole("textbox", { name: "Comment" }).fill("Ready when you are.");
      await member.getByRole("button", { name: "Add the comment" }).click();
      await member.waitForURL(/notice=commented/);

      // The owner finds it under Awaiting approval and opens it.
      await open(owner, `/dashboard/workspaces/${ws}/approvals`);
      const group = owner.getByRole("region", { name: "Group spring-launch", exact: true });
      await expect(group.textContent()).resolves.toContain("Spring launch: doors open at nine");
      await check(owner, "approvals", true);
      await group.getByRole("link", { name: "Spring launch: doors open at nine" }).click();
      await owner.waitForURL(new RegExp(`/posts/${postId}$`));
      await check(owner, "post-approval", true);

      // Approve, after the confirmation question.
      await owner.getByRole("button", { name: "Approve the post" }).click();
      await owner.waitForURL(/notice=approved/);
      await expect(owner.getByRole("status").first().textContent()).resolves.toContain("approved");
      const after = await world.post(postId);
      expect(after).toMatchObject({ state: "scheduled", approval: { status: "approved" } });
      expect(after.scheduled_at).toBe("2026-03-10T09:00:00.000Z");
      await open(owner, `/dashboard/workspaces/${ws}/approvals`);
      await expect(owner.getByRole("main").textContent()).resolves.toContain("Nothing awaits approval.");
    },
    BROWSER_TEST_MS,
  );
});
