// The posts list, analytics and calendar in headless Chromium (Debian `chromium`, playwright-core): a
// group sent to two accounts is one row, the analytics charts are labelled, and a scheduled post dragged
// to another day (or moved with the keyboard through its Move form) is at its new time in the API.
// Each page is checked with axe-core (light and dark) and screenshotted at 1280 and 375 px into
// test-artifacts/dashboard-extras (HERALD_DOCS_SCREENSHOTS=1 also refreshes docs/dashboard/).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { ROOT } from "../helpers/process.ts";
import { idem } from "../posts/helpers.ts";
import { postsWorld, type PostsWorld } from "../dashboard/posts-world.ts";
import { PASSWORD } from "../dashboard/support.ts";
import { launchChromium, lookAt } from "./dashboard-kit.ts";

const ARTIFACTS = join(ROOT, "test-artifacts", "dashboard-extras");
const DOCS = join(ROOT, "docs", "dashboard");
// Several pages, each checked by axe in two schemes and screenshotted twice, on a loaded 2-core machine.
const BROWSER_TEST_MS = 120_000;

let world: PostsWorld;
let browser: Browser;
let page: Page;
let ws: string;
let bob: string;

beforeAll(async () => {
  browser = await launchChromium();
  rmSync(ARTIFACTS, { recursive: true, force: true });
  world = await postsWorld();
  ws = world.owner.workspaceId;
  await world.setTimeZone("Europe/Berlin");
  const connected = await world.call("POST", `/v1/workspaces/${ws}/destination-connections`, {
    provider: "bluesky",
    instance_origin: world.bluesky.origin,
    handle: "bob.test",
    app_password: "bob-app-pass",
  });
  expect(connected.status).toBe(201);
  bob = connected.body.destination_id;
  const queue = await world.call("PUT", `/v1/workspaces/${ws}/queue`, {
    windows: [1, 2, 3, 4, 5, 6, 7].flatMap((weekday) => [
      { weekday, local_time: "09:00" },
      { weekday, local_time: "18:00" },
    ]),
  });
  expect(queue.status).toBe(200);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${world.s.url}/login`);
  await page.getByLabel("E-mail address").fill(world.owner.email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/dashboard$/);
});
afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

/** Looks at the page (axe, both schemes, both widths); `docs` refreshes docs/dashboard/<name>.png. */
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

/** Create Post with the owner's key into `group`: one post per destination, all with `text`. */
async function send(group: string, when: string, destinations: string[], text: string) {
  const r = await world.call(
    "POST",
    `/v1/workspaces/${ws}/posts`,
    {
      when,
      confirmed: true,
      group,
      posts: destinations.map((destination_id) => ({ destination_id, body: [text] })),
    },
    idem(),
  );
  expect([201, 202]).toContain(r.status);
  return r.body.posts as { id: string }[];
}

describe("posts, analytics and calendar in a browser", () => {
  test(
    "a group sent to two accounts is one row with both",
    async () => {
      await send(
        "spring-launch",
        "2026-03-03T08:30:00Z",
        [world.destinationId, bob],
        "Spring launch: doors open",
      );
      await send("weekly-digest", "2026-03-05T16:00:00Z", [world.destinationId], "The weekly digest");
      await open(`/dashboard/workspaces/${ws}/posts`);
      const row = page.getByRole("row").filter({ hasText: "Spring launch" });
      await expect(row.count()).resolves.toBe(1);
      await expect(row.getByRole("link", { name: /^bluesky · / }).count()).resolves.toBe(2);
      await check("posts", true);
    },
    BROWSER_TEST_MS,
  );

  test(
    "the analytics charts are named, labelled and readable, with their numbers as a table",
    async () => {
      await send("launch-numbers", "now", [world.destinationId, bob], "Launch numbers");
      await world.run();
      for (const record of world.bluesky.records.filter((r) => r.record.text === "Launch numbers"))
        record.counts = { likes: 12, reposts: 4, replies: 3, bookmarks: 2 };
      world.s.clock.advance(10 * 60_000);
      await world.s.server.scheduler.runNow("analytics-refresh");
      await open(`/dashboard/workspaces/${ws}/analytics`);
      await expect(page.getByRole("img", { name: /^Interactions per day/ }).count()).resolves.toBe(1);
      await check("analytics", true);
      await open(`/dashboard/workspaces/${ws}/analytics/launch-numbers`);
      await expect(
        page.getByRole("img", { name: "Totals of the group launch-numbers" }).count(),
      ).resolves.toBe(1);
      await check("analytics-group");
    },
    BROWSER_TEST_MS,
  );

  test(
    "a scheduled post dragged to another day is at its new time; the Move form works by keyboard",
    async () => {
      const [exact] = await send(
        "drag-me",
        "2026-03-04T09:15:00Z",
        [world.destinationId],
        "Drag me to Friday",
      );
      // The first queued post takes Sunday's 18:00 (last week); this one Monday's 09:00.
      await send("queue-first", "queue", [world.destinationId], "Queued first");
      const [queued] = await send("queue-me", "queue", [world.destinationId], "Queued, dropped on a slot");
      expect((await world.post(queued!.id)).queue_local_date).toBe("2026-03-02");
      await open(`/dashboard/workspaces/${ws}/calendar?week=2026-03-02`);
      await check("calendar", true);
      // The group's two posts at one time: each Move names its account.
      for (const account of ["alice.test", "bob.test"]) {
        const name = `Move the bluesky · ${account} post of Tue 3 Mar 09:30`;
        await expect(
          page.getByRole("button", { name, exact: true, includeHidden: true }).count(),
        ).resolves.toBe(1);
      }
      // Wednesday 10:15 in Berlin, dragged onto Friday: the same time of day, two days later.
      await page.locator(`li[data-post="${exact!.id}"]`).dragTo(page.locator("#day-2026-03-06 > h2"));
      await page.waitForURL(/notice=moved/);
      expect(await world.post(exact!.id)).toMatchObject({ scheduled_at: "2026-03-06T09:15:00.000Z" });
      await expect(page.getByRole("status").textContent()).resolves.toContain("The post was moved");
      // A queued post dropped on Saturday's free 18:00 slot takes exactly that time.
      await page
        .locator(`li[data-post="${queued!.id}"]`)
        .dragTo(page.locator("#day-2026-03-07 .slot", { hasText: "Free · 18:00" }));
      await page.waitForURL(/week=2026-03-07&notice=moved/);
      expect(await world.post(queued!.id)).toMatchObject({
        scheduled_at: "2026-03-07T17:00:00.000Z",
        schedule_mode: "exact",
      });
      // Without dragging: the post's Move form, opened and sent with the keyboard.
      const item = page.locator(`li[data-post="${exact!.id}"]`);
      await item.locator("summary").focus();
      await page.keyboard.press("Enter");
      // An open Move form keeps its entry from being dragged (the mouse works in its fields).
      await expect(item.getAttribute("draggable")).resolves.toBe("false");
      await item.getByLabel("Day").fill("2026-03-08");
      await item.getByLabel("Time").fill("07:45");
      await item.getByRole("button", { name: /^Move/ }).focus();
      await page.keyboard.press("Enter");
      await page.waitForURL(/week=2026-03-08&notice=moved/);
      expect(await world.post(exact!.id)).toMatchObject({ scheduled_at: "2026-03-08T06:45:00.000Z" });
    },
    BROWSER_TEST_MS,
  );
});
