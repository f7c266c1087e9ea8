// The API docs page in headless Chromium (Debian `chromium`, driven by playwright-core) under its own
// Content-Security-Policy: Scalar's bundle, served by Herald, renders the reference with nothing
// blocked but the bundle's own probe for eval (test/security-headers.test.ts checks the policy; this
// checks that it fits the page).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
let s: TestServer;
let browser: Browser;

beforeAll(async () => {
  if (!CHROMIUM)
    throw new Error("Debian's chromium is needed (apt-get install chromium); .ci/run installs it");
  s = await startTestServer();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

test("the docs page renders the reference under its CSP, with no violation", async () => {
  const page = await browser.newPage();
  // Added by the driver, outside the page's policy: every violation the page reports.
  await page.addInitScript({
    content:
      "window.violations = []; document.addEventListener('securitypolicyviolation', " +
      "(e) => window.violations.push(e.violatedDirective + ' ' + e.blockedURI));",
  });
  const response = await page.goto(`${s.url}/v1/docs`);
  expect(response?.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
  await expect(
    page.getByRole("heading", { name: "Herald API", level: 1 }).waitFor(),
  ).resolves.toBeUndefined();
  // Styled by the bundle's injected styles: the operations' navigation is laid out beside the text.
  await page.getByText("Download OpenAPI Document").first().waitFor();
  const sidebar = await page.getByRole("button", { name: /Posts/ }).first().boundingBox();
  const heading = await page.getByRole("heading", { name: "Herald API", level: 1 }).boundingBox();
  expect(sidebar!.x).toBeLessThan(heading!.x);
  const violations = (await page.evaluate("window.violations")) as string[];
  // The bundle's schema library probes once whether eval works (`try { Function("") }`) and takes its
  // eval-free path when refused: that probe is the one report expected; nothing else may be blocked.
  expect(violations.filter((v) => v !== "script-src eval")).toEqual([]);
}, 60_000);
