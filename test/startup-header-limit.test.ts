import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnHerald } from "./helpers/process.ts";

// Bun answers a bare 431 past its native request-head limit, before any JS runs; `serve` raises that
// limit so that the app's own, lower one answers with a problem. It skips loading node:http for it
// when the runtime was started with a high enough --max-http-header-size (what the compiled binary
// can carry), and must still raise it when the flag is lower.

const dir = mkdtempSync(join(tmpdir(), "herald-startup-head-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `bun [runtimeFlags] src/main.ts serve`, sends a request with a 100 KB header, stops it. */
async function bigHeadAnswer(runtimeFlags: string[]): Promise<{ status: number; type: string | null }> {
  const server = await spawnHerald({
    runtimeFlags,
    env: { HERALD_DATA_DIR: mkdtempSync(join(dir, "data-")) },
  });
  try {
    await server.waitForHealth({ pollMs: 25 });
    const origin = server.url;
    const response = await fetch(`${origin}/v1/account`, { headers: { "x-padding": "a".repeat(100_000) } });
    await response.arrayBuffer();
    return { status: response.status, type: response.headers.get("content-type") };
  } finally {
    await server.stop();
  }
}

describe("the native request-head limit at start", () => {
  for (const flags of [[], ["--max-http-header-size=262144"], ["--max-http-header-size=20000"]]) {
    test(`a 100 KB head gets the app's 431 problem (runtime flags: ${flags.join(" ") || "none"})`, async () => {
      expect(await bigHeadAnswer(flags)).toEqual({ status: 431, type: "application/problem+json" });
    });
  }
});
