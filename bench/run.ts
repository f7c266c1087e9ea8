// `npm run bench`: runs every benchmark and writes docs/benchmarks.md.
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { assetsBenchmark } from "./assets.ts";
import { engineBenchmark } from "./engine.ts";
import { readsBenchmark } from "./reads.ts";
import { webhooksBenchmark } from "./webhooks.ts";

const sections = [
  await engineBenchmark(),
  await readsBenchmark(),
  await webhooksBenchmark(),
  await assetsBenchmark(),
  // Comparisons across versions, measured once and kept (the old code cannot be re-run from here).
  readFileSync(join(import.meta.dir, "history.md"), "utf8").trim(),
];
const header = [
  "# Benchmarks",
  "",
  `Written by \`npm run bench\` on ${new Date().toISOString()} — ${cpus().length} cores (${cpus()[0]?.model ?? "unknown CPU"}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Bun ${Bun.version}.`,
  "Numbers from a shared VM are noisy; compare runs on the same machine.",
  "",
].join("\n");
const text = `${header}\n${sections.join("\n\n")}\n`;
writeFileSync(join(import.meta.dir, "..", "docs", "benchmarks.md"), text);
console.log(text);
