// The composer end to end in headless Chromium: a thread to Bluesky and X, two images dropped on the
// second item (a DataTransfer in the page) with alt text, the pane's counters and problems following
// the typing, an error fixed, scheduled. Axe-clean at 1280 and 375 px, light and dark; screenshots in
// test-artifacts/compose (HERALD_DOCS_SCREENSHOTS=1 also refreshes docs/dashboard/compose*.png).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { ROOT } from "../helpers/process.ts";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { daily, insertXDestination, makePng, X_APP_ENV } from "../posts/fixtures.ts";
import { connectOwnersBluesky, dashboardWorld, PASSWORD, type DashboardWorld } from "../dashboard/support.ts";
import { launchChromium, lookAt } from "./dashboard-kit.ts";

const ARTIFACTS = join(ROOT, "test-artifacts", "compose");
const DOCS = join(ROOT, "docs", "dashboard");
const BROWSER_TEST_MS = 180_000;

let world: DashboardWorld;
let bluesky: BlueskyFake;
let browser: Browser;
let page: Page;
let ws: string;

beforeAll(async () => {
  browser = await launchChromium();
  rmSync(ARTIFACTS, { recursive: true, force: true });
  world = await dashboardWorld({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1", ...X_APP_ENV } });
  ws = world.owner.workspaceId;
  bluesky = await startBlueskyFake();
  await connectOwnersBluesky(world, bluesky);
  await insertXDestination(world.s, ws);
  const zone = await world.s.request("PATCH", `/v1/workspaces/${ws}`, {
    key: world.owner.apiKey,
    body: { time_zone: "Europe/Paris" },
  });
  expect(zone.status).toBe(200);
  const queue = await world.s.request("PUT", `/v1/workspaces/${ws}/queue`, {
    key: world.owner.apiKey,
    body: { windows: daily("09:00") },
  });
  expect(queue.status).toBe(200);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});
afterAll(async () => {
  await browser?.close();
  await bluesky?.stop();
  await world?.stop();
});

/** The text of an element once it matches (the pane refreshes 400 ms after typing stops). */
async function waitForText(selector: string, pattern: RegExp): Promise<string> {
  const locator = page.locator(selector);
  for (let i = 0; i < 100; i++) {
    const text = (await locator.textContent().catch(() => "")) ?? "";
    if (pattern.test(text)) return text;
    await page.waitForTimeout(100);
  }
  throw new Error(`${selector} never said ${pattern}: "${await locator.textContent()}"`);
}

/** Drops PNG files on an item's drop zone, as a person dragging them from their files. */
async function dropImages(item: number, files: { name: string; bytes: Uint8Array }[]): Promise<void> {
  const encoded = files.map((f) => ({ name: f.name, data: Buffer.from(f.bytes).toString("base64") }));
  await page.evaluate(
    `(() => {
      const transfer = new DataTransfer();
      for (const f of ${JSON.stringify(encoded)}) {
        const bytes = Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0));
        transfer.items.add(new File([bytes], f.name, { type: "image/png" }));
      }
      const zone = document.querySelector('[data-drop="${item}"]');
      zone.dispatchEvent(new DragEvent("dragover", { bubbles: true, cancelable: true, dataTransfer: transfer }));
      zone.dispatchEvent(new DragEvent("drop", { bubbles: true, cancelable: true, dataTransfer: transfer }));
    })()`,
  );
}

describe("the composer in a browser", () => {
  test(
    "a thread to two networks with two dropped images and alt text: preview and counters follow, an error fixed, scheduled",
    async () => {
      await page.goto(
        `${world.s.url}/login?next=${encodeURIComponent(`/dashboard/workspaces/${ws}/posts/new`)}`,
      );
      await page.getByLabel("E-mail address").fill(world.owner.email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(/\/posts\/new$/);

      // Without a reload: X's options appear when X is chosen (none before), the refresh button is gone.
      await expect(page.getByRole("button", { name: /Show options/ }).isVisible()).resolves.toBe(false);
      const destinations = page.getByRole("group", { name: "Destinations" });
      await destinations.getByRole("checkbox", { name: "alice.test" }).check();
      await destinations.getByRole("checkbox", { name: "Herald on X" }).check();

      // Item 1 with a link: X refuses links, so the pane says so and the counter counts by each network.
      await page.locator("#f-body-0-text").fill("Launch day! Read https://example.com/launch");
      await waitForText("#f-body-0-text-count", /(?=.*Bluesky 43\/300)(?=.*X 40\/280)/);
      await waitForText("#compose-pane", /X bodies cannot contain URLs/);
      // The preview of each destination shows the text as its network would.
      const xPreview = page.getByRole("region", { name: "X preview" });
      await expect(xPreview.getByRole("article").first().textContent()).resolves.toContain("Launch day!");
      await expect(page.getByRole("region", { name: "Bluesky preview" }).isVisible()).resolves.toBe(true);
      await expect(page.getByRole("region", { name: "Preview and checks" }).isVisible()).resolves.toBe(true);

      // Item 2, added in place, with two dropped images.
      await page.getByRole("button", { name: "Add another item" }).click();
      await waitForText("#compose-notice", /Item 2 is added\./);
      // The new item's controls are named for it.
      await expect(page.getByRole("button", { name: "Attach to item 2" }).count()).resolves.toBe(1);
      await expect(page.getByRole("group", { name: "Item 2 (reply)" }).isVisible()).resolves.toBe(true);
      await page.locator("#f-body-1-text").fill("Two pictures of the rocket");
      await dropImages(1, [
        { name: "rocket.png", bytes: makePng(64, 48) },
        { name: "pad.png", bytes: makePng(48, 64) },
      ]);
      await waitForText("#f-body-1-attached", /rocket\.png[\s\S]*pad\.png|pad\.png[\s\S]*rocket\.png/);
      const cards = page.locator("#f-body-1-attached li.media-card");
      await expect(cards.count()).resolves.toBe(2);
      // Thumbnails load from the dashboard (the CSP allows images from Herald only).
      await page.waitForFunction(
        "[...document.querySelectorAll('#f-body-1-attached img.thumb')].every((i) => i.complete && i.naturalWidth > 0)",
      );
      // Bluesky refuses images without alt text: the pane says so until both have one.
      await waitForText("#compose-pane", /alt text/i);
      await page.getByLabel(/^Alt text for rocket\.png/).fill("The rocket on its pad at dawn");
      await page.getByLabel(/^Alt text for pad\.png/).fill("The empty launch pad");
      // The second image first: moved in place.
      await page.getByRole("button", { name: /^Move earlier pad\.png/ }).click();
      await waitForText("#compose-notice", /pad\.png.* is now media 1 of item 2\./);
      await waitForText("#f-body-1-text-count", /(?=.*Bluesky 26\/300)(?=.*X 26\/280)/);

      // A screenshot pasted into item 1's text is attached there; detached again in place.
      await page.evaluate(
        `(() => {
          const transfer = new DataTransfer();
          const bytes = Uint8Array.from(atob("${Buffer.from(makePng(20, 10)).toString("base64")}"), (c) => c.charCodeAt(0));
          transfer.items.add(new File([bytes], "pasted.png", { type: "image/png" }));
          const text = document.querySelector("#f-body-0-text");
          text.dispatchEvent(new ClipboardEvent("paste", { bubbles: true, cancelable: true, clipboardData: transfer }));
        })()`,
      );
      await waitForText("#compose-notice", /pasted\.png is attached to item 1\./);
      await page.getByRole("button", { name: /^Detach pasted\.png/ }).click();
      await waitForText("#compose-notice", /pasted\.png.* is detached from item 1\./);
      await expect(page.locator("#f-body-0-attached li").count()).resolves.toBe(0);

      // Fix the error: no link for X.
      await page.locator("#f-body-0-text").fill("Launch day! The details are on our site.");
      await waitForText("#f-body-0-text-count", /(?=.*Bluesky 40\/300)(?=.*X 40\/280)/);
      await waitForText("#compose-pane", /The details are on our site/);
      await expect(
        page.getByRole("region", { name: "Bluesky preview" }).getByRole("article").count(),
      ).resolves.toBe(2);
      await waitForText("#compose-pane-summary", /nothing to fix/i);

      // Schedule in the workspace's zone, shown with the picker; the queue option names its slot.
      await waitForText(
        ".choice:has(input[value=queue]) .hint",
        /Next queue slot: \w{3} \d{1,2} \w{3} 09:00 Europe\/Paris/,
      );
      await page.getByRole("radio", { name: "Schedule at a time" }).check();
      await page.getByLabel("Date and time (Europe/Paris)").fill("2026-03-03T09:30");
      await waitForText("#compose-pane-summary", /nothing to fix/i);
      // The screenshots start at the top of the page (the pane sticks beside the form as it scrolls).
      await page.locator("#f-at").blur();
      await page.evaluate("window.scrollTo(0, 0)");
      await lookAt(page, ARTIFACTS, "compose");
      if (process.env.HERALD_DOCS_SCREENSHOTS === "1") {
        mkdirSync(DOCS, { recursive: true });
        copyFileSync(join(ARTIFACTS, "compose-1280.png"), join(DOCS, "compose.png"));
        copyFileSync(join(ARTIFACTS, "compose-375.png"), join(DOCS, "compose-375.png"));
      }

      await page.getByRole("button", { name: "Save or send" }).click();
      await page.waitForURL(/\/posts\/(?!new)[^/?]+\?notice=created$/);
      const listed = await world.s.request("GET", `/v1/workspaces/${ws}/posts?limit=10`, {
        key: world.owner.apiKey,
      });
      const posts = listed.body.data as any[];
      expect(posts.map((p) => p.channel).sort()).toEqual(["bluesky", "x"]);
      for (const post of posts) {
        expect(post).toMatchObject({ state: "scheduled", scheduled_at: "2026-03-03T08:30:00.000Z" });
        expect(post.payload.body).toEqual([
          "Launch day! The details are on our site.",
          "Two pictures of the rocket",
        ]);
        const alts = Object.values(post.payload.destination_options[post.channel].alt_text_by_asset_id);
        expect(alts.sort()).toEqual(["The empty launch pad", "The rocket on its pad at dawn"]);
        expect(post.assets.map((a: any) => a.item_index)).toEqual([1, 1]);
      }
    },
    BROWSER_TEST_MS,
  );
});
