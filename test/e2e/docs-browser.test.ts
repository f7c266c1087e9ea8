// The API reference (/v1/docs) in headless Chromium (Debian `chromium`, driven by playwright-core):
// Scalar's bundle, served by Herald, renders the reference under the page's own Content-Security-Policy
// with nothing blocked but the bundle's probe for eval (test/security-headers.test.ts checks the
// policy; this checks that it fits the page), with none of Scalar's buttons that lead off this server
// ("Ask AI", "Generate MCP", the developer tools' "Deploy"), and Create Post's generated request
// example is the valid one of the schema.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { launchChromium } from "./dashboard-kit.ts";

let s: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  s = await startTestServer();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // Loopback: where Scalar shows its developer tools unless told not to.
  await page.goto(`${s.url}/v1/docs`);
  await page.getByRole("button", { name: "Open Group - Posts" }).waitFor({ timeout: 30_000 });
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

test("the docs page renders the reference under its CSP, with no violation", async () => {
  const checked = await browser.newPage();
  // Added by the driver, outside the page's policy: every violation the page reports.
  await checked.addInitScript({
    content:
      "window.violations = []; document.addEventListener('securitypolicyviolation', " +
      "(e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI));",
  });
  const response = await checked.goto(`${s.url}/v1/docs`);
  expect(response?.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
  await expect(
    checked.getByRole("heading", { name: "Herald API", level: 1 }).waitFor(),
  ).resolves.toBeUndefined();
  // Styled by the bundle's injected styles: the operations' navigation is laid out beside the text.
  await checked.getByText("Download OpenAPI Document").first().waitFor();
  const sidebar = await checked.getByRole("button", { name: /Posts/ }).first().boundingBox();
  const heading = await checked.getByRole("heading", { name: "Herald API", level: 1 }).boundingBox();
  expect(sidebar!.x).toBeLessThan(heading!.x);
  const violations = (await checked.evaluate("window.violations")) as string[];
  // The bundle's schema library probes once whether eval works (`try { Function("") }`) and takes its
  // eval-free path when refused: that probe is the one report expected; nothing else may be blocked.
  expect(violations.filter((v) => v !== "script-src eval")).toEqual([]);
  await checked.close();
}, 60_000);

describe("the API reference page", () => {
  test("has no button or link to Scalar's AI agent, MCP generator or deployment", async () => {
    for (const name of [/ask ai/i, /generate mcp/i, /connect mcp/i, /^deploy$/i, /developer tools/i]) {
      expect({ name: String(name), buttons: await page.getByRole("button", { name }).count() }).toEqual({
        name: String(name),
        buttons: 0,
      });
      expect({ name: String(name), links: await page.getByRole("link", { name }).count() }).toEqual({
        name: String(name),
        links: 0,
      });
    }
    expect(await page.getByText(/Ask AI|Generate MCP/).count()).toBe(0);
  });

  test("Create Post's request example is a draft with a group", async () => {
    await page.getByRole("button", { name: "Open Group - Posts" }).click();
    await page
      .getByText(/^Create posts: drafts/)
      .first()
      .click();
    await page.getByText('"group": "launch-2026-12"').first().waitFor({ timeout: 15_000 });
    const text = await page.locator("body").innerText();
    expect(text).toContain('"group": "launch-2026-12"');
    expect(text).not.toContain('"group": ""');
    expect(text).not.toContain('"when": ""');
  });
});
