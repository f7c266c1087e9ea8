// An S3-compatible bucket in this process: s3rver 3.7.1 (object and multipart calls; it checks the
// access key and expiry but not V4 signatures or checksums) behind a small front that adds what
// real S3 and MinIO do and s3rver lacks:
// - ListParts, ListMultipartUploads and AbortMultipartUpload, answered from s3rver's own files;
// - SigV4 verification of presigned URLs (403 SignatureDoesNotMatch, as S3 answers), so a header
//   listed in X-Amz-SignedHeaders, such as x-amz-checksum-crc64nvme, must be sent as signed;
// - CRC64NVME checksums (unless `checksums: false`, a store that ignores them): an upload created
//   with x-amz-checksum-algorithm CRC64NVME takes parts whose x-amz-checksum-crc64nvme matches their
//   bytes (else 400 BadDigest, nothing stored), and CompleteMultipartUpload wants every part's
//   checksum (as MinIO does) and reports the whole object's CRC64NVME (as S3 and MinIO do).
// Everything else goes to s3rver unchanged.
import { createHash, createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";
import {
  combineCrc64Nvme,
  crc64nvmeFromBase64,
  crc64nvmeOf,
  crc64nvmeToBase64,
} from "../../src/lib/crc64nvme.ts";

/** The running fake: its endpoint, and HERALD_* settings that point Herald at it. */
export interface FakeS3 {
  endpoint: string;
  bucket: string;
  env: Record<string, string>;
  /** Requests the front saw (method and path with query), for assertions. */
  requests: string[];
  stop(): Promise<void>;
}

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
const xml = (body: string, status = 200) =>
  new Response(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`, {
    status,
    headers: { "content-type": "application/xml" },
  });
/** An S3 error document. */
function s3Error(status: number, code: string, message: string): Response {
  const body = `<Code>${code}</Code><Message>${escapeXml(message)}</Message><RequestId>FAKE</RequestId>`;
  return xml(`<Error>${body}</Error>`, status);
}

const SECRET_KEY = "S3RVER";
const CHECKSUM = "x-amz-checksum-crc64nvme";
const SIGNATURE_MISMATCH =
  "The request signature we calculated does not match the signature you provided. " +
  "Check your key and signing method.";
const BAD_DIGEST = "The CRC64NVME you specified did not match the calculated checksum.";
const INVALID_PART =
  "One or more of the specified parts could not be found.  The part may not have been " +
  "uploaded, or the specified entity tag may not match the part's entity tag.";
const TYPE_MISMATCH =
  "Checksum Type mismatch occurred, expected checksum Type: null, " + "actual checksum Type: crc64nvme";

const rfc3986 = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();

/**
 * Checks a presigned (query) SigV4 signature as S3 does, written from the AWS specification apart
 * from minio's signer: the canonical request over method, path, sorted query, the signed headers
 * as sent, UNSIGNED-PAYLOAD. Null when it holds, else S3's 403.
 */
function checkPresigned(request: Request, url: URL): Response | null {
  const q = url.searchParams;
  const [, day = "", region = "", service = "", terminal = ""] = (q.get("X-Amz-Credential") ?? "").split("/");
  const signedHeaders = q.get("X-Amz-SignedHeaders") ?? "";
  // Encoded names and values, sorted by name, then by value.
  const pairs = [...q.entries()]
    .filter(([name]) => name !== "X-Amz-Signature")
    .map(([name, value]) => [rfc3986(name), rfc3986(value)]);
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  pairs.sort(([n1, v1], [n2, v2]) => order(n1!, n2!) || order(v1!, v2!));
  const query = pairs.map(([name, value]) => `${name}=${value}`).join("&");
  // A signed header the request lacks counts as empty, so the signatures differ, as on S3.
  const headers = signedHeaders
    .split(";")
    .map((name) => `${name}:${(request.headers.get(name) ?? "").trim().replace(/\s+/g, " ")}\n`)
    .join("");
  const canonical = [request.method, url.pathname, query, headers, signedHeaders, "UNSIGNED-PAYLOAD"].join(
    "\n",
  );
  const scope = [day, region, service, terminal];
  const digest = createHash("sha256").update(canonical).digest("hex");
  const toSign = ["AWS4-HMAC-SHA256", q.get("X-Amz-Date") ?? "", scope.join("/"), digest].join("\n");
  const key = scope.reduce<string | Buffer>((k, part) => hmac(k, part), `AWS4${SECRET_KEY}`);
  if (hmac(key, toSign).toString("hex") === q.get("X-Amz-Signature")) return null;
  return s3Error(403, "SignatureDoesNotMatch", SIGNATURE_MISMATCH);
}

/** Starts s3rver and its front on 127.0.0.1 with an empty bucket; `checksums: false` ignores checksums. */
export async function startFakeS3(options: { bucket?: string; checksums?: boolean } = {}): Promise<FakeS3> {
  const bucket = options.bucket ?? "herald-media";
  const checksums = options.checksums ?? true;
  const directory = mkdtempSync(join(tmpdir(), "herald-s3-"));
  const s3rver = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const backend = `http://127.0.0.1:${(await s3rver.run()).port}`;
  const uploadsDir = join(directory, bucket, "._S3rver_uploads");
  const requests: string[] = [];
  // Uploads created with the CRC64NVME algorithm, and the checksum and size of each part they took.
  const checksummed = new Map<string, Map<number, { crc: bigint; size: number }>>();

  const listParts = async (uploadId: string): Promise<Response> => {
    const dir = join(uploadsDir, uploadId);
    const names = await readdir(dir).catch(() => null);
    if (!names)
      return xml(
        "<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>",
        404,
      );
    const parts: string[] = [];
    for (const name of names.filter((n) => /^\d+$/.test(n)).sort((a, b) => Number(a) - Number(b))) {
      const bytes = await readFile(join(dir, name));
      parts.push(
        `<Part><PartNumber>${name}</PartNumber><LastModified>${new Date().toISOString()}</LastModified><ETag>"${createHash("md5").update(bytes).digest("hex")}"</ETag><Size>${bytes.length}</Size></Part>`,
      );
    }
    return xml(
      `<ListPartsResult><Bucket>${bucket}</Bucket><UploadId>${uploadId}</UploadId><IsTruncated>false</IsTruncated>${parts.join("")}</ListPartsResult>`,
    );
  };

  const listUploads = async (): Promise<Response> => {
    const uploads: string[] = [];
    for (const id of await readdir(uploadsDir).catch(() => [] as string[])) {
      const key = await readFile(join(uploadsDir, id, "key"), "utf8").catch(() => null);
      const info = await stat(join(uploadsDir, id)).catch(() => null);
      if (key !== null && info)
        uploads.push(
          `<Upload><Key>${escapeXml(key)}</Key><UploadId>${id}</UploadId><Initiated>${info.birthtime.toISOString()}</Initiated></Upload>`,
        );
    }
    return xml(
      `<ListMultipartUploadsResult><Bucket>${bucket}</Bucket><IsTruncated>false</IsTruncated>${uploads.join("")}</ListMultipartUploadsResult>`,
    );
  };

  type Body = ReadableStream<Uint8Array> | Uint8Array | string | null;
  const forward = (request: Request, url: URL, body: Body = request.body) => {
    const headers = new Headers(request.headers);
    headers.delete("host");
    const init = { method: request.method, headers, body, redirect: "manual", duplex: "half" };
    return fetch(backend + url.pathname + url.search, init as RequestInit);
  };

  const createUpload = async (request: Request, url: URL): Promise<Response> => {
    const response = await forward(request, url);
    const text = await response.text();
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(text)?.[1];
    const algorithm = request.headers.get("x-amz-checksum-algorithm")?.toUpperCase();
    if (response.ok && uploadId && algorithm === "CRC64NVME") checksummed.set(uploadId, new Map());
    return new Response(text, { status: response.status, headers: response.headers });
  };

  const uploadPart = async (request: Request, url: URL, uploadId: string): Promise<Response> => {
    const parts = checksummed.get(uploadId);
    const declared = request.headers.get(CHECKSUM);
    if (declared !== null && !parts) return s3Error(400, "InvalidRequest", TYPE_MISMATCH);
    if (!parts) return forward(request, url);
    const bytes = new Uint8Array(await request.arrayBuffer());
    const crc = await crc64nvmeOf(bytes);
    if (declared !== null) {
      const value = crc64nvmeFromBase64(declared);
      if (value === null) return s3Error(400, "InvalidRequest", `Value for ${CHECKSUM} header is invalid.`);
      if (value !== crc) return s3Error(400, "BadDigest", BAD_DIGEST);
    }
    const response = await forward(request, url, bytes);
    if (!response.ok) return response;
    parts.set(Number(url.searchParams.get("partNumber")), { crc, size: bytes.length });
    const headers = new Headers(response.headers);
    headers.set(CHECKSUM, crc64nvmeToBase64(crc));
    return new Response(response.body, { status: response.status, headers });
  };

  const completeUpload = async (request: Request, url: URL, uploadId: string): Promise<Response> => {
    const parts = checksummed.get(uploadId);
    if (!parts) return forward(request, url);
    const body = await request.text();
    let whole = 0n;
    let first = true;
    for (const [, part] of body.matchAll(/<Part>(.*?)<\/Part>/gs)) {
      const stored = parts.get(Number(/<PartNumber>(\d+)<\/PartNumber>/.exec(part!)?.[1]));
      const given = /<ChecksumCRC64NVME>([^<]*)<\/ChecksumCRC64NVME>/.exec(part!)?.[1];
      if (!stored || given === undefined || crc64nvmeFromBase64(given) !== stored.crc) {
        return s3Error(400, "InvalidPart", INVALID_PART);
      }
      whole = first ? stored.crc : combineCrc64Nvme(whole, stored.crc, stored.size);
      first = false;
    }
    const declared = request.headers.get(CHECKSUM);
    if (declared !== null && crc64nvmeFromBase64(declared) !== whole) {
      return s3Error(400, "BadDigest", BAD_DIGEST);
    }
    const response = await forward(request, url, body);
    const text = await response.text();
    if (!response.ok) return new Response(text, { status: response.status, headers: response.headers });
    checksummed.delete(uploadId);
    const end = "</CompleteMultipartUploadResult>";
    const reported =
      `<ChecksumCRC64NVME>${crc64nvmeToBase64(whole)}</ChecksumCRC64NVME>` +
      `<ChecksumType>FULL_OBJECT</ChecksumType>${end}`;
    return xml(text.replace(/^<\?xml[^>]*>\s*/, "").replace(end, reported));
  };

  const front = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      requests.push(`${request.method} ${url.pathname}${url.search}`);
      if (url.searchParams.has("X-Amz-Signature")) {
        const refused = checkPresigned(request, url);
        if (refused) return refused;
      }
      const uploadId = url.searchParams.get("uploadId");
      const onBucket = url.pathname.replace(/\/$/, "") === `/${bucket}`;
      if (request.method === "GET" && onBucket && url.searchParams.has("uploads")) return listUploads();
      if (request.method === "GET" && !onBucket && uploadId && !url.searchParams.has("partNumber"))
        return listParts(uploadId);
      if (request.method === "DELETE" && !onBucket && uploadId) {
        checksummed.delete(uploadId);
        await rm(join(uploadsDir, uploadId), { recursive: true, force: true });
        return new Response(null, { status: 204 });
      }
      if (checksums && !onBucket) {
        const { method } = request;
        if (method === "POST" && url.searchParams.has("uploads")) return createUpload(request, url);
        const isPart = url.searchParams.has("partNumber");
        if (method === "PUT" && uploadId && isPart) return uploadPart(request, url, uploadId);
        if (method === "POST" && uploadId) return completeUpload(request, url, uploadId);
      }
      return forward(request, url);
    },
  });
  const endpoint = `http://127.0.0.1:${front.port}`;
  return {
    endpoint,
    bucket,
    requests,
    env: {
      HERALD_STORAGE: "s3",
      HERALD_S3_ENDPOINT: endpoint,
      HERALD_S3_BUCKET: bucket,
      HERALD_S3_ACCESS_KEY: "S3RVER",
      HERALD_S3_SECRET_KEY: SECRET_KEY,
      HERALD_S3_REGION: "us-east-1",
    },
    async stop() {
      await front.stop(true);
      await s3rver.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
