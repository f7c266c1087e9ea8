// What the end-to-end tests share: Debian's chromium through playwright-core, an axe-core
// check of a page (no serious or critical violation), and screenshots at 1280 and 375 px.
import { expect } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { ROOT } from "../helpers/process.ts";

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));

/** Debian's chromium, headless; without it the test fails first, naming the package to install. */
export function launchChromium(): Promise<Browser> {
  if (!CHROMIUM)
    throw new Error("Debian's chromium is needed (apt-get install chromium); .ci/run installs it");
  return chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
}

const AXE_SOURCE = readFileSync(join(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");

/** Widths every page is looked at: a laptop and a small phone. */
export const WIDTHS = [1280, 375] as const;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core's WCAG 2.1 A/AA rules on the page as it is, in the scheme the browser emulates;
 * fails the test on a serious or critical violation (listing rule, help and elements).
 */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  // Evaluated through the DevTools protocol: the page's CSP (script-src 'self') does not apply to it.
  await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run: (o: unknown) => Promise<{ violations: unknown[] }> } }
    ).axe;
    const result = await axe.run({ runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21aa"] } });
    return result.violations;
  })) as AxeViolation[];
  const serious = violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect({ page: name, serious }).toEqual({ page: name, serious: [] });
}

/**
 * Screenshots the page at each width (full page) into `dir` as `<name>-<width>.png`, and checks
 * nothing scrolls sideways at the small width (readable at 320–375 px). Returns the files written.
 */
export async function screenshots(page: Page, dir: string, name: string): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    const file = join(dir, `${name}-${width}.png`);
    await page.screenshot({ path: file, fullPage: true });
    files.push(file);
    if (width < 400) {
      // A string, evaluated in the page (the test's own types have no DOM).
      const overflow = await page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth",
      );
      expect({ page: name, width, overflow }).toEqual({ page: name, width, overflow: 0 });
    }
  }
  await page.setViewportSize({ width: WIDTHS[0], height: 900 });
  return files;
}

/** Both checks on the page as it stands, in light and in dark. */
export async function lookAt(page: Page, dir: string, name: string): Promise<void> {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await expectAccessible(page, `${name} (${scheme})`);
  }
  await page.emulateMedia({ colorScheme: "light" });
  await screenshots(page, dir, name);
}
