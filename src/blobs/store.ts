// The one storage interface Herald's media goes through (PocketBase's filesystem driver): local
// disk under the data directory, or an S3-compatible bucket. Keys look like `ws_…/ast_…`.

/** A byte range `[start, end)` of an object. */
export interface ByteRange {
  start: number;
  end: number;
}

/** One stored part of a multipart upload, as the store reports it. */
export interface StoredPart {
  partNumber: number;
  etag: string;
  size: number;
}

/** A multipart upload the store holds (for the cleanup of uploads Herald no longer knows). */
export interface StoredMultipartUpload {
  key: string;
  uploadId: string;
  /** When the store started it, epoch ms (null when the store does not say). */
  initiatedAt: number | null;
}

/** One object of a listing. */
export interface StoredObject {
  key: string;
  size: number;
  modifiedAt: number;
}

/** Where a client sends a part itself (a presigned URL on the bucket) and the headers it must send. */
export interface PartTarget {
  url: string;
  headers: Record<string, string>;
}

/** A part as a completion lists it: its number, its ETag and its declared CRC64NVME (base64). */
export interface CompletingPart {
  partNumber: number;
  etag: string;
  crc64nvme: string;
}

/** Why a store refused: the service maps these to problems. */
export type BlobErrorCode = "not_found" | "checksum_mismatch" | "size_mismatch";

/** A typed store failure (anything else a store throws is an I/O error). */
export class BlobError extends Error {
  constructor(
    readonly code: BlobErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What a part upload through Herald must be (its exact size and CRC64NVME), and where it starts in the
 * object.
 */
export interface PartExpectation {
  size: number;
  crc64nvme: bigint;
  offset: number;
}

/**
 * Local disk or S3 behind one small interface. Every write is atomic: a reader sees the old object
 * or the new one, never a half-written file.
 */
export interface BlobStore {
  readonly kind: "local" | "s3";
  /** Stores a whole object from a stream (its chunks are the store's once read) or bytes. */
  put(key: string, body: ReadableStream<Uint8Array> | Uint8Array): Promise<{ size: number }>;
  /** The object's bytes (or one range of them) as a stream; BlobError `not_found` when absent. */
  read(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>>;
  /** The object's bytes (or one range) in memory: for small objects and headers only. */
  readBytes(key: string, range?: ByteRange): Promise<Uint8Array>;
  /** Size of the object, or null when it does not exist. */
  stat(key: string): Promise<{ size: number } | null>;
  /** Removes an object; removing a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** Every object whose key starts with `prefix`. */
  list(prefix: string): AsyncIterable<StoredObject>;

  /** Starts a multipart upload of `key` (of `byteSize` bytes when known); returns the store's upload id. */
  createMultipart(key: string, options: { contentType: string; byteSize?: number }): Promise<string>;
  /**
   * Where a client sends part `partNumber` directly (S3: a presigned UploadPart URL valid until
   * `expiresAt`, whose signature covers the part's declared CRC64NVME `crc64nvme`, so the bucket
   * refuses other bytes), or null when parts go through Herald (`receivePart`).
   */
  partTarget(
    key: string,
    uploadId: string,
    partNumber: number,
    times: { now: number; expiresAt: number },
    crc64nvme: string,
  ): Promise<PartTarget | null>;
  /**
   * Stores a part sent through Herald (local disk), streaming it and checking its size and
   * CRC64NVME before it becomes visible; a re-sent part replaces the earlier one atomically (a
   * refused one leaves it as it was). Absent on stores that take parts directly.
   */
  receivePart?(
    key: string,
    uploadId: string,
    partNumber: number,
    body: ReadableStream<Uint8Array>,
    expected: PartExpectation,
  ): Promise<StoredPart>;
  /** The parts stored so far, by part number. */
  listParts(key: string, uploadId: string): Promise<StoredPart[]>;
  /**
   * Assembles the parts (in the order given, each with the ETag it must have) into the object at
   * `key`, atomically; `crc64nvme` is the whole file's. The multipart upload is gone afterwards.
   * `verified` says the store vouches that the bytes match the declared checksums (it checked
   * every part); when false, the caller reads the object back to check it.
   */
  completeMultipart(
    key: string,
    uploadId: string,
    parts: CompletingPart[],
    crc64nvme: string,
  ): Promise<{ verified: boolean }>;
  /** Drops a multipart upload and its parts; dropping a missing one is not an error. */
  abortMultipart(key: string, uploadId: string): Promise<void>;
  /** Every multipart upload the store holds. */
  listMultipart(): AsyncIterable<StoredMultipartUpload>;
  /**
   * Removes files a crashed write left behind before `before` (epoch ms); returns how many. Stores without
   * any omit it.
   */
  sweepTemporary?(before: number): Promise<number>;
  /**
   * A URL the client downloads the object from directly (S3: presigned GET until `expiresAt`), or
   * null when Herald serves the bytes itself.
   */
  downloadUrl(
    key: string,
    options: { now: number; expiresAt: number; fileName: string; contentType: string },
  ): Promise<string | null>;
}

/** A key of the store: path segments of safe characters, none empty or starting with a dot. */
export function isValidBlobKey(key: string): boolean {
  return (
    key.length > 0 &&
    key.length <= 512 &&
    key.split("/").every((s) => /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(s))
  );
}

/** Reads a whole stream into memory (callers bound the size). */
export async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
