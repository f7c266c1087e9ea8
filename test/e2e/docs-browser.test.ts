// The API reference (/v1/docs) in headless Chromium: Scalar renders it from this server's OpenAPI
// document, with none of its buttons that lead off this server ("Ask AI", "Generate MCP", the developer
// tools' "Deploy"), and Create Post's generated request example is the valid one of the schema.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { CHROMIUM } from "./dashboard-kit.ts";

let s: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!CHROMIUM) throw new Error("Debian's chromium is needed (apt-get install chromium)");
  s = await startTestServer();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // Loopback: where Scalar shows its developer tools unless told not to.
  await page.goto(`${s.url}/v1/docs`);
  await page.getByRole("button", { name: "Open Group - Posts" }).waitFor({ timeout: 30_000 });
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

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
