import { Readable } from "node:stream";
import { Client } from "minio";
// minio's own SigV4 presigner (a public entry of the package): it signs every header it is given.
import { presignSignatureV4 } from "minio/dist/esm/signing.mjs";
import {
  BlobError,
  collect,
  isValidBlobKey,
  type BlobStore,
  type ByteRange,
  type CompletingPart,
  type PartTarget,
  type StoredMultipartUpload,
  type StoredObject,
  type StoredPart,
} from "./store.ts";

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

/** The header that carries a part's CRC64NVME (base64 of the 8 big-endian bytes) to the bucket. */
export const CHECKSUM_HEADER = "x-amz-checksum-crc64nvme";

/** A request to presign: the query is already encoded; every header given is signed. */
interface PresignRequest {
  method: string;
  bucket: string;
  key: string;
  query: string;
  headers: Record<string, string>;
}

/** minio's client with its part listing and request builder opened up (`protected` in the typings). */
class HeraldMinioClient extends Client {
  uploadedParts(bucket: string, key: string, uploadId: string) {
    return this.listParts(bucket, key, uploadId);
  }

  /**
   * A presigned URL whose SigV4 signature also covers `headers` (minio's presignedUrl signs only
   * Host), built by minio's own request builder, so host and path style match its other calls.
   */
  presign(request: PresignRequest, region: string, seconds: number, date: Date): string {
    const { method, bucket, key, query, headers } = request;
    const options = this.getRequestOptions({
      method,
      region,
      bucketName: bucket,
      objectName: key,
      query,
      headers,
    });
    const { accessKey, secretKey, sessionToken } = this;
    return presignSignatureV4(options, accessKey, secretKey, sessionToken, region, date, seconds);
  }
}

/** RFC 3986 encoding of a query value, as SigV4 wants it. */
function queryEscape(value: string): string {
  const hex = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`;
  return encodeURIComponent(value).replace(/[!'()*]/g, hex);
}

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The text of the first `<name>` element of an S3 XML answer, or null. */
function xmlField(xml: string, name: string): string | null {
  return new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? null;
}

function isNotFound(error: unknown): boolean {
  const code = (error as { code?: string })?.code;
  return code === "NotFound" || code === "NoSuchKey" || code === "NoSuchUpload";
}

/** A failed CompleteMultipartUpload as a BlobError when it is one the service maps, else as it came. */
function completionError(uploadId: string, code: string | null | undefined, error: unknown): unknown {
  if (isNotFound({ code }) || code === "InvalidPart") {
    return new BlobError("not_found", `a part of upload ${uploadId} is not stored as listed`);
  }
  if (code === "BadDigest") {
    return new BlobError("checksum_mismatch", `the bucket found upload ${uploadId} unlike its CRC64NVME`);
  }
  return error;
}

function presignSeconds(times: { now: number; expiresAt: number }): number {
  return Math.max(1, Math.min(MAX_PRESIGN_SECONDS, Math.ceil((times.expiresAt - times.now) / 1000)));
}

/**
 * An S3-compatible bucket (MinIO, AWS S3, …) through the `minio` client. The region is set on the
 * client, so presigning never makes a network call. Parts go from the client straight to the bucket
 * on presigned UploadPart URLs that sign the part's CRC64NVME header, so the bucket checks each part
 * as it arrives (a multipart upload is created with the CRC64NVME algorithm, as S3 requires for
 * part checksums). A store that ignores checksums is caught at completion (`verified` false).
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
      if (!(await this.client.bucketExists(this.bucket)))
        await this.client.makeBucket(this.bucket, this.settings.region);
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
      await this.client.putObject(
        this.bucket,
        this.key(key),
        Buffer.from(body.buffer, body.byteOffset, body.byteLength),
        body.byteLength,
      );
      return { size: body.byteLength };
    }
    let size = 0;
    const counted = Readable.fromWeb(body as never).on("data", (chunk: Buffer) => {
      size += chunk.length;
    });
    await this.client.putObject(this.bucket, this.key(key), counted);
    return { size };
  }

  async read(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>> {
    await this.ready();
    try {
      const stream = range
        ? await this.client.getPartialObject(
            this.bucket,
            this.key(key),
            range.start,
            Math.max(0, range.end - range.start),
          )
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
      if (item.name)
        yield {
          key: item.name,
          size: item.size,
          modifiedAt: item.lastModified ? new Date(item.lastModified).getTime() : 0,
        };
    }
  }

  async createMultipart(key: string, options: { contentType: string }): Promise<string> {
    await this.ready();
    // S3 refuses a part checksum on an upload created without an algorithm ("Checksum Type mismatch").
    return this.client.initiateNewMultipartUpload(this.bucket, this.key(key), {
      "content-type": options.contentType,
      "x-amz-checksum-algorithm": "CRC64NVME",
      "x-amz-checksum-type": "FULL_OBJECT",
    });
  }

  async partTarget(
    key: string,
    uploadId: string,
    partNumber: number,
    times: { now: number; expiresAt: number },
    crc64nvme: string,
  ): Promise<PartTarget> {
    const headers = { [CHECKSUM_HEADER]: crc64nvme };
    const query = `partNumber=${partNumber}&uploadId=${queryEscape(uploadId)}`;
    const request = { method: "PUT", bucket: this.bucket, key: this.key(key), query, headers };
    const seconds = presignSeconds(times);
    const url = this.client.presign(request, this.settings.region, seconds, new Date(times.now));
    return { url, headers };
  }

  async listParts(key: string, uploadId: string): Promise<StoredPart[]> {
    await this.ready();
    try {
      const parts = await this.client.uploadedParts(this.bucket, this.key(key), uploadId);
      return parts
        .map((p) => ({ partNumber: p.part, etag: `"${p.etag.replace(/^"|"$/g, "")}"`, size: p.size }))
        .sort((a, b) => a.partNumber - b.partNumber);
    } catch (error) {
      if (isNotFound(error)) throw new BlobError("not_found", `no multipart upload ${uploadId}`);
      throw error;
    }
  }

  async completeMultipart(
    key: string,
    uploadId: string,
    parts: CompletingPart[],
    crc64nvme: string,
  ): Promise<{ verified: boolean }> {
    await this.ready();
    // minio's completeMultipartUpload sends ETags only; MinIO wants each part's checksum too.
    const body = parts
      .map(
        (p) =>
          `<Part><PartNumber>${p.partNumber}</PartNumber>` +
          `<ETag>${escapeXml(p.etag)}</ETag>` +
          `<ChecksumCRC64NVME>${p.crc64nvme}</ChecksumCRC64NVME></Part>`,
      )
      .join("");
    const request = {
      method: "POST",
      bucketName: this.bucket,
      objectName: this.key(key),
      query: `uploadId=${queryEscape(uploadId)}`,
      headers: { [CHECKSUM_HEADER]: crc64nvme, "x-amz-checksum-type": "FULL_OBJECT" },
    };
    const xmlns = "http://s3.amazonaws.com/doc/2006-03-01/";
    const xml = `<CompleteMultipartUpload xmlns="${xmlns}">${body}</CompleteMultipartUpload>`;
    let answer: string;
    try {
      const response = await this.client.makeRequestAsync(request, xml);
      answer = await new Response(Readable.toWeb(response) as ReadableStream<Uint8Array>).text();
    } catch (error) {
      throw completionError(uploadId, (error as { code?: string })?.code, error);
    }
    // CompleteMultipartUpload can answer 200 with an error document.
    if (/<Error>/.test(answer)) throw completionError(uploadId, xmlField(answer, "Code"), new Error(answer));
    // The bucket vouches for the bytes when it reports the whole file's CRC64NVME as declared: it
    // checked every part against its signed checksum. A store that ignores checksums reports none.
    return { verified: xmlField(answer, "ChecksumCRC64NVME") === crc64nvme };
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
      if (item.uploadId)
        yield {
          key: item.key,
          uploadId: item.uploadId,
          initiatedAt: initiated ? new Date(initiated).getTime() : null,
        };
    }
  }

  async downloadUrl(
    key: string,
    options: { now: number; expiresAt: number; fileName: string; contentType: string },
  ): Promise<string> {
    const disposition = `attachment; filename="${options.fileName.replace(/[^\x20-\x7e]|["\\]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(options.fileName)}`;
    return this.client.presignedGetObject(
      this.bucket,
      this.key(key),
      presignSeconds(options),
      {
        "response-content-type": options.contentType,
        "response-content-disposition": disposition,
      },
      new Date(options.now),
    );
  }
}
