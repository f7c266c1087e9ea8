// An S3-compatible bucket in this process: s3rver 3.7.1 (object and multipart calls; it checks the
// access key but not V4 signatures or checksums) behind a small front that adds the three multipart
// calls s3rver lacks and real S3 and MinIO have: ListParts, ListMultipartUploads and
// AbortMultipartUpload, answered from s3rver's own files. Everything else goes to s3rver unchanged.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";

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
const xml = (body: string, status = 200) => new Response(`<?xml version="1.0" encoding="UTF-8"?>\n${body}`, { status, headers: { "content-type": "application/xml" } });

/** Starts s3rver and its front on 127.0.0.1 with an empty bucket. */
export async function startFakeS3(bucket = "herald-media"): Promise<FakeS3> {
  const directory = mkdtempSync(join(tmpdir(), "herald-s3-"));
  const s3rver = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const backend = `http://127.0.0.1:${(await s3rver.run()).port}`;
  const uploadsDir = join(directory, bucket, "._S3rver_uploads");
  const requests: string[] = [];

  const listParts = async (uploadId: string): Promise<Response> => {
    const dir = join(uploadsDir, uploadId);
    const names = await readdir(dir).catch(() => null);
    if (!names) return xml("<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>", 404);
    const parts: string[] = [];
    for (const name of names.filter((n) => /^\d+$/.test(n)).sort((a, b) => Number(a) - Number(b))) {
      const bytes = await readFile(join(dir, name));
      parts.push(`<Part><PartNumber>${name}</PartNumber><LastModified>${new Date().toISOString()}</LastModified><ETag>"${createHash("md5").update(bytes).digest("hex")}"</ETag><Size>${bytes.length}</Size></Part>`);
    }
    return xml(`<ListPartsResult><Bucket>${bucket}</Bucket><UploadId>${uploadId}</UploadId><IsTruncated>false</IsTruncated>${parts.join("")}</ListPartsResult>`);
  };

  const listUploads = async (): Promise<Response> => {
    const uploads: string[] = [];
    for (const id of await readdir(uploadsDir).catch(() => [] as string[])) {
      const key = await readFile(join(uploadsDir, id, "key"), "utf8").catch(() => null);
      const info = await stat(join(uploadsDir, id)).catch(() => null);
      if (key !== null && info) uploads.push(`<Upload><Key>${escapeXml(key)}</Key><UploadId>${id}</UploadId><Initiated>${info.birthtime.toISOString()}</Initiated></Upload>`);
    }
    return xml(`<ListMultipartUploadsResult><Bucket>${bucket}</Bucket><IsTruncated>false</IsTruncated>${uploads.join("")}</ListMultipartUploadsResult>`);
  };

  const front = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      requests.push(`${request.method} ${url.pathname}${url.search}`);
      const uploadId = url.searchParams.get("uploadId");
      const onBucket = url.pathname.replace(/\/$/, "") === `/${bucket}`;
      if (request.method === "GET" && onBucket && url.searchParams.has("uploads")) return listUploads();
      if (request.method === "GET" && !onBucket && uploadId && !url.searchParams.has("partNumber")) return listParts(uploadId);
      if (request.method === "DELETE" && !onBucket && uploadId) {
        await rm(join(uploadsDir, uploadId), { recursive: true, force: true });
        return new Response(null, { status: 204 });
      }
      const headers = new Headers(request.headers);
      headers.delete("host");
      return fetch(backend + url.pathname + url.search, { method: request.method, headers, body: request.body, redirect: "manual", duplex: "half" } as RequestInit);
    },
  });
  const endpoint = `http://127.0.0.1:${front.port}`;
  return {
    endpoint, bucket, requests,
    env: { HERALD_STORAGE: "s3", HERALD_S3_ENDPOINT: endpoint, HERALD_S3_BUCKET: bucket, HERALD_S3_ACCESS_KEY: "S3RVER", HERALD_S3_SECRET_KEY: "S3RVER", HERALD_S3_REGION: "us-east-1" },
    async stop() {
      front.stop(true);
      await s3rver.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
