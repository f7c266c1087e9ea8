// Writing one blob of an import into the target's store, chunk by chunk, with bounded memory.
import type { BlobStore, CompletingPart } from "../../blobs/store.ts";
import { combineCrc64Nvme, crc64nvmeOf, crc64nvmeToBase64 } from "../../lib/crc64nvme.ts";
import { MIN_PART_SIZE, partSizeFor } from "../assets/parts.ts";
import { TransferError } from "./format.ts";

/** Takes a blob's bytes in order; `close` once they are all there. */
export interface BlobSink {
  readonly key: string;
  write(bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/**
 * A sink for a blob of `size` bytes. Local disk takes a stream. On S3 a small blob is one PUT and a
 * larger one a multipart upload, a part in memory at a time (S3BlobStore.put of a stream lets minio
 * pick ~550 MB parts, buffered whole).
 */
export function openBlobSink(store: BlobStore, key: string, size: number): BlobSink {
  if (store.kind === "local") return new StreamSink(store, key);
  if (size <= MIN_PART_SIZE) return new BufferSink(store, key, size);
  return new MultipartSink(store, key, size);
}

/** Chunks go into a stream that the store's `put` reads as they come. */
class StreamSink implements BlobSink {
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly stored: Promise<unknown>;
  /** Rejects when the put fails, else never settles: a write waiting on a failed store ends. */
  private readonly failed: Promise<never>;

  constructor(
    store: BlobStore,
    readonly key: string,
  ) {
    const pipe = new TransformStream<Uint8Array, Uint8Array>();
    this.writer = pipe.writable.getWriter();
    this.stored = store.put(key, pipe.readable);
    this.failed = this.stored.then(() => new Promise<never>(() => {}));
  }

  async write(bytes: Uint8Array): Promise<void> {
    await this.settled(this.writer.write(bytes));
  }

  async close(): Promise<void> {
    await this.settled(this.writer.close());
    await this.stored;
  }

  /** Waits for a stream call or the store's failure; the losing stream call's error is dropped. */
  private async settled(call: Promise<void>): Promise<void> {
    call.catch(() => {});
    await Promise.race([call, this.failed]);
  }
}

/** The whole blob in memory, then one PUT (small blobs only). */
class BufferSink implements BlobSink {
  private readonly bytes: Uint8Array;
  private used = 0;

  constructor(
    private readonly store: BlobStore,
    readonly key: string,
    size: number,
  ) {
    this.bytes = new Uint8Array(size);
  }

  async write(bytes: Uint8Array): Promise<void> {
    this.bytes.set(bytes, this.used);
    this.used += bytes.byteLength;
  }

  async close(): Promise<void> {
    await this.store.put(this.key, this.bytes.subarray(0, this.used));
  }
}

/** How long a part's presigned URL lasts (it is used at once). */
const PART_URL_MS = 15 * 60 * 1000;

/**
 * A multipart upload through the store's own interface, as an API client uploads: parts of the
 * part-size rule's size, each sent to its presigned URL with its CRC64NVME, then completed.
 */
class MultipartSink implements BlobSink {
  private readonly part: Uint8Array;
  private used = 0;
  private readonly parts: CompletingPart[] = [];
  private whole = 0n;
  private uploadId: string | null = null;

  constructor(
    private readonly store: BlobStore,
    readonly key: string,
    size: number,
  ) {
    this.part = new Uint8Array(partSizeFor(size));
  }

  async write(bytes: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < bytes.byteLength) {
      const take = Math.min(bytes.byteLength - offset, this.part.byteLength - this.used);
      this.part.set(bytes.subarray(offset, offset + take), this.used);
      this.used += take;
      offset += take;
      if (this.used === this.part.byteLength) await this.guarded(() => this.send());
    }
  }

  async close(): Promise<void> {
    await this.guarded(async () => {
      if (this.used > 0 || this.parts.length === 0) await this.send();
      await this.store.completeMultipart(this.key, this.uploadId!, this.parts, crc64nvmeToBase64(this.whole));
    });
  }

  /** Aborts the upload when a step fails (the store would keep its parts otherwise). */
  private async guarded(step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      if (this.uploadId) await this.store.abortMultipart(this.key, this.uploadId).catch(() => {});
      throw error;
    }
  }

  private async send(): Promise<void> {
    this.uploadId ??= await this.store.createMultipart(this.key, { contentType: "application/octet-stream" });
    const bytes = this.part.subarray(0, this.used);
    const crc = await crc64nvmeOf(bytes);
    const checksum = crc64nvmeToBase64(crc);
    const number = this.parts.length + 1;
    const now = Date.now();
    const times = { now, expiresAt: now + PART_URL_MS };
    const target = await this.store.partTarget(this.key, this.uploadId, number, times, checksum);
    if (!target) throw new Error(`the ${this.store.kind} store takes no parts at URLs`);
    const response = await fetch(target.url, { method: "PUT", headers: target.headers, body: bytes });
    await response.arrayBuffer();
    if (!response.ok)
      throw new TransferError(`the store refused part ${number} of ${this.key} (HTTP ${response.status})`);
    this.parts.push({ partNumber: number, etag: response.headers.get("etag") ?? "", crc64nvme: checksum });
    this.whole = number === 1 ? crc : combineCrc64Nvme(this.whole, crc, bytes.byteLength);
    this.used = 0;
  }
}
