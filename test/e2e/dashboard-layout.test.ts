// The dashboard's layout measured in headless Chromium: the API keys table keeps its Revoke buttons
// inside the page at 1280 px (nothing cut off or scrolled away), and on a 375 px phone the navigation
// leaves the page's main heading in the first screen.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { dashboardWorld, type DashboardWorld, PASSWORD } from "../dashboard/support.ts";
import { launchChromium } from "./dashboard-kit.ts";

let world: DashboardWorld;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  world = await dashboardWorld();
  // Keys as people name them, with every scope: the widest rows the table has.
  for (let i = 0; i < 3; i++) await world.s.createKey({});
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${world.s.url}/login`);
  await page.getByLabel("E-mail address").fill(world.owner.email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/dashboard$/);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

/** Whether the element is wholly visible: inside the viewport and inside every box that clips it. */
async function whollyVisible(page: Page, selector: { role: "button"; name: RegExp }, index: number) {
  const handle = await page.getByRole(selector.role, { name: selector.name }).nth(index).elementHandle();
  // Runs in the page (no DOM types here): the element's box against the viewport and each clipping box.
  return page.evaluate((el: any) => {
    const g = globalThis as any;
    type Box = { left: number; right: number; top: number };
    const box: Box = el.getBoundingClientRect();
    const inside = (outer: Box) =>
      box.left >= outer.left - 0.5 && box.right <= outer.right + 0.5 && box.top >= outer.top - 0.5;
    if (!inside({ left: 0, right: g.document.documentElement.clientWidth, top: 0 }))
      return { visible: false, why: `past the viewport (right ${box.right})` };
    for (let p = el.parentElement; p; p = p.parentElement) {
      if (g.getComputedStyle(p).overflowX !== "visible" && !inside(p.getBoundingClientRect()))
        return { visible: false, why: `clipped by ${p.className || p.tagName} (right ${box.right})` };
    }
    return { visible: true, why: "" };
  }, handle);
}

describe("the dashboard's layout", () => {
  test("at 1280 px every Revoke button of the API keys table is wholly visible", async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${world.s.url}/dashboard/keys`);
    const count = await page.getByRole("button", { name: /^Revoke/ }).count();
    expect(count).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < count; i++)
      expect({ i, ...(await whollyVisible(page, { role: "button", name: /^Revoke/ }, i)) }).toEqual({
        i,
        visible: true,
        why: "",
      });
  }, 60_000);

  test("at 375 px the main heading is in the top half of the first screen, on the overview and a workspace page", async () => {
    await page.setViewportSize({ width: 375, height: 667 });
    for (const path of ["/dashboard", `/dashboard/workspaces/${world.owner.workspaceId}/posts`]) {
      await page.goto(world.s.url + path);
      const box = await page.getByRole("heading", { level: 1 }).boundingBox();
      // In the top half of the screen: the navigation takes a few rows, not the screen.
      expect({ path, bottom: box!.y + box!.height <= 667 / 2 }).toEqual({ path, bottom: true });
      // Only the navigation's rows scroll sideways, never the page.
      const overflow = await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth",
      );
      expect({ path, overflow }).toEqual({ path, overflow: 0 });
      // The navigation is still there for whoever opens it.
      await expect(page.getByRole("navigation", { name: "Dashboard" }).count()).resolves.toBe(1);
    }
  }, 60_000);
});
