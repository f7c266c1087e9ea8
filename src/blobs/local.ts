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
  unlink,
  writeFile,
  type FileHandle,
} from "node:fs/promises";
import { uptime } from "node:os";
import { dirname, join } from "node:path";
import { createCrc64Nvme, crc64nvmeToHex } from "../lib/crc64nvme.ts";
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
//   <key>                          objects (`ws_…/ast_…`), written to .tmp/ first and renamed into place
//   .multipart/<upload id>/        one folder per multipart upload: upload.json and part-<n>.<crc hex>
//   .tmp/                          files being written; never read
// Everything is on one file system, so a rename is atomic.

const MULTIPART = ".multipart";
const TMP = ".tmp";
/** Bytes gathered before one write call (request bodies arrive in small chunks). */
const WRITE_BUFFER = 1024 * 1024;
const PART_FILE = /^part-(\d{5})\.([0-9a-f]{16})$/;

function randomName(): string {
  return randomBytes(12).toString("hex");
}

/**
 * Writes chunks to a file handle in WRITE_BUFFER batches, double-buffered: one batch is written
 * while the next fills, so hashing and receiving overlap with the disk (at most one write in flight).
 */
class BatchedWriter {
  private readonly buffers = [Buffer.allocUnsafe(WRITE_BUFFER), Buffer.allocUnsafe(WRITE_BUFFER)];
  private current = 0;
  private used = 0;
  private inFlight: Promise<void> | null = null;
  constructor(private readonly file: FileHandle) {}

  /** Takes a copy of `chunk` (the caller may reuse its buffer at once). */
  async write(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.byteLength) {
      const take = Math.min(chunk.byteLength - offset, WRITE_BUFFER - this.used);
      this.buffers[this.current]!.set(chunk.subarray(offset, offset + take), this.used);
      this.used += take;
      offset += take;
      if (this.used === WRITE_BUFFER) await this.startWrite();
    }
  }

  /** Waits for a write still running, ignoring its outcome (before closing the file after a failure). */
  async settle(): Promise<void> {
    await this.inFlight?.catch(() => {});
  }

  /** Writes whatever is buffered and waits for the disk. */
  async flush(): Promise<void> {
    if (this.used > 0) await this.startWrite();
    await this.inFlight;
    this.inFlight = null;
  }

  private async startWrite(): Promise<void> {
    await this.inFlight;
    const buffer = this.buffers[this.current]!;
    const length = this.used;
    this.inFlight = (async () => {
      let written = 0;
      while (written < length)
        written += (await this.file.write(buffer, written, length - written)).bytesWritten;
    })();
    this.current ^= 1;
    this.used = 0;
  }
}

/** Files under `<dataDir>/blobs`. */
export class LocalBlobStore implements BlobStore {
  readonly kind = "local" as const;

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
    const writer = new BatchedWriter(file);
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
    return collect(await this.read(key, range));
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

  async createMultipart(key: string): Promise<string> {
    this.path(key); // validates the key
    const uploadId = randomName();
    const dir = this.multipartDir(uploadId);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "upload.json"), JSON.stringify({ key, initiated_at: Date.now() }));
    return uploadId;
  }

  async partTarget(): Promise<null> {
    return null; // parts go through Herald's own signed URL
  }

  async receivePart(
    key: string,
    uploadId: string,
    partNumber: number,
    body: ReadableStream<Uint8Array>,
    expected: PartExpectation,
  ): Promise<StoredPart> {
    const dir = this.multipartDir(uploadId);
    if (!(await stat(dir).catch(() => null)))
      throw new BlobError("not_found", `no multipart upload ${uploadId}`);
    const crc = await createCrc64Nvme();
    const etagHex = crc64nvmeToHex(expected.crc64nvme);
    const target = join(dir, `part-${String(partNumber).padStart(5, "0")}.${etagHex}`);
    // Parts are not synced one by one (that halves upload throughput): completion checks the
    // CRC64NVME again of every part written before the machine last started, so a part a power cut
    // (or a kernel crash) damaged is found there. Parts written since are intact in the page cache.
    const size = await this.writeAtomically(target, body, {
      tmpDir: dir,
      durable: false,
      onChunk: (chunk, n) => {
        if (n > expected.size)
          throw new BlobError("size_mismatch", `part ${partNumber} is longer than ${expected.size} bytes`);
        crc.update(chunk);
      },
      beforeCommit: (n) => {
        if (n !== expected.size)
          throw new BlobError(
            "size_mismatch",
            `part ${partNumber} has ${n} bytes; it must have ${expected.size}`,
          );
        if (crc.digest() !== expected.crc64nvme)
          throw new BlobError("checksum_mismatch", `part ${partNumber} does not match its CRC64NVME`);
      },
    });
    return { partNumber, etag: `"${etagHex}"`, size };
  }

  async listParts(key: string, uploadId: string): Promise<StoredPart[]> {
    return (await this.partFiles(key, uploadId)).map(({ partNumber, etag, size }) => ({
      partNumber,
      etag,
      size,
    }));
  }

  /** The stored parts with their file times (the newest file of a part number wins). */
  private async partFiles(_key: string, uploadId: string): Promise<(StoredPart & { modifiedAt: number })[]> {
    const dir = this.multipartDir(uploadId);
    const names = await readdir(dir).catch(() => {
      throw new BlobError("not_found", `no multipart upload ${uploadId}`);
    });
    const parts = new Map<number, StoredPart & { modifiedAt: number }>();
    for (const name of names) {
      const match = PART_FILE.exec(name);
      if (!match) continue;
      const info = await stat(join(dir, name)).catch(() => null);
      if (!info) continue;
      const part = {
        partNumber: Number(match[1]),
        etag: `"${match[2]}"`,
        size: info.size,
        modifiedAt: info.mtimeMs,
      };
      const earlier = parts.get(part.partNumber);
      if (!earlier || earlier.modifiedAt <= part.modifiedAt) parts.set(part.partNumber, part); // the newest complete one wins
    }
    return [...parts.values()].sort((a, b) => a.partNumber - b.partNumber);
  }

  async completeMultipart(
    key: string,
    uploadId: string,
    parts: { partNumber: number; etag: string }[],
  ): Promise<{ verified: true }> {
    const dir = this.multipartDir(uploadId);
    const stored = new Map((await this.partFiles(key, uploadId)).map((p) => [p.partNumber, p]));
    const files = parts.map((p) => {
      const found = stored.get(p.partNumber);
      if (!found || found.etag !== p.etag)
        throw new BlobError("not_found", `part ${p.partNumber} with ETag ${p.etag} is not stored`);
      const hex = found.etag.slice(1, -1);
      return {
        partNumber: p.partNumber,
        path: join(dir, `part-${String(p.partNumber).padStart(5, "0")}.${hex}`),
        crc64nvme: BigInt(`0x${hex}`),
        modifiedAt: found.modifiedAt,
      };
    });
    const crc = await createCrc64Nvme();
    // A part written before this boot (with a minute's margin) is read back against its CRC64NVME.
    const bootedAt = Date.now() - uptime() * 1000 + 60_000;
    const partsInOrder = async function* (): AsyncGenerator<Uint8Array> {
      // Two read buffers: the next read runs while the current chunk is hashed and copied.
      const buffers = [Buffer.allocUnsafe(4 * WRITE_BUFFER), Buffer.allocUnsafe(4 * WRITE_BUFFER)];
      for (const part of files) {
        const file = await open(part.path, "r");
        const verify = part.modifiedAt < bootedAt;
        crc.reset();
        let which = 0;
        let reading = file.read(buffers[which]!, 0, buffers[which]!.length, null);
        try {
          for (;;) {
            const { bytesRead, buffer } = await reading;
            if (bytesRead === 0) break;
            which ^= 1;
            reading = file.read(buffers[which]!, 0, buffers[which]!.length, null);
            const chunk = buffer.subarray(0, bytesRead);
            if (verify) crc.update(chunk);
            yield chunk;
          }
        } finally {
          await reading.catch(() => {}); // a read still running when the consumer stopped
          await file.close();
        }
        if (verify && crc.digest() !== part.crc64nvme) {
          await unlink(part.path).catch(() => {});
          throw new BlobError(
            "checksum_mismatch",
            `part ${part.partNumber} was damaged on disk since it was received; send it again`,
          );
        }
      }
    };
    await this.writeAtomically(this.path(key), partsInOrder());
    await rm(dir, { recursive: true, force: true });
    // Every part was checked against its CRC64NVME on arrival (again above if older than this boot).
    return { verified: true };
  }

  async abortMultipart(_key: string, uploadId: string): Promise<void> {
    await rm(this.multipartDir(uploadId), { recursive: true, force: true });
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
