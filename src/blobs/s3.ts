import { Readable } from "node:stream";
import { Client } from "minio";
import { BlobError, collect, isValidBlobKey, type BlobStore, type ByteRange, type PartTarget, type StoredMultipartUpload, type StoredObject, type StoredPart } from "./store.ts";

/** Connection settings of the bucket (HERALD_S3_*). */
export interface S3Settings {
  endpoint: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  region: string;
}

/** The longest validity S3 accepts for a presigned URL (7 days). */
const MAX_PRESIGN_SECONDS = 7 * 24 * 60 * 60;

/** minio's client with its part listing opened up (it is `protected` in the typings). */
class HeraldMinioClient extends Client {
  uploadedParts(bucket: string, key: string, uploadId: string) {
    return this.listParts(bucket, key, uploadId);
  }
}

function isNotFound(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  return code === "NotFound" || code === "NoSuchKey" || code === "NoSuchUpload";
}

function presignSeconds(times: { now: number; expiresAt: number }): number {
  return Math.max(1, Math.min(MAX_PRESIGN_SECONDS, Math.ceil((times.expiresAt - times.now) / 1000)));
}

/**
 * An S3-compatible bucket (MinIO, AWS S3, …) through the `minio` client. The region is set on the
 * client, so presigning never makes a network call. Parts go from the client straight to the bucket
 * on presigned UploadPart URLs; Herald verifies checksums when the upload completes.
 */
export class S3BlobStore implements BlobStore {
  readonly kind = "s3" as const;
  private readonly client: HeraldMinioClient;
  private bucketReady: Promise<void> | null = null;

  constructor(private readonly settings: S3Settings) {
    const url = new URL(settings.endpoint);
    const useSSL = url.protocol === "https:";
    this.client = new HeraldMinioClient({
      endPoint: url.hostname.replace(/^\[|\]$/g, ""),
      port: url.port ? Number(url.port) : useSSL ? 443 : 80,
      useSSL,
      accessKey: settings.accessKey,
      secretKey: settings.secretKey,
      region: settings.region,
    });
  }

  private get bucket(): string {
    return this.settings.bucket;
  }

  /** Creates the bucket on first use when it does not exist yet. */
  private ready(): Promise<void> {
    this.bucketReady ??= (async () => {
      if (!(await this.client.bucketExists(this.bucket))) await this.client.makeBucket(this.bucket, this.settings.region);
    })().catch((error) => {
      this.bucketReady = null;
      throw error;
    });
    return this.bucketReady;
  }

  private key(key: string): string {
    if (!isValidBlobKey(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
    return key;
  }

  async put(key: string, body: ReadableStream<Uint8Array> | Uint8Array): Promise<{ size: number }> {
    await this.ready();
    if (body instanceof Uint8Array) {
      await this.client.putObject(this.bucket, this.key(key), Buffer.from(body.buffer, body.byteOffset, body.byteLength), body.byteLength);
      return { size: body.byteLength };
    }
    let size = 0;
    const counted = Readable.fromWeb(body as never).on("data", (chunk: Buffer) => { size += chunk.length; });
    await this.client.putObject(this.bucket, this.key(key), counted);
    return { size };
  }

  async read(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>> {
    await this.ready();
    try {
      const stream = range
        ? await this.client.getPartialObject(this.bucket, this.key(key), range.start, Math.max(0, range.end - range.start))
        : await this.client.getObject(this.bucket, this.key(key));
      return Readable.toWeb(stream) as ReadableStream<Uint8Array>;
    } catch (error) {
      if (isNotFound(error)) throw new BlobError("not_found", `no object ${key}`);
      throw error;
    }
  }

  async readBytes(key: string, range?: ByteRange): Promise<Uint8Array> {
    if (range && range.end <= range.start) return new Uint8Array(0);
    return collect(await this.read(key, range));
  }

  async stat(key: string): Promise<{ size: number } | null> {
    await this.ready();
    try {
      return { size: (await this.client.statObject(this.bucket, this.key(key))).size };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await this.ready();
    await this.client.removeObject(this.bucket, this.key(key));
  }

  async *list(prefix: string): AsyncIterable<StoredObject> {
    await this.ready();
    for await (const item of this.client.listObjectsV2(this.bucket, prefix, true)) {
      if (item.name) yield { key: item.name, size: item.size, modifiedAt: item.lastModified ? new Date(item.lastModified).getTime() : 0 };
    }
  }

  async createMultipart(key: string, options: { contentType: string }): Promise<string> {
    await this.ready();
    return this.client.initiateNewMultipartUpload(this.bucket, this.key(key), { "content-type": options.contentType });
  }

  async partTarget(key: string, uploadId: string, partNumber: number, times: { now: number; expiresAt: number }): Promise<PartTarget> {
    const url = await this.client.presignedUrl("PUT", this.bucket, this.key(key), presignSeconds(times), { partNumber: String(partNumber), uploadId }, new Date(times.now));
    return { url, headers: {} };
  }

  async listParts(key: string, uploadId: string): Promise<StoredPart[]> {
    await this.ready();
    try {
      const parts = await this.client.uploadedParts(this.bucket, this.key(key), uploadId);
      return parts.map((p) => ({ partNumber: p.part, etag: `"${p.etag.replace(/^"|"$/g, "")}"`, size: p.size })).sort((a, b) => a.partNumber - b.partNumber);
    } catch (error) {
      if (isNotFound(error)) throw new BlobError("not_found", `no multipart upload ${uploadId}`);
      throw error;
    }
  }

  async completeMultipart(key: string, uploadId: string, parts: { partNumber: number; etag: string }[]): Promise<void> {
    await this.ready();
    try {
      await this.client.completeMultipartUpload(this.bucket, this.key(key), uploadId, parts.map((p) => ({ part: p.partNumber, etag: p.etag })));
    } catch (error) {
      if (isNotFound(error) || (error as { code?: string })?.code === "InvalidPart") throw new BlobError("not_found", `a part of upload ${uploadId} is not stored as listed`);
      throw error;
    }
  }

  async abortMultipart(key: string, uploadId: string): Promise<void> {
    await this.ready();
    try {
      await this.client.abortMultipartUpload(this.bucket, this.key(key), uploadId);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  async *listMultipart(): AsyncIterable<StoredMultipartUpload> {
    await this.ready();
    for await (const item of this.client.listIncompleteUploads(this.bucket, "", true)) {
      const initiated = (item as { initiated?: Date }).initiated;
      if (item.uploadId) yield { key: item.key, uploadId: item.uploadId, initiatedAt: initiated ? new Date(initiated).getTime() : null };
    }
  }

  async downloadUrl(key: string, options: { now: number; expiresAt: number; fileName: string; contentType: string }): Promise<string> {
    const disposition = `attachment; filename="${options.fileName.replace(/[^\x20-\x7e]|["\\]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(options.fileName)}`;
    return this.client.presignedGetObject(this.bucket, this.key(key), presignSeconds(options), {
      "response-content-type": options.contentType,
      "response-content-disposition": disposition,
    }, new Date(options.now));
  }
}
