// A large upload without a large file: a generated MP4 (ftyp, one huge mdat, moov at the end) whose
// bytes are made part by part, so neither side ever holds more than a few parts; and a Herald
// server in its own process, so its memory can be watched. Used by the large-upload test and by
// bench/assets.ts.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { combineCrc64Nvme, createCrc64Nvme, crc64nvmeToBase64 } from "../../src/lib/crc64nvme.ts";
import { partCountFor, partLength, partSizeFor } from "../../src/modules/assets/parts.ts";
import { ftyp, moov } from "./samples.ts";
import { BUN, MAIN, cleanEnv, spawnHerald } from "../helpers/process.ts";

/** A video of `size` bytes that exists only as a function from part number to bytes. */
export interface VirtualVideo {
  size: number;
  partSize: number;
  partCount: number;
  width: number;
  height: number;
  durationSec: number;
  /**
   * The bytes of part `n` (1-based): written into `into` (at least `partSize` bytes; a client reads a
   * file into a buffer it reuses), or freshly allocated.
   */
  part(n: number, into?: Uint8Array): Uint8Array;
}

/** A generated MP4 of exactly `size` bytes (at least a few KiB). */
export function virtualVideo(
  size: number,
  options: { width?: number; height?: number; durationSec?: number } = {},
): VirtualVideo {
  const width = options.width ?? 1920;
  const height = options.height ?? 1080;
  const durationSec = options.durationSec ?? 600;
  const head = ftyp();
  const tail = moov(width, height, durationSec);
  const mdatSize = size - head.length - tail.length;
  const mdat = Buffer.alloc(16); // 64-bit size form: works past 4 GiB too
  mdat.writeUInt32BE(1, 0);
  mdat.write("mdat", 4, "latin1");
  mdat.writeBigUInt64BE(BigInt(mdatSize), 8);
  const regions = [
    { offset: 0, bytes: Buffer.concat([head, mdat]) },
    { offset: size - tail.length, bytes: tail },
  ];
  const partSize = partSizeFor(size);
  const partCount = partCountFor(size, partSize);
  const pattern = Buffer.alloc(partSize);
  for (let i = 0; i < pattern.length; i += 4)
    pattern.writeUInt32LE((Math.imul(i, 2654435761) ^ (i >>> 7)) >>> 0, i);
  return {
    size,
    partSize,
    partCount,
    width,
    height,
    durationSec,
    part(n, into) {
      const start = (n - 1) * partSize;
      const length = partLength(size, partSize, n);
      const bytes = into ? into.subarray(0, length) : new Uint8Array(length);
      bytes.set(pattern.subarray(0, length));
      new DataView(bytes.buffer, bytes.byteOffset).setUint32(Math.min(64, length - 4), n); // every part differs
      for (const region of regions) {
        const from = Math.max(start, region.offset);
        const to = Math.min(start + length, region.offset + region.bytes.length);
        if (from < to)
          bytes.set(region.bytes.subarray(from - region.offset, to - region.offset), from - start);
      }
      return bytes;
    },
  };
}

/** Every part's CRC64NVME and the whole file's, computed part by part. */
export async function checksumVideo(video: VirtualVideo): Promise<{ parts: string[]; whole: string }> {
  const crc = await createCrc64Nvme();
  const parts: string[] = [];
  const buffer = new Uint8Array(video.partSize);
  let whole = 0n;
  for (let n = 1; n <= video.partCount; n++) {
    const bytes = video.part(n, buffer);
    crc.reset();
    crc.update(bytes);
    const value = crc.digest();
    whole = n === 1 ? value : combineCrc64Nvme(whole, value, bytes.length);
    parts.push(crc64nvmeToBase64(value));
  }
  return { parts, whole: crc64nvmeToBase64(whole) };
}

/** Timings of one upload through the API. */
export interface UploadTimings {
  partsMs: number;
  completeMs: number;
  totalMs: number;
}

/** Uploads a virtual video (parts in parallel); returns the ready asset and how long each step took. */
export async function uploadVideo(
  api: { url: string; key: string; workspaceId: string },
  video: VirtualVideo,
  checksums: { parts: string[]; whole: string },
  parallel = 4,
): Promise<{ asset: any; timings: UploadTimings }> {
  const call = async (path: string, body: unknown) => {
    const response = await fetch(`${api.url}/v1/workspaces/${api.workspaceId}${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${api.key}`,
        "content-type": "application/json",
        "idempotency-key": crypto.randomUUID(),
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${path}: ${response.status} ${text.slice(0, 500)}`);
    return JSON.parse(text);
  };
  const started = performance.now();
  const upload = await call("/asset-uploads", {
    kind: "video",
    file_name: "big.mp4",
    content_type: "video/mp4",
    byte_size: video.size,
    parts: checksums.parts.map((checksum_crc64nvme, i) => ({ part_number: i + 1, checksum_crc64nvme })),
  });
  const etags: string[] = [];
  let next = 1;
  const worker = async () => {
    // One buffer per worker, refilled once the server has answered (and so read the whole body).
    const buffer = new Uint8Array(video.partSize);
    while (next <= video.partCount) {
      const n = next++;
      const target = upload.parts[n - 1];
      const response = await fetch(target.upload_url, {
        method: "PUT",
        headers: target.required_headers,
        body: video.part(n, buffer),
      });
      if (response.status !== 200) throw new Error(`part ${n}: ${response.status} ${await response.text()}`);
      etags[n - 1] = response.headers.get("etag")!;
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  const partsDone = performance.now();
  const asset = await call(`/asset-uploads/${upload.id}/complete`, {
    byte_size: video.size,
    checksum_crc64nvme: checksums.whole,
    parts: etags.map((etag, i) => ({ part_number: i + 1, etag, checksum_crc64nvme: checksums.parts[i] })),
  });
  const done = performance.now();
  return {
    asset,
    timings: { partsMs: partsDone - started, completeMs: done - partsDone, totalMs: done - started },
  };
}

/** A `herald serve` process on a fresh data dir with a bootstrapped account. */
export interface ServerProcess {
  url: string;
  /** The server's process id (for strace or perf). */
  pid: number;
  dataDir: string;
  key: string;
  workspaceId: string;
  /** Resident memory now and its peak so far, in bytes (from /proc). */
  memory(): { rss: number; peak: number };
  stop(): Promise<void>;
}

/** Starts `bun src/main.ts serve` (local storage) and waits until /health answers. */
export async function startServerProcess(
  extraEnv: Record<string, string> = {},
  bunArgs: string[] = [],
): Promise<ServerProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), "herald-big-"));
  const env = { HERALD_DATA_DIR: dataDir, HERALD_RATE_LIMIT_PER_MINUTE: "1000000", ...extraEnv };
  const boot = Bun.spawnSync(
    [BUN, MAIN, "admin", "bootstrap", "--email", "big@example.com", "--workspace-name", "Big", "--json"],
    { env: cleanEnv(env), stdout: "pipe", stderr: "pipe" },
  );
  if (boot.exitCode !== 0) throw new Error(`bootstrap failed: ${boot.stderr.toString()}`);
  const account = JSON.parse(boot.stdout.toString()) as { api_key: string; workspace_id: string };
  const server = await spawnHerald({ env, runtimeFlags: bunArgs });
  await server.waitForHealth({ timeoutMs: 10_000 });
  const { url, proc } = server;
  const status = (field: string) =>
    Number(
      /(\d+) kB/.exec(
        readFileSync(`/proc/${proc.pid}/status`, "utf8")
          .split("\n")
          .find((l) => l.startsWith(field)) ?? "",
      )?.[1] ?? 0,
    ) * 1024;
  return {
    url,
    pid: proc.pid,
    dataDir,
    key: account.api_key,
    workspaceId: account.workspace_id,
    memory: () => ({ rss: status("VmRSS:"), peak: status("VmHWM:") }),
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
