// Assets benchmark: a 1 GiB upload through the local backend (a `herald serve` process, parts in
// parallel over loopback, CRC64NVME checked per part as it streams to its place in the upload's file),
// compared with a plain write + fsync of the same bytes to the same disk in the same run; and
// CRC64NVME throughput. Run through `npm run bench`, or alone: `bun bench/assets.ts` (SQLite), with
// HERALD_DATABASE_URL set for PostgreSQL.
import { closeSync, fsyncSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCrc64Nvme } from "../src/lib/crc64nvme.ts";
import {
  checksumVideo,
  startServerProcess,
  uploadVideo,
  virtualVideo,
  type ServerProcess,
  type VirtualVideo,
} from "../test/assets/big-upload.ts";
import { recordTarget } from "./targets.ts";
import { formatSummary, repeat, ROUNDS, summarize, engineFromEnvironment } from "./method.ts";

const MiB = 1024 * 1024;
const SIZE = 1024 * MiB;
const TARGET = 0.7;

/** CRC64NVME over a 256 MiB buffer in 64 KiB chunks (as request bodies arrive), MiB/s. */
async function crcPass(buffer: Uint8Array): Promise<number> {
  const crc = await createCrc64Nvme();
  const started = performance.now();
  for (let offset = 0; offset < buffer.length; offset += 64 * 1024)
    crc.update(buffer.subarray(offset, offset + 64 * 1024));
  crc.digest();
  return buffer.length / MiB / ((performance.now() - started) / 1000);
}

/**
 * The bytes of the upload written to one file on the same disk and synced once, made part by part
 * the way the client makes them: ms.
 */
function rawWrite(dir: string, video: VirtualVideo): number {
  const path = join(dir, "raw.bin");
  const buffer = new Uint8Array(video.partSize);
  const started = performance.now();
  const fd = openSync(path, "w");
  for (let n = 1; n <= video.partCount; n++) {
    const bytes = video.part(n, buffer);
    for (let written = 0; written < bytes.length; )
      written += writeSync(fd, bytes, written, bytes.length - written);
  }
  fsyncSync(fd);
  closeSync(fd);
  const ms = performance.now() - started;
  rmSync(path, { force: true });
  return ms;
}

/** CPU time (user + system) of a process so far, ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
}

interface Round {
  checksumMs: number;
  rawMs: number;
  partsMs: number;
  completeMs: number;
  totalMs: number;
  clientCpuMs: number;
  serverCpuMs: number;
}

/** One raw write, then one upload of the same bytes (its asset deleted after, freeing its page cache). */
async function round(server: ServerProcess, video: VirtualVideo): Promise<Round> {
  const api = { url: server.url, key: server.key, workspaceId: server.workspaceId };
  const checksumStarted = performance.now();
  const checksums = await checksumVideo(video);
  const checksumMs = performance.now() - checksumStarted;
  const dir = mkdtempSync(join(server.dataDir, "raw-"));
  const rawMs = rawWrite(dir, video);
  rmSync(dir, { recursive: true, force: true });
  const client = process.cpuUsage();
  const serverBefore = cpuMs(server.pid);
  const { asset, timings } = await uploadVideo(api, video, checksums);
  const used = process.cpuUsage(client);
  const serverCpuMs = cpuMs(server.pid) - serverBefore;
  if (asset.status !== "ready" || asset.checksum.value !== checksums.whole)
    throw new Error(`upload did not finish: ${JSON.stringify(asset)}`);
  const deleted = await fetch(`${server.url}/v1/workspaces/${server.workspaceId}/assets/${asset.id}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${server.key}` },
  });
  if (!deleted.ok) throw new Error(`delete: ${deleted.status} ${await deleted.text()}`);
  return { checksumMs, rawMs, ...timings, clientCpuMs: (used.user + used.system) / 1000, serverCpuMs };
}

/** Runs the benchmark; returns its section of docs/benchmarks.md. */
export async function assetsBenchmark(env: Record<string, string> = {}, label = "SQLite"): Promise<string> {
  const sample = new Uint8Array(256 * MiB);
  for (let i = 0; i < sample.length; i += 4096) sample[i] = i & 0xff;
  const crc = await repeat(() => crcPass(sample));

  const server = await startServerProcess(env);
  try {
    const video = virtualVideo(SIZE);
    await round(server, video); // warm-up, thrown away
    const baseline = server.memory().rss;
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) rounds.push(await round(server, video));
    const peakGrowth = server.memory().peak - baseline;

    const series = (f: (r: Round) => number) => summarize(rounds.map(f));
    const ratio = series((r) => (100 * r.rawMs) / r.totalMs);
    const rate = (f: (r: Round) => number) => series((r) => SIZE / MiB / (f(r) / 1000));
    const seconds = (f: (r: Round) => number) =>
      formatSummary(
        series((r) => f(r) / 1000),
        2,
      );
    const clientShare = series((r) => (100 * r.clientCpuMs) / (r.clientCpuMs + r.serverCpuMs));
    const met = recordTarget({
      measure: "1 GiB upload ÷ raw write + fsync",
      engine: label,
      figure: `${formatSummary(ratio)}%`,
      target: `≥ ${TARGET * 100}%`,
      met: ratio.median >= TARGET * 100,
    });
    return [
      `## Assets: 1 GiB upload on local storage (${label})`,
      "",
      `A 1 GiB generated MP4 (${video.partCount} parts of 5 MiB, moov at the end) uploaded to a \`herald serve\` ` +
        `process (${label === "SQLite" ? "SQLite" : label}) with its data directory in ${tmpdir()}, four parts at a ` +
        "time over loopback: start, every part PUT (each streams to its offset in the upload's one file, " +
        "its CRC64NVME checked on the way; the file is synced in the background every 64 MiB), complete " +
        "(the last sync, a rename, the moov box inspected), until the asset is ready. The raw write is " +
        "the same bytes, made the same way, written to one file on the same disk with one fsync, just " +
        `before each upload. A full-size warm-up round is thrown away, then ${ROUNDS} rounds; figures are ` +
        "the median with the lowest and highest round in brackets. The client (this process) makes each " +
        "part in a buffer it reuses and shares the two cores with the server; its checksum pass over the " +
        "file before the upload starts is timed apart and not counted in the upload.",
      "",
      "| Measure | Result | Target | |",
      "|---|---|---|---|",
      `| upload end to end ÷ raw write (throughput ratio) | ${formatSummary(ratio)}% | ≥ ${TARGET * 100}% | ${met} |`,
      `| upload end to end (start to ready asset) | ${seconds((r) => r.totalMs)} s (${formatSummary(rate((r) => r.totalMs))} MiB/s) | — | |`,
      `| raw write + fsync of the same bytes | ${seconds((r) => r.rawMs)} s (${formatSummary(rate((r) => r.rawMs))} MiB/s) | — | |`,
      `| start + ${video.partCount} part PUTs | ${seconds((r) => r.partsMs)} s | — | |`,
      `| complete (last sync, rename, inspect) | ${seconds((r) => r.completeMs)} s | — | |`,
      `| CPU during the upload: client / server | ${seconds((r) => r.clientCpuMs)} s / ${seconds((r) => r.serverCpuMs)} s (client ${formatSummary(clientShare)}% of the CPU used) | — | |`,
      `| client: generate and checksum 1 GiB before starting (not in the upload time) | ${seconds((r) => r.checksumMs)} s | — | |`,
      `| CRC64NVME (WebAssembly kernel), 256 MiB in 64 KiB chunks | ${formatSummary(crc)} MiB/s | — | |`,
      `| server RSS growth during the rounds (peak) | ${(peakGrowth / MiB).toFixed(0)} MiB over ${(baseline / MiB).toFixed(0)} MiB | — | |`,
    ].join("\n");
  } finally {
    await server.stop();
  }
}

if (import.meta.main) {
  const { env, label } = engineFromEnvironment();
  console.log(await assetsBenchmark(env, label));
}
