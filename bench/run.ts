// `npm run bench`: every benchmark on SQLite, then on PostgreSQL (a throwaway cluster, when the server
// binaries are installed), written to docs/benchmarks.md with the profile notes and the history.
// BENCH_ONLY=http,engine (names below, sqlite-sync and engines) runs some; BENCH_ROUNDS=1 makes a quick, rough pass.
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { assetsBenchmark } from "./assets.ts";
import { engineBenchmark } from "./engine.ts";
import { enginesBenchmark } from "./engines.ts";
import { growthBenchmark } from "./growth.ts";
import { memoryBenchmark } from "./memory.ts";
import { ROUNDS } from "./method.ts";
import { startBenchPostgres } from "./postgres.ts";
import { readsBenchmark } from "./reads.ts";
import { scaleOutBenchmark } from "./scale-out.ts";
import { sqliteSyncBenchmark } from "./sqlite-sync.ts";

import { slowNetworkBenchmark } from "./slow-network.ts";
import { startupBenchmark } from "./startup.ts";
import { targetsTable } from "./targets.ts";
import { webhooksBenchmark } from "./webhooks.ts";

type Benchmark = (env: Record<string, string>, label: string) => Promise<string>;
const benchmarks: [string, Benchmark][] = [
  ["http", readsBenchmark],
  ["engine", engineBenchmark],
  ["slow-network", slowNetworkBenchmark],
  ["webhooks", webhooksBenchmark],
  ["assets", assetsBenchmark],
  ["startup", startupBenchmark],
  ["growth", growthBenchmark],
  ["memory", memoryBenchmark],
  ["scale-out", scaleOutBenchmark],
];
const only = process.env.BENCH_ONLY?.split(",");
const selected = benchmarks.filter(([name]) => !only || only.includes(name));
/** Benchmarks of one engine only (the others return no section for it). */
const postgresOnly = new Set(["scale-out"]);

const sections: string[] = [];
const PARTIAL = join(tmpdir(), `herald-bench-${process.pid}.md`);
console.error(`bench: sections are appended to ${PARTIAL} as they finish`);
/** A benchmark's section, or a note of how it failed (the other benchmarks' figures are kept). */
async function section(name: string, label: string, run: () => Promise<string>): Promise<string> {
  console.error(`bench: ${name} on ${label}`);
  let text: string;
  try {
    text = await run();
  } catch (error) {
    console.error(error);
    text = `## ${name} (${label})\n\nFailed in this run: ${(error as Error).message}`;
  }
  // Each section as it is done, so a run stopped part way keeps what it measured.
  appendFileSync(PARTIAL, `${text}\n\n`);
  return text;
}
for (const [name, run] of selected.filter(([name]) => !postgresOnly.has(name))) {
  sections.push(await section(name, "SQLite", () => run({}, "SQLite")));
}
// SQLite only: the durable default against the opt-out, two servers side by side.
if (!only || only.includes("sqlite-sync")) {
  sections.push(await section("sqlite-sync", "SQLite", sqliteSyncBenchmark));
}
const postgres = await startBenchPostgres();
if (postgres) {
  try {
    for (const [name, run] of selected) {
      const env = await postgres.freshDatabase();
      sections.push(await section(name, "PostgreSQL", () => run(env, "PostgreSQL")));
    }
    // Both engines at once (their ratio), so once rather than per engine.
    if (!only || only.includes("engines")) {
      const env = await postgres.freshDatabase();
      const label = "PostgreSQL beside SQLite";
      sections.push(
        await section("engines", label, () => enginesBenchmark(env, label, { clusterPid: postgres.pid })),
      );
    }
  } finally {
    await postgres.stop();
  }
} else sections.push("## PostgreSQL\n\nSkipped: PostgreSQL's server binaries are not installed.");

const cpu = cpus()[0]?.model ?? "unknown CPU";
const header = [
  "# Benchmarks",
  "",
  `Written by \`npm run bench\` on ${new Date().toISOString()}: ${cpus().length} cores (${cpu}), ` +
    `${(totalmem() / 2 ** 30).toFixed(0)} GiB, Bun ${Bun.version}, SQLite (WAL) and ` +
    `${postgres ? `PostgreSQL ${postgres.version} (default durability)` : "no PostgreSQL"}.`,
  `Method for every figure: a warm-up run thrown away, then ${ROUNDS} runs; the median is shown with the ` +
    "lowest and highest in brackets. The load generator and the server share the same cores, as they " +
    "would on a small VM. Numbers from a shared VM are noisy: compare runs on the same machine.",
  "",
].join("\n");
const targets = [
  "## Targets at a glance",
  "",
  "Generated from the figures of this run (each benchmark records its targets as it measures them: " +
    "bench/targets.ts). Where a target is missed, the section's notes and the profile notes at the end of " +
    "this file say what bounds it.",
  "",
  targetsTable(),
].join("\n");
const notes = readFileSync(join(import.meta.dir, "history.md"), "utf8").trim();
const text = `${header}\n${targets}\n\n${sections.join("\n\n")}\n\n${notes}\n`;
writeFileSync(join(import.meta.dir, "..", "docs", "benchmarks.md"), text);
console.log(text);
