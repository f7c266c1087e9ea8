// Assets benchmark: a 1 GiB upload through the local backend (a `herald serve` process, parts in
// parallel over loopback, CRC64NVME checked per part, then assembled into one file), compared with
// a plain write of the same bytes to the same disk in the same run; and CRC64NVME throughput.
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCrc64Nvme } from "../src/lib/crc64nvme.ts";
import { checksumVideo, startServerProcess, uploadVideo, virtualVideo } from "../test/assets/big-upload.ts";

const MiB = 1024 * 1024;
const SIZE = 1024 * MiB;

const rate = (bytes: number, ms: number) => `${(bytes / MiB / (ms / 1000)).toFixed(0)} MiB/s`;

/** CRC64NVME over a 256 MiB buffer in 1 MiB chunks (as request bodies arrive), best of three. */
async function crcThroughput(): Promise<{ mibPerSecond: number; medianMibPerSecond: number; ms: number }> {
  const buffer = new Uint8Array(256 * MiB);
  for (let i = 0; i < buffer.length; i += 4096) buffer[i] = i & 0xff;
  const crc = await createCrc64Nvme();
  // Eight rounds: the engine moves the kernel to its optimising tier at a time it chooses.
  const times: number[] = [];
  for (let round = 0; round < 8; round++) {
    crc.reset();
    const started = performance.now();
    for (let offset = 0; offset < buffer.length; offset += MiB)
      crc.update(buffer.subarray(offset, offset + MiB));
    crc.digest();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const rate = (ms: number) => buffer.length / MiB / (ms / 1000);
  return {
    mibPerSecond: rate(times[0]!),
    medianMibPerSecond: rate(times[times.length >> 1]!),
    ms: times[0]!,
  };
}

/** Writes the same parts to one file on the same disk and syncs it once. */
function rawWrite(dir: string, video: ReturnType<typeof virtualVideo>): number {
  const path = join(dir, "raw.bin");
  const started = performance.now();
  const fd = openSync(path, "w");
  for (let n = 1; n <= video.partCount; n++) {
    const bytes = video.part(n);
    for (let written = 0; written < bytes.length; )
      written += writeSync(fd, bytes, written, bytes.length - written);
  }
  fsyncSync(fd);
  closeSync(fd);
  const ms = performance.now() - started;
  rmSync(path, { force: true });
  return ms;
}

/** Runs the benchmark; returns its section of docs/benchmarks.md. */
export async function assetsBenchmark(): Promise<string> {
  const crc = await crcThroughput();
  const server = await startServerProcess();
  try {
    const api = { url: server.url, key: server.key, workspaceId: server.workspaceId };
    const warm = virtualVideo(6 * MiB);
    await uploadVideo(api, warm, await checksumVideo(warm));
    const baseline = server.memory().rss;

    const video = virtualVideo(SIZE);
    const checksumStarted = performance.now();
    const checksums = await checksumVideo(video);
    const checksumMs = performance.now() - checksumStarted;
    const { asset, timings } = await uploadVideo(api, video, checksums);
    if (asset.status !== "ready" || asset.checksum.value !== checksums.whole)
      throw new Error(`upload did not finish: ${JSON.stringify(asset)}`);
    const peakGrowth = server.memory().peak - baseline;

    const dir = mkdtempSync(join(server.dataDir, "raw-"));
    const rawMs = rawWrite(dir, video);
    rmSync(dir, { recursive: true, force: true });

    return [
      "## Assets",
      "",
      `A 1 GiB generated MP4 (205 parts of 5 MiB) uploaded to a \`herald serve\` process on local storage (${tmpdir()}), four parts at a time over loopback: each part streams to disk with its CRC64NVME checked on the way, then completion assembles one file (synced, renamed into place) and inspects its moov box. The client generates every part twice (checksums, then upload) and runs on the same two cores. CRC64NVME runs in Herald's own WebAssembly slicing-by-16 kernel (src/lib/crc64nvme-wasm/); Bun's engine compiles WebAssembly twice (baseline, then optimised, at a time it chooses), so single runs on this VM swing widely: compare several.`,
      "",
      "| Measure | Result |",
      "|---|---|",
      `| CRC64NVME (own WebAssembly kernel), 256 MiB in 1 MiB chunks, best of 8 rounds (median) | ${crc.mibPerSecond.toFixed(0)} MiB/s = ${((crc.mibPerSecond * MiB) / 1e9).toFixed(2)} GB/s (median ${((crc.medianMibPerSecond * MiB) / 1e9).toFixed(2)} GB/s); target 1 GB/s |`,
      `| client: generate and checksum 1 GiB | ${checksumMs.toFixed(0)} ms (${rate(SIZE, checksumMs)}) |`,
      `| upload: start + 205 part PUTs | ${(timings.partsMs / 1000).toFixed(1)} s (${rate(SIZE, timings.partsMs)}) |`,
      `| complete: assemble 1 GiB + inspect | ${(timings.completeMs / 1000).toFixed(1)} s (${rate(SIZE, timings.completeMs)}) |`,
      `| upload end to end (start to ready asset) | ${(timings.totalMs / 1000).toFixed(1)} s (${rate(SIZE, timings.totalMs)}) |`,
      `| raw disk write of the same bytes (one file, one fsync) | ${(rawMs / 1000).toFixed(1)} s (${rate(SIZE, rawMs)}) |`,
      `| upload end to end ÷ raw write | ${((rawMs / timings.totalMs) * 100).toFixed(0)}% of raw write throughput |`,
      `| server RSS growth during the upload (peak) | ${(peakGrowth / MiB).toFixed(0)} MiB over a ${(baseline / MiB).toFixed(0)} MiB baseline |`,
    ].join("\n");
  } finally {
    await server.stop();
  }
}

if (import.meta.main) console.log(await assetsBenchmark());
