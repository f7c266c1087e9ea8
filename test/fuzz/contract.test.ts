// Contract fuzzing: requests generated from Herald's own OpenAPI document for every operation, sent to
// a live server with a live key, a test key, no key and worse; every answer is checked against the
// document (test/fuzz/checks.ts). Fixed seed and a time budget here; `npm run fuzz` for a long random run.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { operationsOf, ResponseValidator, type Operation } from "./document.ts";
import { failureReport, fuzz, settingsFromEnv, statusTable } from "./runner.ts";
import { startWorld, type World } from "./world.ts";

const settings = settingsFromEnv();
let world: World;
let operations: Operation[];

beforeAll(async () => {
  world = await startWorld();
  const r = await world.s.request("GET", "/v1/openapi.json", { key: null });
  operations = operationsOf(r.body);
});
afterAll(async () => {
  await world?.stop();
});

test(
  "every operation answers every generated request as its OpenAPI document says",
  async () => {
    const started = Date.now();
    const reports = await fuzz(world, operations, new ResponseValidator(), settings);
    const requests = reports.reduce((n, r) => n + r.requests, 0);
    console.log(
      `contract fuzzing: seed ${settings.seed}, ${reports.length} operations, ${requests} requests, ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    if (settings.verbose) console.log(statusTable(reports));
    const report = failureReport(reports, settings);
    if (report) console.error(report);
    expect(reports.filter((r) => r.failure).map((r) => r.op.name)).toEqual([]);
    // Every operation was reached (a filter by HERALD_FUZZ_ONLY aside) and most got many requests.
    if (settings.only === null) expect(reports.length).toBe(operations.length);
    for (const r of reports)
      expect({ op: r.op.name, reached: r.requests > 0 }).toEqual({ op: r.op.name, reached: true });
  },
  (settings.seconds + 120) * 1000,
);
