// A 1 GiB upload through the local backend against a `herald serve` process: the file is generated
// part by part (never whole in memory on either side), the server's resident memory stays flat, and
// the assembled file is byte-exact (its CRC64NVME read back from disk) and inspected from its moov
// box behind 1 GiB of mdat.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { createCrc64Nvme, crc64nvmeToBase64 } from "../../src/lib/crc64nvme.ts";
import {
  checksumVideo,
  startServerProcess,
  uploadVideo,
  virtualVideo,
  type ServerProcess,
} from "./big-upload.ts";

const MiB = 1024 * 1024;
const SIZE = 1024 * MiB;

let server: ServerProcess;
beforeAll(async () => {
  server = await startServerProcess();
});
afterAll(async () => {
  await server.stop();
});

test("a 1 GiB upload keeps the server's memory flat and stores the exact file", async () => {
  const api = { url: server.url, key: server.key, workspaceId: server.workspaceId };
  // Warm up (first upload, first inspection) so the baseline is the server at work, not at rest.
  const warm = virtualVideo(6 * MiB);
  await uploadVideo(api, warm, await checksumVideo(warm));
  const baseline = server.memory().rss;

  const video = virtualVideo(SIZE, { width: 3840, height: 2160, durationSec: 3600 });
  expect(video.partCount).toBe(205);
  const checksums = await checksumVideo(video);
  const { asset } = await uploadVideo(api, video, checksums);
  expect(asset).toMatchObject({
    status: "ready",
    byte_size: SIZE,
    width: 3840,
    height: 2160,
    dimensions: "3840x2160",
    format: "x-landscape",
    duration_sec: 3600,
    checksum: { algorithm: "crc64nvme", value: checksums.whole },
  });

  const growth = server.memory().peak - baseline;
  console.log(
    `server RSS: baseline ${(baseline / MiB).toFixed(0)} MiB, peak growth during the 1 GiB upload ${(growth / MiB).toFixed(0)} MiB`,
  );
  expect(growth).toBeLessThan(200 * MiB);

  const crc = await createCrc64Nvme();
  let size = 0;
  for await (const chunk of Bun.file(join(server.dataDir, "blobs", server.workspaceId, asset.id)).stream()) {
    crc.update(chunk);
    size += chunk.byteLength;
  }
  expect(size).toBe(SIZE);
  expect(crc64nvmeToBase64(crc.digest())).toBe(checksums.whole);
}, 180_000);
