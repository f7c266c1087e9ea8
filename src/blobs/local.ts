import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import {
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  truncate,
  unlink,
  writeFile,
  type FileHandle,
} from "node:fs/promises";
import { uptime } from "node:os";
import { dirname, join } from "node:path";
import { createCrc64Nvme, crc64nvmeToHex, type Crc64Nvme } from "../lib/crc64nvme.ts";
import {
  BlobError,
  collect,
  isValidBlobKey,
  type BlobStore,
  type ByteRange,
  type PartExpectation,
  type StoredMultipartUpload,
  type StoredObject,
  type StoredPart,
} from "./store.ts";

// Layout under <dataDir>/blobs:
//   <key>                          objects (`ws_…/ast_…`), renamed into place when complete
//   .multipart/<upload id>/        one folder per multipart upload:
//     upload.json                  its key and start time
//     data                         the object being assembled: each part is written at its own offset,
//                                  so completion syncs and renames it instead of copying every byte
//     slot-<n>                     a claim (created exclusively) on part n's region of `data` while
//                                  the part streams in (left behind only by a crash)
//     slot-<n>.<crc>.<offset>.<size>  the claim renamed once part n is in `data` and matched its CRC64NVME
//     part-<n>.<crc>               part n received while its region was claimed (a re-send, or two
//                                  sends at once): copied into `data` at completion
//     sealed                       a completion started: no more writes into `data`
//   .tmp/                          files being written; never read
// Everything is on one file system, so a rename is atomic.

const MULTIPART = ".multipart";
const TMP = ".tmp";
const DATA = "data";
const SEALED = "sealed";
/** Bytes of an upload's `data` file taken since its last sync that start a background sync. */
const SYNC_EVERY = 64 * 1024 * 1024;
/** Bytes gathered before one write call (request bodies arrive in chunks of 64 KiB). */
const WRITE_BATCH = 1024 * 1024;
const PART_FILE = /^part-(\d{5})\.([0-9a-f]{16})$/;
const SLOT_CLAIM = /^slot-(\d{5})$/;
const SLOT_DONE = /^slot-(\d{5})\.([0-9a-f]{16})\.(\d+)\.(\d+)$/;

function randomName(): string {
  return randomBytes(12).toString("hex");
}

const partName = (partNumber: number) => String(partNumber).padStart(5, "0");
const isMissing = (error: unknown) => (error as NodeJS.ErrnoException)?.code === "ENOENT";

/**
 * Writes chunks to a file from a starting position in batches of about WRITE_BATCH bytes, one
 * writev each, while the next batch gathers (at most one write in flight). Chunks are kept, not
 * copied: the caller must not reuse a chunk's memory after handing it over.
 */
class GatheringWriter {
  private batch: Uint8Array[] = [];
  private batchBytes = 0;
  private inFlight: Promise<void> | null = null;
  constructor(
    private readonly file: FileHandle,
    private position: number,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    this.batch.push(chunk);
    this.batchBytes += chunk.byteLength;
    if (this.batchBytes >= WRITE_BATCH) await this.startWrite();
  }

  /** Waits for a write still running, ignoring its outcome (before closing the file after a failure). */
  async settle(): Promise<void> {
    await this.inFlight?.catch(() => {});
  }

  /** Writes whatever is gathered and waits for the disk. */
  async flush(): Promise<void> {
    if (this.batchBytes > 0) await this.startWrite();
    await this.inFlight;
    this.inFlight = null;
  }

  private async startWrite(): Promise<void> {
    await this.inFlight;
    const write = writeAll(this.file, this.batch, this.batchBytes, this.position);
    write.catch(() => {}); // seen by the next flush or settle, not an unhandled rejection meanwhile
    this.inFlight = write;
    this.position += this.batchBytes;
    this.batch = [];
    this.batchBytes = 0;
  }
}

async function writeAll(file: FileHandle, chunks: Uint8Array[], length: number, position: number) {
  const written = (await file.writev(chunks, position)).bytesWritten;
  if (written === length) return;
  // A short write (rare on a regular file): the rest in one buffer.
  const rest = Buffer.concat(chunks).subarray(written);
  for (let done = 0; done < rest.length; )
    done += (await file.write(rest, done, rest.length - done, position + written + done)).bytesWritten;
}

/** `size` bytes of a file from `start`, in fresh buffers (a consumer may keep them). */
async function* readRange(file: FileHandle, start: number, size: number): AsyncGenerator<Uint8Array> {
  for (let done = 0; done < size; ) {
    const buffer = Buffer.allocUnsafe(Math.min(WRITE_BATCH, size - done));
    const { bytesRead } = await file.read(buffer, 0, buffer.length, start + done);
    if (bytesRead === 0) throw new Error(`the file ends ${size - done} bytes early`);
    done += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}

/** One stored part as completion uses it: where its bytes are and whether to check them again. */
interface PartSource {
  partNumber: number;
  etag: string;
  size: number;
  modifiedAt: number;
  /** In `data` at this offset; or null when in its own file. */
  offset: number | null;
  /** The file holding its bytes (`data` or its own). */
  path: string;
  /** The file whose presence says the part is stored (its marker, or its own file). */
  record: string;
}

/** A stored part placed in the object being completed: its bytes go at `at`. */
type PlacedPart = PartSource & { at: number };

/** Marks a completion started: parts that start after this go to files of their own, never into `data`. */
async function sealUpload(dir: string, uploadId: string): Promise<void> {
  await writeFile(join(dir, SEALED), "").catch((error) => {
    if (isMissing(error)) throw new BlobError("not_found", `no multipart upload ${uploadId}`);
    throw error;
  });
}

/** The parts a completion names, each at its offset in the object; one not stored as named is not_found. */
function placeParts(
  requested: { partNumber: number; etag: string }[],
  stored: Map<number, PartSource>,
): { sources: PlacedPart[]; total: number } {
  let offset = 0;
  const sources = requested.map((p) => {
    const found = stored.get(p.partNumber);
    if (!found || found.etag !== p.etag)
      throw new BlobError("not_found", `part ${p.partNumber} with ETag ${p.etag} is not stored`);
    const source = { ...found, at: offset };
    offset += found.size;
    return source;
  });
  return { sources, total: offset };
}

/**
 * `data` is gone though parts were written into it: an earlier completion renamed it into place and
 * died before removing the folder. The caller reads the object back against every part's checksum.
 */
async function finishInterruptedCompletion(
  uploadId: string,
  dir: string,
  target: string,
  total: number,
): Promise<{ verified: false }> {
  if ((await stat(target).catch(() => null))?.size === total) {
    await rm(dir, { recursive: true, force: true });
    return { verified: false };
  }
  throw new Error(`multipart upload ${uploadId} lost its data file`);
}

/**
 * Reads parts for a completion. A part written before this boot (with a minute's margin) is read back
 * against its CRC64NVME, since a crash may have damaged it on disk; one of this boot was checked as it
 * arrived.
 */
async function partReader() {
  const bootedAt = Date.now() - uptime() * 1000 + 60_000;
  const crc = await createCrc64Nvme();
  const predatesBoot = (source: PartSource) => source.modifiedAt < bootedAt;
  const checked = async function* (source: PlacedPart, file: FileHandle) {
    const verify = predatesBoot(source);
    crc.reset();
    for await (const chunk of readRange(file, source.offset ?? 0, source.size)) {
      if (verify) crc.update(chunk);
      yield chunk;
    }
    if (verify && crc.digest() !== BigInt(`0x${source.etag.slice(1, -1)}`)) {
      await unlink(source.record).catch(() => {}); // forget the damaged copy: the client sends it again
      throw new BlobError(
        "checksum_mismatch",
        `part ${source.partNumber} was damaged on disk since it was received; send it again`,
      );
    }
  };
  return { predatesBoot, checked };
}

type PartReader = Awaited<ReturnType<typeof partReader>>;

/**
 * The usual case: copy in only the parts that went to files of their own, check the old ones in
 * place, then sync `data` and rename it to the object.
 */
async function completeInPlace(
  dataPath: string,
  target: string,
  sources: PlacedPart[],
  total: number,
  reader: PartReader,
): Promise<void> {
  const data = await open(dataPath, "r+");
  try {
    for (const source of sources) {
      if (source.offset === null) {
        const file = await open(source.path, "r");
        const writer = new GatheringWriter(data, source.at);
        try {
          for await (const chunk of reader.checked(source, file)) await writer.write(chunk);
          await writer.flush();
        } finally {
          await writer.settle();
          await file.close();
        }
      } else if (reader.predatesBoot(source)) {
        for await (const chunk of reader.checked(source, data)) void chunk;
      }
    }
    await data.truncate(total);
    await data.datasync();
  } finally {
    await data.close();
  }
  await mkdir(dirname(target), { recursive: true });
  await rename(dataPath, target);
}

/** Every part's bytes in order, each read from the file holding it (and checked if old). */
async function* concatenatedParts(sources: PlacedPart[], reader: PartReader): AsyncIterable<Uint8Array> {
  for (const source of sources) {
    const file = await open(source.path, "r");
    try {
      yield* reader.checked(source, file);
    } finally {
      await file.close();
    }
  }
}

/** Files under `<dataDir>/blobs`. */
export class LocalBlobStore implements BlobStore {
  readonly kind = "local" as const;
  /**
   * Per upload `data` file: bytes taken since its last background sync started, the sync running, its
   * failure.
   */
  private readonly dataSyncs = new Map<
    string,
    { unsynced: number; running: Promise<void> | null; failure: Error | null }
  >();

  constructor(readonly root: string) {
    mkdirSync(join(root, TMP), { recursive: true });
    mkdirSync(join(root, MULTIPART), { recursive: true });
  }

  private path(key: string): string {
    if (!isValidBlobKey(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
    return join(this.root, key);
  }

  private multipartDir(uploadId: string): string {
    if (!/^[0-9a-f]{24}$/.test(uploadId)) throw new BlobError("not_found", `no multipart upload ${uploadId}`);
    return join(this.root, MULTIPART, uploadId);
  }

  /**
   * Streams `source` into a new temp file (each chunk first handed to `onChunk` with the byte count
   * so far, which may throw), lets `beforeCommit` refuse the whole, makes the file durable (unless
   * `durable: false`) and renames it to `target`. Nothing is left behind on failure.
   */
  private async writeAtomically(
    target: string,
    source: AsyncIterable<Uint8Array> | Uint8Array,
    hooks: {
      onChunk?: (chunk: Uint8Array, size: number) => void;
      beforeCommit?: (size: number) => void;
      tmpDir?: string;
      durable?: boolean;
    } = {},
  ): Promise<number> {
    const tmpDir = hooks.tmpDir ?? join(this.root, TMP);
    const tmp = join(tmpDir, `.tmp-${randomName()}`);
    const file = await open(tmp, "wx");
    const writer = new GatheringWriter(file, 0);
    let size = 0;
    try {
      const chunks: AsyncIterable<Uint8Array> | Uint8Array[] =
        source instanceof Uint8Array ? [source] : source;
      for await (const chunk of chunks) {
        size += chunk.byteLength;
        hooks.onChunk?.(chunk, size);
        await writer.write(chunk);
      }
      await writer.flush();
      if (hooks.durable !== false) await file.datasync();
      await file.close();
      hooks.beforeCommit?.(size);
      await mkdir(dirname(target), { recursive: true });
      await rename(tmp, target);
      return size;
    } catch (error) {
      await writer.settle();
      await file.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      throw error;
    }
  }

  async put(key: string, body: ReadableStream<Uint8Array> | Uint8Array): Promise<{ size: number }> {
    const size = await this.writeAtomically(this.path(key), body);
    return { size };
  }

  async read(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>> {
    const path = this.path(key);
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) throw new BlobError("not_found", `no object ${key}`);
    const file = Bun.file(path);
    return (range ? file.slice(range.start, Math.min(range.end, info.size)) : file).stream();
  }

  async readBytes(key: string, range?: ByteRange): Promise<Uint8Array> {
    const path = this.path(key);
    if (!range) return collect(await this.read(key));
    // One positioned read: headers and moov boxes are read this way, often far into a large file.
    const file = await open(path, "r").catch((error) => {
      if (isMissing(error)) throw new BlobError("not_found", `no object ${key}`);
      throw error;
    });
    try {
      const bytes = Buffer.allocUnsafe(Math.max(0, range.end - range.start));
      let done = 0;
      while (done < bytes.length) {
        const { bytesRead } = await file.read(bytes, done, bytes.length - done, range.start + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return bytes.subarray(0, done);
    } finally {
      await file.close();
    }
  }

  async stat(key: string): Promise<{ size: number } | null> {
    const info = await stat(this.path(key)).catch(() => null);
    return info?.isFile() ? { size: info.size } : null;
  }

  async delete(key: string): Promise<void> {
    await unlink(this.path(key)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    const walk = async function* (dir: string, relative: string): AsyncGenerator<StoredObject> {
      const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        if (entry.name.startsWith(".")) continue; // .multipart, .tmp
        const key = relative ? `${relative}/${entry.name}` : entry.name;
        if (entry.isDirectory()) yield* walk(join(dir, entry.name), key);
        else if (entry.isFile() && key.startsWith(prefix)) {
          const info = await stat(join(dir, entry.name)).catch(() => null);
          if (info) yield { key, size: info.size, modifiedAt: info.mtimeMs };
        }
      }
    };
    yield* walk(this.root, "");
  }

  async createMultipart(key: string, options: { contentType: string; byteSize?: number }): Promise<string> {
    this.path(key); // validates the key
    const uploadId = randomName();
    const dir = this.multipartDir(uploadId);
    await mkdir(dir, { recursive: true });
    // At its final size from the start (a hole until parts land): a part written later never grows
    // the file, so its writes need no journal update and do not wait for a sync's commit.
    await writeFile(join(dir, DATA), "");
    if (options.byteSize) await truncate(join(dir, DATA), options.byteSize);
    await writeFile(join(dir, "upload.json"), JSON.stringify({ key, initiated_at: Date.now() }));
    return uploadId;
  }

  async partTarget(): Promise<null> {
    return null; // parts go through Herald's own signed URL
  }

  /**
   * The first send of a part streams straight into its region of the upload's `data` file (no copy
   * at completion); a part whose region is already claimed goes to a file of its own, so a bad
   * re-send can never damage bytes already taken. Either way the part counts only once its size
   * and CRC64NVME matched.
   */
  async receivePart(
    key: string,
    uploadId: string,
    partNumber: number,
    body: ReadableStream<Uint8Array>,
    expected: PartExpectation,
  ): Promise<StoredPart> {
    const dir = this.multipartDir(uploadId);
    const crc = await createCrc64Nvme();
    const etagHex = crc64nvmeToHex(expected.crc64nvme);
    const check = partChecks(partNumber, expected, crc);
    const slot = {
      claim: join(dir, `slot-${partName(partNumber)}`),
      done: join(dir, `slot-${partName(partNumber)}.${etagHex}.${expected.offset}.${expected.size}`),
    };
    try {
      const data = await this.claimSlot(dir, slot);
      if (data) {
        await this.receiveInPlace(dir, data, slot, body, expected.offset, check);
      } else {
        // Parts are not synced one by one (that halves upload throughput): completion checks the
        // CRC64NVME again of every part written before the machine last started, so a part a power
        // cut (or a kernel crash) damaged is found there. Parts written since are intact in the page cache.
        await this.writeAtomically(join(dir, `part-${partName(partNumber)}.${etagHex}`), body, {
          tmpDir: dir,
          durable: false,
          ...check,
        });
      }
    } catch (error) {
      // The folder went away meanwhile: the upload was completed or aborted.
      if (isMissing(error)) throw new BlobError("not_found", `no multipart upload ${uploadId}`);
      throw error;
    }
    return { partNumber, etag: `"${etagHex}"`, size: expected.size };
  }

  /**
   * Claims a part's region of `data` (the claim file is created exclusively, so one writer per
   * region, also across processes); the open `data` file, or null when the region is taken or
   * already filled, completion has started, or the upload has no `data` file.
   */
  private async claimSlot(dir: string, slot: { claim: string; done: string }): Promise<FileHandle | null> {
    try {
      await (await open(slot.claim, "wx")).close();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return null;
      throw error;
    }
    // A filled region renamed its claim away: it is never written again. Completion seals the
    // folder before it lists the claims: a claim made after that stands aside.
    const taken = async (path: string) =>
      stat(path).then(
        () => true,
        () => false,
      );
    const free = !(await taken(slot.done)) && !(await taken(join(dir, SEALED)));
    const data = free ? await open(join(dir, DATA), "r+").catch(() => null) : null;
    if (!data) await unlink(slot.claim).catch(() => {});
    return data;
  }

  private async receiveInPlace(
    dir: string,
    data: FileHandle,
    slot: { claim: string; done: string },
    body: ReadableStream<Uint8Array>,
    offset: number,
    check: ReturnType<typeof partChecks>,
  ): Promise<void> {
    const writer = new GatheringWriter(data, offset);
    let size = 0;
    try {
      for await (const chunk of body) {
        size += chunk.byteLength;
        check.onChunk(chunk, size);
        await writer.write(chunk);
      }
      await writer.flush();
      check.beforeCommit(size);
    } catch (error) {
      // The region holds nothing anyone relies on: free it for the next send of this part.
      await writer.settle();
      await data.close().catch(() => {});
      await unlink(slot.claim).catch(() => {});
      throw error;
    }
    await data.close();
    await rename(slot.claim, slot.done);
    this.tookPart(join(dir, DATA), size);
  }

  /**
   * Writes `data` back to disk in the background once SYNC_EVERY bytes were taken since the last
   * sync started, while the other parts arrive: completion's own sync then has little left to do,
   * and the disk works during the upload instead of after it (one sync at a time per file).
   */
  private tookPart(dataPath: string, size: number): void {
    let state = this.dataSyncs.get(dataPath);
    if (!state) this.dataSyncs.set(dataPath, (state = { unsynced: 0, running: null, failure: null }));
    state.unsynced += size;
    if (state.running || state.unsynced < SYNC_EVERY) return;
    state.unsynced = 0;
    const current = state;
    current.running = (async () => {
      const file = await open(dataPath, "r").catch(() => null);
      if (!file) return; // completed or aborted meanwhile
      try {
        await file.datasync();
      } catch (error) {
        current.failure = error as Error; // a later sync on another descriptor may not report it again
      } finally {
        await file.close().catch(() => {});
      }
    })().finally(() => {
      current.running = null;
    });
  }

  async listParts(key: string, uploadId: string): Promise<StoredPart[]> {
    const { parts } = await this.storedParts(uploadId);
    return [...parts.values()].map(({ partNumber, etag, size }) => ({ partNumber, etag, size }));
  }

  /**
   * The stored parts by number (in `data` when there, else the newest own file) and the claims of
   * regions not filled (a part being written into `data` now, or one a crash interrupted).
   */
  private async storedParts(
    uploadId: string,
  ): Promise<{ parts: Map<number, PartSource>; openClaims: number[] }> {
    const dir = this.multipartDir(uploadId);
    const names = await readdir(dir).catch(() => {
      throw new BlobError("not_found", `no multipart upload ${uploadId}`);
    });
    const claims = new Set<number>();
    const inPlace = new Map<number, PartSource>();
    const own = new Map<number, PartSource>();
    await Promise.all(
      names.map(async (name) => {
        const claim = SLOT_CLAIM.exec(name);
        if (claim) return void claims.add(Number(claim[1]));
        const done = SLOT_DONE.exec(name);
        const file = done ?? PART_FILE.exec(name);
        if (!file) return;
        const info = await stat(join(dir, name)).catch(() => null);
        if (!info) return;
        const part: PartSource = {
          partNumber: Number(file[1]),
          etag: `"${file[2]}"`,
          size: done ? Number(done[4]) : info.size,
          modifiedAt: info.mtimeMs,
          offset: done ? Number(done[3]) : null,
          path: join(dir, done ? DATA : name),
          record: join(dir, name),
        };
        const into = done ? inPlace : own;
        const earlier = into.get(part.partNumber);
        if (!earlier || earlier.modifiedAt <= part.modifiedAt) into.set(part.partNumber, part); // the newest one wins
      }),
    );
    const parts = new Map([...own, ...inPlace]);
    const openClaims = [...claims].filter((n) => !inPlace.has(n));
    return { parts: new Map([...parts].sort((a, b) => a[0] - b[0])), openClaims };
  }

  async completeMultipart(
    key: string,
    uploadId: string,
    parts: { partNumber: number; etag: string }[],
    _crc64nvme?: string, // every part's was checked as it arrived
  ): Promise<{ verified: boolean }> {
    const dir = this.multipartDir(uploadId);
    const target = this.path(key);
    const dataPath = join(dir, DATA);
    await sealUpload(dir, uploadId);
    const { parts: stored, openClaims } = await this.storedParts(uploadId);
    const { sources, total } = placeParts(parts, stored);
    const hasData = await stat(dataPath).then(
      () => true,
      () => false,
    );
    if (!hasData && sources.some((s) => s.offset !== null))
      return finishInterruptedCompletion(uploadId, dir, target, total);
    await this.settleBackgroundSync(dataPath);
    const reader = await partReader();
    if (hasData && openClaims.length === 0 && sources.every((s) => s.offset === null || s.offset === s.at)) {
      await completeInPlace(dataPath, target, sources, total, reader);
    } else {
      // A region is claimed by a write still running (or cut by a crash): `data` may still change,
      // so the parts are copied into a new file.
      await this.writeAtomically(target, concatenatedParts(sources, reader));
    }
    this.dataSyncs.delete(dataPath);
    await rm(dir, { recursive: true, force: true });
    // Every part was checked against its CRC64NVME on arrival (again above if older than this boot).
    return { verified: true };
  }

  /** Waits for the background sync of `data` (completion's own sync is then short); fails if it did. */
  private async settleBackgroundSync(dataPath: string): Promise<void> {
    const background = this.dataSyncs.get(dataPath);
    await background?.running;
    if (background?.failure)
      throw new Error(`writing the upload to disk failed: ${background.failure.message}`);
  }

  async abortMultipart(_key: string, uploadId: string): Promise<void> {
    const dir = this.multipartDir(uploadId);
    this.dataSyncs.delete(join(dir, DATA));
    await rm(dir, { recursive: true, force: true });
  }

  async *listMultipart(): AsyncIterable<StoredMultipartUpload> {
    const base = join(this.root, MULTIPART);
    for (const uploadId of await readdir(base).catch(() => [] as string[])) {
      const dir = join(base, uploadId);
      const meta = await readFile(join(dir, "upload.json"), "utf8")
        .then((t) => JSON.parse(t) as { key?: string; initiated_at?: number })
        .catch(() => null);
      const info = await stat(dir).catch(() => null);
      if (!info) continue;
      yield { key: meta?.key ?? "", uploadId, initiatedAt: meta?.initiated_at ?? info.mtimeMs };
    }
  }

  async sweepTemporary(before: number): Promise<number> {
    let removed = 0;
    const dirs = [
      join(this.root, TMP),
      ...(await readdir(join(this.root, MULTIPART)).catch(() => [] as string[])).map((d) =>
        join(this.root, MULTIPART, d),
      ),
    ];
    for (const dir of dirs) {
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (!name.startsWith(".tmp-")) continue;
        const info = await stat(join(dir, name)).catch(() => null);
        if (info && info.mtimeMs < before) {
          await unlink(join(dir, name)).catch(() => {});
          removed++;
        }
      }
    }
    return removed;
  }

  async downloadUrl(): Promise<null> {
    return null; // Herald serves the bytes at its own signed URL
  }
}

/** The size and CRC64NVME checks of a part as it streams in (`onChunk`) and once it is whole. */
function partChecks(partNumber: number, expected: PartExpectation, crc: Crc64Nvme) {
  return {
    onChunk: (chunk: Uint8Array, n: number) => {
      if (n > expected.size)
        throw new BlobError("size_mismatch", `part ${partNumber} is longer than ${expected.size} bytes`);
      crc.update(chunk);
    },
    beforeCommit: (n: number) => {
      if (n !== expected.size)
        throw new BlobError(
          "size_mismatch",
          `part ${partNumber} has ${n} bytes; it must have ${expected.size}`,
        );
      if (crc.digest() !== expected.crc64nvme)
        throw new BlobError("checksum_mismatch", `part ${partNumber} does not match its CRC64NVME`);
    },
  };
}
