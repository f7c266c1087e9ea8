// The dashboard's CSV import in headless Chromium: choose a file, see the rows judged (a bad row named
// by row and column), choose a corrected file, import it with one button, and see the posts it made.
// Each page is checked with axe-core (light and dark) and screenshotted at 1280 and 375 px into
// test-artifacts/import (HERALD_DOCS_SCREENSHOTS=1 also refreshes docs/dashboard/import.png).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { ROOT } from "../helpers/process.ts";
import { postsWorld, type PostsWorld } from "../dashboard/posts-world.ts";
import { PASSWORD } from "../dashboard/support.ts";
import { launchChromium, lookAt } from "./dashboard-kit.ts";

const ARTIFACTS = join(ROOT, "test-artifacts", "import");
const DOCS = join(ROOT, "docs", "dashboard");
const BROWSER_TEST_MS = 120_000;

let world: PostsWorld;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  rmSync(ARTIFACTS, { recursive: true, force: true });
  world = await postsWorld();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // The import button asks before storing (data-confirm): the person agrees.
  page.on("dialog", (dialog) => void dialog.accept());
});
afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

async function check(name: string, docs = false): Promise<void> {
  await lookAt(page, ARTIFACTS, name);
  if (docs && process.env.HERALD_DOCS_SCREENSHOTS === "1") {
    mkdirSync(DOCS, { recursive: true });
    copyFileSync(join(ARTIFACTS, `${name}-1280.png`), join(DOCS, `${name}.png`));
  }
}

const csvFile = (text: string) => ({ name: "march.csv", mimeType: "text/csv", buffer: Buffer.from(text) });

describe("the import page in a browser", () => {
  test(
    "a file with a bad row, then the corrected file imported",
    async () => {
      await page.goto(`${world.s.url}/login`);
      await page.getByLabel("E-mail address").fill(world.owner.email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL(/\/dashboard$/);
      await page.goto(`${world.s.url}/dashboard/workspaces/${world.ws}/posts`);
      await page.getByRole("link", { name: "Import from CSV" }).click();
      await page.waitForURL(/\/posts\/import$/);
      await check("import-empty");

      const d = world.destinationId;
      const sheet = (when: string, network: string) =>
        "group,when,time_zone,channel,destination_id,body\n" +
        `spring-launch,2026-03-05T09:00:00+01:00,Europe/Berlin,,${d},"Spring is here.\n---\nWhat changed, in a thread."\n` +
        `spring-recap,${when},Europe/Berlin,,${d},"A recap, with ""quotes"""\n` +
        `notes,draft,,${network},,An idea for later\n`;
      await page.getByLabel("CSV file").setInputFiles(csvFile(sheet("next tuesday", "myspace")));
      await page.getByRole("button", { name: "Check the rows" }).click();
      await page.getByText("2 of 3 rows have problems").waitFor();
      await check("import-problems");

      await page.getByLabel("CSV file").setInputFiles(csvFile(sheet("2026-03-06T12:00:00+01:00", "bluesky")));
      await page.getByRole("button", { name: "Check the rows" }).click();
      await page.getByText("All 3 rows are valid").waitFor();
      const table = page.getByRole("table", { name: /Rows of the file/ });
      expect(await table.getByRole("row").count()).toBe(4);
      await check("import", true);

      await page.getByRole("button", { name: "Import 3 posts" }).click();
      await page.getByText("Imported 3 posts").waitFor();
      expect(await page.getByRole("link", { name: /^send_/ }).count()).toBe(3);
      await check("import-done");
      const listed = await world.call("GET", `/v1/workspaces/${world.ws}/posts?group=spring-launch`);
      expect(listed.body.data[0].payload.body).toEqual(["Spring is here.", "What changed, in a thread."]);
    },
    BROWSER_TEST_MS,
  );
});
