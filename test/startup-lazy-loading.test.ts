import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, MAIN, spawnHerald } from "./helpers/process.ts";
import { freePort } from "./helpers/ports.ts";

// `herald serve` loads what its first requests need and nothing else: the S3 and SMTP clients only
// when configured, the OpenAPI generator on the first request for the document, the transfer CLI
// never, Herald's PostgreSQL engine and table builders only for a PostgreSQL database. Checked on the
// modules a real `serve` process has loaded (Bun lists ES modules too in require.cache), not on
// timings.

const dir = mkdtempSync(join(tmpdir(), "herald-startup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Runs `herald serve` in this process (main.ts resolves once it listens), then reports the modules
// loaded after /health and after /v1/openapi.json.
const PROBE = join(dir, "probe.ts");
writeFileSync(
  PROBE,
  `const [main, port] = process.argv.slice(2);
process.argv.splice(2, Infinity, "serve");
await import(main);
const origin = "http://127.0.0.1:" + port;
const health = await fetch(origin + "/health");
await health.text();
const atStart = Object.keys(require.cache);
const openapi = await fetch(origin + "/v1/openapi.json");
const document = await openapi.json();
const afterOpenApi = Object.keys(require.cache);
const paths = Object.keys(document.paths ?? {}).length;
const probe = { health: health.status, openapi: openapi.status, paths, atStart, afterOpenApi };
console.log("PROBE " + JSON.stringify(probe));
process.exit(0);
`,
);

interface Probe {
  health: number;
  openapi: number;
  paths: number;
  atStart: string[];
  afterOpenApi: string[];
}

async function probeServe(env: Record<string, string>): Promise<Probe> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(dir, "data-"));
  // The probe runs serve inside itself on the port it is given.
  const probe = await spawnHerald({
    port,
    program: [BUN, PROBE, MAIN, String(port)],
    args: [],
    env: { HERALD_DATA_DIR: dataDir, HERALD_ACCESS_LOG: "0", ...env },
  });
  const code = await probe.exited();
  const [stdout, stderr] = [probe.stdout(), probe.stderr()];
  const line = stdout.split("\n").find((l) => l.startsWith("PROBE "));
  if (code !== 0 || !line) throw new Error(`serve probe failed (${code}): ${stderr}`);
  return JSON.parse(line.slice("PROBE ".length)) as Probe;
}

const has = (modules: string[], part: string) => modules.some((m) => m.includes(part));

describe("herald serve start-up", () => {
  test("local storage, no SMTP: no S3, SMTP, OpenAPI-generator or transfer modules until needed", async () => {
    const probe = await probeServe({});
    expect(probe.health).toBe(200);
    expect(has(probe.atStart, "/src/server.ts")).toBe(true);
    for (const part of [
      "/node_modules/minio/",
      "/node_modules/nodemailer/",
      "/node_modules/@elysiajs/openapi/",
      // The password-strength dictionaries load with the first password checked.
      "/node_modules/@zxcvbn-ts/",
      // X's text rules (twitter-text, ~240 modules) load with the first X body checked.
      "/node_modules/twitter-text/",
      // The MCP server package and the tools load with the first request to /mcp.
      "/node_modules/@modelcontextprotocol/",
      "/src/http/mcp/",
      "/src/cli/transfer.ts",
      "/src/modules/transfer/",
      "/src/db/tables/builders-pg.ts",
      "/src/db/engine-postgres.ts",
    ])
      expect({ part, loaded: has(probe.atStart, part) }).toEqual({ part, loaded: false });
    // The first request for the document loads the generator and answers it in full.
    expect(probe.openapi).toBe(200);
    expect(probe.paths).toBeGreaterThan(20);
    expect(has(probe.afterOpenApi, "/node_modules/@elysiajs/openapi/")).toBe(true);
  });

  test("SMTP and S3 configured: their clients are loaded at start", async () => {
    const probe = await probeServe({
      HERALD_SMTP_URL: "smtp://127.0.0.1:1",
      HERALD_STORAGE: "s3",
      HERALD_S3_ENDPOINT: "http://127.0.0.1:1",
      HERALD_S3_BUCKET: "herald",
      HERALD_S3_ACCESS_KEY: "access",
      HERALD_S3_SECRET_KEY: "secret-secret",
    });
    expect(probe.health).toBe(200);
    expect(has(probe.atStart, "/node_modules/nodemailer/")).toBe(true);
    expect(has(probe.atStart, "/node_modules/minio/")).toBe(true);
  });
});
