// The local store's multipart layout: the first send of a part goes straight to its offset in the
// upload's one file (completion renames that file, no copy); re-sends, sends racing each other and
// sends after completion started go to files of their own, so a refused send never damages a part
// already taken, and a write still running never reaches the finished object.
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir, uptime } from "node:os";
import { dirname, join } from "node:path";
import { LocalBlobStore } from "../../src/blobs/local.ts";
import { BlobError, type CompletingPart } from "../../src/blobs/store.ts";
import { crc64nvmeOf, crc64nvmeToBase64, crc64nvmeToHex } from "../../src/lib/crc64nvme.ts";

const KiB = 1024;
const PART = 256 * KiB; // the store itself has no minimum part size

const root = mkdtempSync(join(tmpdir(), "herald-local-parts-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let store: LocalBlobStore;
let n = 0;
beforeEach(() => {
  store = new LocalBlobStore(join(root, `store-${++n}`));
});

/** A file of three parts (the last one short) with every part's checksum. */
async function file(seed: number) {
  const bytes = new Uint8Array(2 * PART + 1000);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + seed * 7 + (i >>> 9)) & 0xff;
  const parts = await Promise.all(
    [0, 1, 2].map(async (i) => {
      const slice = bytes.subarray(i * PART, Math.min(bytes.length, (i + 1) * PART));
      return { number: i + 1, bytes: slice, crc: await crc64nvmeOf(slice), offset: i * PART };
    }),
  );
  return { bytes, parts };
}
type File = Awaited<ReturnType<typeof file>>;

/** A request body that hands over `chunks` one by one, each when `next` is called. */
function manualBody(chunks: Uint8Array[]) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return {
    body,
    next() {
      const chunk = chunks.shift();
      if (chunk) controller.enqueue(chunk);
      if (chunks.length === 0) controller.close();
    },
  };
}

const streamOf = (bytes: Uint8Array) => new Response(bytes.slice()).body!;

function send(key: string, uploadId: string, f: File, number: number, body?: ReadableStream<Uint8Array>) {
  const part = f.parts[number - 1]!;
  return store.receivePart!(key, uploadId, number, body ?? streamOf(part.bytes), {
    size: part.bytes.length,
    crc64nvme: part.crc,
    offset: part.offset,
  });
}

function completing(f: File): CompletingPart[] {
  return f.parts.map((p) => ({
    partNumber: p.number,
    etag: `"${crc64nvmeToHex(p.crc)}"`,
    crc64nvme: crc64nvmeToBase64(p.crc),
  }));
}

async function started(f: File) {
  const key = `ws_1/ast_${++n}`;
  const uploadId = await store.createMultipart(key, { contentType: "image/png", byteSize: f.bytes.length });
  const dir = join(store.root, ".multipart", uploadId);
  return { key, uploadId, dir, object: () => readFileSync(join(store.root, key)) };
}

const corrupt = (bytes: Uint8Array) => {
  const copy = bytes.slice();
  copy[1234]! ^= 0xff;
  return copy;
};

describe("local multipart uploads", () => {
  test("parts sent out of order land at their offsets; completion renames the one file", async () => {
    const f = await file(1);
    const u = await started(f);
    for (const number of [3, 1, 2]) await send(u.key, u.uploadId, f, number);
    const inode = statSync(join(u.dir, "data")).ino;
    expect(await store.completeMultipart(u.key, u.uploadId, completing(f), "")).toEqual({ verified: true });
    expect(Buffer.compare(u.object(), f.bytes)).toBe(0);
    expect(statSync(join(store.root, u.key)).ino).toBe(inode); // renamed, not copied
    expect(existsSync(u.dir)).toBe(false);
  });

  test("a refused re-send leaves the taken part as it was", async () => {
    const f = await file(2);
    const u = await started(f);
    for (const number of [1, 2, 3]) await send(u.key, u.uploadId, f, number);
    const bad = send(u.key, u.uploadId, f, 2, streamOf(corrupt(f.parts[1]!.bytes)));
    await expect(bad).rejects.toMatchObject({ code: "checksum_mismatch" });
    await store.completeMultipart(u.key, u.uploadId, completing(f), "");
    expect(Buffer.compare(u.object(), f.bytes)).toBe(0);
  });

  test("a good re-send of a taken part goes to a file of its own and counts once", async () => {
    const f = await file(10);
    const u = await started(f);
    for (const number of [1, 2, 3, 2]) await send(u.key, u.uploadId, f, number);
    expect(readdirSync(u.dir).filter((name) => name.startsWith("part-00002."))).toHaveLength(1);
    expect((await store.listParts(u.key, u.uploadId)).map((p) => p.partNumber)).toEqual([1, 2, 3]);
    await store.completeMultipart(u.key, u.uploadId, completing(f), "");
    expect(Buffer.compare(u.object(), f.bytes)).toBe(0);
  });

  test("two sends of one part at once: the corrupt one is refused and cannot touch the good one", async () => {
    const f = await file(3);
    const u = await started(f);
    const good = f.parts[0]!.bytes;
    const bad = corrupt(good);
    // The corrupt send claims the part's region first and is still streaming when the good one lands.
    const slow = manualBody([bad.subarray(0, 100 * KiB), bad.subarray(100 * KiB)]);
    const first = send(u.key, u.uploadId, f, 1, slow.body);
    slow.next();
    await Bun.sleep(20);
    await send(u.key, u.uploadId, f, 1);
    slow.next();
    await expect(first).rejects.toMatchObject({ code: "checksum_mismatch" });
    for (const number of [2, 3]) await send(u.key, u.uploadId, f, number);
    await store.completeMultipart(u.key, u.uploadId, completing(f), "");
    expect(Buffer.compare(u.object(), f.bytes)).toBe(0);
  });

  test("a send still writing into the upload's file when completion runs never reaches the object", async () => {
    const f = await file(4);
    const u = await started(f);
    const slow = manualBody([new Uint8Array(64 * KiB).fill(7), new Uint8Array(PART - 64 * KiB).fill(7)]);
    const late = send(u.key, u.uploadId, f, 1, slow.body);
    slow.next();
    await Bun.sleep(20);
    for (const number of [1, 2, 3]) await send(u.key, u.uploadId, f, number); // part 1 to a file of its own
    await store.completeMultipart(u.key, u.uploadId, completing(f), "");
    slow.next();
    await late.catch(() => {});
    expect(Buffer.compare(u.object(), f.bytes)).toBe(0);
  });

  test("a part sent after a completion was refused goes to its own file and is copied in", async () => {
    const f = await file(5);
    const u = await started(f);
    for (const number of [1, 3]) await send(u.key, u.uploadId, f, number);
    const refused = store.completeMultipart(u.key, u.uploadId, completing(f), "");
    await expect(refused).rejects.toBeInstanceOf(BlobError);
    await send(u.key, u.uploadId, f, 2);
    expect(readdirSync(u.dir).some((name) => name.startsWith("part-00002."))).toBe(true);
    await store.completeMultipart(u.key, u.uploadId, completing(f), "");
    expect(Buffer.compare(u.object(), f.bytes)).toBe(0);
  });

  test("a claim a crash left behind: the part sent again is used, copied into a new file", async () => {
    const f = await file(6);
    const u = await started(f);
    for (const number of [2, 3]) await send(u.key, u.uploadId, f, number);
    await Bun.write(join(u.dir, "slot-00001"), ""); // claimed, never finished
    await send(u.key, u.uploadId, f, 1);
    await store.completeMultipart(u.key, u.uploadId, completing(f), "");
    expect(Buffer.compare(u.object(), f.bytes)).toBe(0);
  });

  test("a completion that died after renaming the file into place is finished, checked by the caller", async () => {
    const f = await file(7);
    const u = await started(f);
    for (const number of [1, 2, 3]) await send(u.key, u.uploadId, f, number);
    mkdirSync(dirname(join(store.root, u.key)), { recursive: true });
    renameSync(join(u.dir, "data"), join(store.root, u.key));
    expect(await store.completeMultipart(u.key, u.uploadId, completing(f), "")).toEqual({ verified: false });
    expect(Buffer.compare(u.object(), f.bytes)).toBe(0);
    expect(existsSync(u.dir)).toBe(false);
  });

  test("an upload folder without the one file (an older layout) keeps every part in its own file", async () => {
    const f = await file(8);
    const u = await started(f);
    unlinkSync(join(u.dir, "data"));
    for (const number of [2, 1, 3]) await send(u.key, u.uploadId, f, number);
    await store.completeMultipart(u.key, u.uploadId, completing(f), "");
    expect(Buffer.compare(u.object(), f.bytes)).toBe(0);
  });

  test("a part in a file of its own damaged before a restart is dropped at completion", async () => {
    const f = await file(11);
    const u = await started(f);
    unlinkSync(join(u.dir, "data"));
    for (const number of [1, 2, 3]) await send(u.key, u.uploadId, f, number);
    const name = join(u.dir, readdirSync(u.dir).find((n) => n.startsWith("part-00002."))!);
    const bytes = readFileSync(name);
    bytes[10]! ^= 0xff;
    writeFileSync(name, bytes);
    const beforeBoot = (Date.now() - uptime() * 1000 - 3600_000) / 1000;
    utimesSync(name, beforeBoot, beforeBoot);
    const completion = store.completeMultipart(u.key, u.uploadId, completing(f), "");
    await expect(completion).rejects.toMatchObject({ code: "checksum_mismatch" });
    expect((await store.listParts(u.key, u.uploadId)).map((p) => p.partNumber)).toEqual([1, 3]);
    expect(existsSync(join(store.root, u.key))).toBe(false);
  });

  test("a part still streaming when the upload is aborted is refused as not found", async () => {
    const f = await file(9);
    const u = await started(f);
    const slow = manualBody([f.parts[0]!.bytes.subarray(0, 1000), f.parts[0]!.bytes.subarray(1000)]);
    const sending = send(u.key, u.uploadId, f, 1, slow.body);
    slow.next();
    await Bun.sleep(20);
    await store.abortMultipart(u.key, u.uploadId);
    slow.next();
    await expect(sending).rejects.toMatchObject({ code: "not_found" });
    expect(existsSync(u.dir)).toBe(false);
  });
});
