// The dashboard end to end in headless Chromium (Debian `chromium`, driven by playwright-core): sign in,
// create a key for one selected workspace and use it with fetch, compose a thread with an image and
// schedule it, find it on the week calendar, open a webhook's delivery log. Every page on the way is
// checked with axe-core (no serious or critical violation, light and dark) and screenshotted at 1280
// and 375 px into test-artifacts/dashboard (HERALD_DOCS_SCREENSHOTS=1 also refreshes docs/dashboard/).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { ROOT } from "../helpers/process.ts";
import { startReceiver, runWebhooks, type Receiver } from "../webhooks/helpers.ts";
import { makePng } from "../posts/fixtures.ts";
import { postsWorld, type PostsWorld } from "../dashboard/posts-world.ts";
import { PASSWORD } from "../dashboard/support.ts";
import { launchChromium, lookAt } from "./dashboard-kit.ts";

const ARTIFACTS = join(ROOT, "test-artifacts", "dashboard");
// A browser test clicks through several pages, each checked by axe in two schemes and screenshotted
// twice: seconds each on a loaded 2-core machine (bun's default per-test limit is 5 s).
const BROWSER_TEST_MS = 120_000;
const DOCS = join(ROOT, "docs", "dashboard");

let world: PostsWorld;
let browser: Browser;
let page: Page;
let receiver: Receiver;
let ws: string;

beforeAll(async () => {
  browser = await launchChromium();
  rmSync(ARTIFACTS, { recursive: true, force: true });
  world = await postsWorld();
  ws = world.owner.workspaceId;
  receiver = startReceiver();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});
afterAll(async () => {
  await browser?.close();
  await receiver?.stop();
  await world?.stop();
});

/** Looks at the page (axe, both schemes, both widths); `docs` names its screenshot in docs/dashboard/. */
async function check(name: string, docs = false): Promise<void> {
  await lookAt(page, ARTIFACTS, name);
  if (docs && process.env.HERALD_DOCS_SCREENSHOTS === "1") {
    mkdirSync(DOCS, { recursive: true });
    copyFileSync(join(ARTIFACTS, `${name}-1280.png`), join(DOCS, `${name}.png`));
  }
}

async function open(path: string): Promise<void> {
  const response = await page.goto(world.s.url + path);
  expect({ path, status: response?.status() }).toEqual({ path, status: 200 });
}

describe("the dashboard in a browser", () => {
  test(
    "sign in lands on the overview",
    async () => {
      await page.goto(`${world.s.url}/dashboard`);
      expect(new URL(page.url()).pathname).toBe("/login");
      await check("sign-in", true);
      await page.getByLabel("E-mail address").fill(world.owner.email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(/\/dashboard$/);
      expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Acme");
      await check("overview", true);
    },
    BROWSER_TEST_MS,
  );

  test(
    "a key for one selected workspace works with fetch there and nowhere else",
    async () => {
      const other = await world.s.request("POST", "/v1/workspaces", {
        key: world.owner.apiKey,
        body: { name: "Side project" },
        headers: { "idempotency-key": crypto.randomUUID() },
      });
      expect(other.status).toBe(201);
      await open("/dashboard/keys");
      await page.getByLabel("Name", { exact: true }).fill("Deploy bot");
      await page.getByRole("radio", { name: "Live" }).check();
      await page.getByRole("checkbox", { name: "posts:read" }).check();
      await page.getByRole("checkbox", { name: "workspaces:read" }).check();
      await page.getByRole("radio", { name: "Only the workspaces selected below" }).check();
      await page.getByRole("checkbox", { name: "Acme" }).check();
      await page.getByRole("radio", { name: "Never" }).check();
      await check("keys", true);
      await page.getByRole("button", { name: "Create key" }).click();
      await page.waitForLoadState();
      const key = (await page.locator("#new-api-key").textContent())?.trim() ?? "";
      expect(key).toMatch(/^hk_live_[A-Za-z0-9]{40}$/);
      await check("key-created");
      const get = (path: string) =>
        fetch(world.s.url + path, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);
      expect(await get(`/v1/workspaces/${ws}/posts`)).toBe(200);
      expect(await get(`/v1/workspaces/${other.body.id}/posts`)).toBe(404);
      expect(await get(`/v1/workspaces/${ws}/webhook-endpoints`)).toBe(403);
      // The list never shows the key again.
      await open("/dashboard/keys");
      expect(await page.content()).not.toContain(key);
    },
    BROWSER_TEST_MS,
  );

  test(
    "a thread with an image, scheduled in compose, shows on its detail page and the week calendar",
    async () => {
      await open(`/dashboard/workspaces/${ws}/posts/new`);
      await page.getByRole("group", { name: "Destinations" }).getByRole("checkbox").first().check();
      await page.locator("#f-body-0-text").fill("Launch day: the first item, with a picture");
      await page.locator("#f-body-0-file").setInputFiles({
        name: "launch.png",
        mimeType: "image/png",
        buffer: makePng(64, 48),
      });
      // The script uploads it with progress and attaches it to the item.
      await page.getByText("launch.png is attached to item 1.").waitFor();
      await page.getByRole("button", { name: "Add another item" }).click();
      await page.waitForLoadState();
      await page.locator("#f-body-1-text").fill("And the second item of the thread");
      // Bluesky wants alt text for every image: the round trip brought up its options.
      await page.getByLabel(/^Alt text for/).fill("A rocket on a launch pad");
      await page.getByRole("radio", { name: "Schedule at a time" }).check();
      await page.locator("#f-at").fill("2026-03-03T09:30");
      await check("compose");
      await page.getByRole("button", { name: "Save or send" }).click();
      await page.waitForURL(/\/posts\/(?!new)[^/?]+\?notice=created$/);
      const postId = new URL(page.url()).pathname.split("/").at(-1)!;
      await check("post-detail", true);
      const post = await world.post(postId);
      expect(post).toMatchObject({ state: "scheduled", scheduled_at: "2026-03-03T09:30:00.000Z" });
      expect(post.payload.body).toEqual([
        "Launch day: the first item, with a picture",
        "And the second item of the thread",
      ]);
      expect(post.asset_ids.length).toBe(1);

      await open(`/dashboard/workspaces/${ws}/calendar?week=2026-03-03`);
      const tuesday = page.locator(".week > li").nth(1);
      await expect(tuesday.textContent()).resolves.toContain("Launch day");
      await check("calendar");
      await open(`/dashboard/workspaces/${ws}/posts?view=scheduled`);
      await expect(page.locator("main").textContent()).resolves.toContain("Launch day");
      await check("posts");
    },
    BROWSER_TEST_MS,
  );

  test(
    "a webhook endpoint's test event shows in its delivery log",
    async () => {
      await open(`/dashboard/workspaces/${ws}/webhooks`);
      await page.getByLabel("Name", { exact: true }).fill("Receiver");
      await page.getByLabel("URL", { exact: true }).fill(receiver.url);
      await page.getByRole("button", { name: /add/i }).click();
      await page.waitForLoadState();
      await expect(page.locator("#signing-secret").textContent()).resolves.toMatch(/^whsec_/);
      await page.getByRole("link", { name: "Open the endpoint" }).first().click();
      await page.waitForLoadState();
      await page.getByRole("button", { name: "Send a test event" }).click();
      await page.waitForLoadState();
      await runWebhooks(world.s.server);
      expect(receiver.received.length).toBe(1);
      await page.reload();
      const delivery = page.locator("details").filter({ hasText: "webhook.test" }).first();
      await delivery.locator("summary").click();
      await expect(delivery.textContent()).resolves.toContain("200");
      await check("webhook-deliveries", true);
    },
    BROWSER_TEST_MS,
  );

  test(
    "the account pages are accessible and fit a phone",
    async () => {
      for (const [path, name] of [
        ["/dashboard/workspaces", "workspaces"],
        [`/dashboard/workspaces/${ws}/settings`, "workspace-settings"],
        [`/dashboard/workspaces/${ws}/destinations`, "destinations"],
        [`/dashboard/workspaces/${ws}/analytics`, "analytics"],
        ["/dashboard/team", "team"],
        ["/dashboard/billing", "billing"],
      ] as const) {
        await open(path);
        // docs/dashboard/analytics.png has numbers to chart: dashboard-extras-browser.test.ts takes it.
        await check(name, name !== "analytics");
      }
    },
    BROWSER_TEST_MS,
  );

  test(
    "a post that recycles shows its plan on its page, accessibly",
    async () => {
      const created = await world.call(
        "POST",
        `/v1/workspaces/${ws}/posts`,
        {
          when: "2026-03-04T10:00:00Z",
          confirmed: true,
          group: "e2e-recycling",
          posts: [
            {
              destination_id: world.destinationId,
              body: ["An evergreen post"],
              recycle: { every_days: 30, count: 2, variations: [["The evergreen post, said again"]] },
            },
          ],
        },
        { "idempotency-key": crypto.randomUUID() },
      );
      expect({ status: created.status, text: created.status === 201 ? "" : created.text }).toEqual({
        status: 201,
        text: "",
      });
      await open(`/dashboard/workspaces/${ws}/posts/${created.body.posts[0].id}`);
      expect(await page.getByRole("heading", { name: "Recycling" }).count()).toBe(1);
      await check("post-recycling");
    },
    BROWSER_TEST_MS,
  );
});
