// S3 part checksums: each presigned UploadPart URL signs the part's declared CRC64NVME header, so
// the bucket checks every part as it arrives, like local storage does. A damaged part is refused
// (400 BadDigest) and sent again to the same URL; a part sent without the header does not match
// the signature (403). On a store that ignores checksums, completion reads the object back.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engineOf } from "../../src/db/engine.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer } from "../helpers/server.ts";
import { startFakeS3 } from "./fake-s3.ts";
import { assetsApi, completeBody, ok, planUpload, sendPart, uploadBody, type Plan } from "./helpers.ts";
import { png } from "./samples.ts";

const MiB = 1024 * 1024;
const HEADER = "x-amz-checksum-crc64nvme";

/** A copy of `bytes` with its first byte flipped. */
function damaged(bytes: Uint8Array): Uint8Array {
  const copy = Uint8Array.from(bytes);
  copy[0]! ^= 0xff;
  return copy;
}

/** A Herald server on a fresh in-process bucket (which checks presigned URLs against the wall clock). */
async function start(checksums: boolean) {
  const s3 = await startFakeS3({ checksums });
  const s = await startTestServer({ env: s3.env, clock: new ManualClock(Date.now()) });
  const stop = async () => {
    await s.stop();
    await s3.stop();
  };
  return { s, a: assetsApi(s, s.owner.workspaceId), stop };
}

type Env = Awaited<ReturnType<typeof start>>;

/** The store's key and upload id of a Herald upload. */
async function storeUpload(
  env: Env,
  uploadId: string,
): Promise<{ blob_key: string; store_upload_id: string }> {
  const sql = "SELECT blob_key, store_upload_id FROM asset_uploads WHERE id = ?";
  type Row = { blob_key: string; store_upload_id: string };
  const [row] = await engineOf(env.s.herald.db).query<Row>(sql, [uploadId]);
  return row!;
}

/** Sends every part of `upload` with its required headers; returns the ETags. */
async function sendAll(upload: any, plan: Plan): Promise<string[]> {
  const etags: string[] = [];
  for (const part of upload.parts) {
    const r = await sendPart(part, plan.parts[part.part_number - 1]!.bytes);
    expect(r.status).toBe(200);
    etags.push(r.headers.get("etag")!);
  }
  return etags;
}

/** The parts of a plan as a store's completion takes them. */
function completingParts(plan: Plan, etags: string[]) {
  return plan.parts.map((p, i) => ({
    partNumber: p.part_number,
    etag: etags[i]!,
    crc64nvme: p.checksum_crc64nvme,
  }));
}

describe("s3 storage with part checksums", () => {
  let env: Env;
  beforeAll(async () => {
    env = await start(true);
  });
  afterAll(async () => {
    await env.stop();
  });

  test("each part's required_headers carry its declared CRC64NVME, and the URL signs it", async () => {
    const plan = await planUpload(png(30, 20, 12 * MiB));
    const upload = ok(await env.a.start(uploadBody(plan)), 201).body;
    for (const part of upload.parts) {
      const declared = plan.parts[part.part_number - 1]!.checksum_crc64nvme;
      expect(part.required_headers).toEqual({ [HEADER]: declared });
      const signed = new URL(part.upload_url).searchParams.get("X-Amz-SignedHeaders")!.split(";");
      expect(signed).toEqual(["host", HEADER]);
    }
  });

  test("a part sent without its checksum header, or with another, fails the signature (403)", async () => {
    const plan = await planUpload(png(30, 30, 6 * MiB));
    const upload = ok(await env.a.start(uploadBody(plan)), 201).body;
    const part = upload.parts[1];
    const bare = await fetch(part.upload_url, { method: "PUT", body: plan.parts[1]!.bytes });
    expect(bare.status).toBe(403);
    expect(await bare.text()).toContain("<Code>SignatureDoesNotMatch</Code>");
    // The checksum of other bytes is not the one signed into the URL either.
    const other = damaged(plan.parts[1]!.bytes);
    const otherChecksum = (await planUpload(other)).parts[0]!.checksum_crc64nvme;
    const headers = { [HEADER]: otherChecksum };
    const swapped = await fetch(part.upload_url, { method: "PUT", headers, body: other });
    expect(swapped.status).toBe(403);
    const row = await storeUpload(env, upload.id);
    expect(await env.s.herald.blobs.listParts(row.blob_key, row.store_upload_id)).toEqual([]);
    expect((await sendPart(part, plan.parts[1]!.bytes)).status).toBe(200);
  });

  test("a damaged part is refused (400 BadDigest); re-sent to its URL, the upload completes", async () => {
    const bytes = png(30, 30, 11 * MiB);
    const plan = await planUpload(bytes);
    const upload = ok(await env.a.start(uploadBody(plan)), 201).body;
    const first = await sendPart(upload.parts[0], plan.parts[0]!.bytes);
    const third = await sendPart(upload.parts[2], plan.parts[2]!.bytes);
    expect([first.status, third.status]).toEqual([200, 200]);

    // (The bucket, like S3, takes part checksums only on an upload created with CRC64NVME.)
    const refused = await sendPart(upload.parts[1], damaged(plan.parts[1]!.bytes));
    expect(refused.status).toBe(400);
    const error = await refused.text();
    expect(error).toContain("<Code>BadDigest</Code>");
    const message = "The CRC64NVME you specified did not match the calculated checksum.";
    expect(error).toContain(`<Message>${message}</Message>`);
    const row = await storeUpload(env, upload.id);
    const kept = await env.s.herald.blobs.listParts(row.blob_key, row.store_upload_id);
    expect(kept.map((p) => p.partNumber)).toEqual([1, 3]);

    const second = await sendPart(upload.parts[1], plan.parts[1]!.bytes);
    expect(second.status).toBe(200);
    expect(second.headers.get(HEADER)).toBe(plan.parts[1]!.checksum_crc64nvme);
    const etags = [first, second, third].map((r) => r.headers.get("etag")!);
    const asset = ok(await env.a.complete(upload.id, completeBody(plan, etags))).body;
    expect(asset).toMatchObject({ id: upload.asset_id, status: "ready", width: 30, height: 30 });
    expect(asset.checksum.value).toBe(plan.checksum);
    const stored = await env.s.herald.blobs.readBytes(`${env.s.owner.workspaceId}/${asset.id}`);
    expect(Buffer.from(stored).equals(Buffer.from(bytes))).toBe(true);
    const download = await fetch(ok(await env.a.get(asset.id, "?include=download")).body.download_url);
    expect(download.status).toBe(200);
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
  });

  test("completion lists each part's checksum; the bucket vouches for the file (no read-back)", async () => {
    const plan = await planUpload(png(12, 12, 6 * MiB));
    const upload = ok(await env.a.start(uploadBody(plan)), 201).body;
    const etags = await sendAll(upload, plan);
    const { blob_key: key, store_upload_id: storeId } = await storeUpload(env, upload.id);
    const parts = completingParts(plan, etags);
    // Without the part checksums the bucket refuses the completion, as MinIO does.
    const bare = parts.map((p) => ({ ...p, crc64nvme: "" }));
    const refused = env.s.herald.blobs.completeMultipart(key, storeId, bare, plan.checksum);
    await expect(refused).rejects.toThrow("is not stored as listed");
    const assembled = await env.s.herald.blobs.completeMultipart(key, storeId, parts, plan.checksum);
    expect(assembled).toEqual({ verified: true });
  });
});

describe("s3 storage on a store that ignores checksums", () => {
  let env: Env;
  beforeAll(async () => {
    env = await start(false);
  });
  afterAll(async () => {
    await env.stop();
  });

  test("a part stored with other bytes is found by the read-back; the upload fails for good", async () => {
    const plan = await planUpload(png(30, 30, 6 * MiB));
    const upload = ok(await env.a.start(uploadBody(plan)), 201).body;
    // The header is signed and sent, but this store does not check it: it keeps whatever it is sent.
    const first = await sendPart(upload.parts[0], plan.parts[0]!.bytes);
    const second = await sendPart(upload.parts[1], damaged(plan.parts[1]!.bytes));
    expect([first.status, second.status]).toEqual([200, 200]);
    const etags = [first.headers.get("etag")!, second.headers.get("etag")!];
    const r = await env.a.complete(upload.id, completeBody(plan, etags));
    expectProblem(r, 400, "public_invalid_request");
    expect(r.body.detail).toContain("part 2 stored by the bucket does not match the declared CRC64NVME");
    expect(await env.s.herald.blobs.stat(`${env.s.owner.workspaceId}/${upload.asset_id}`)).toBeNull();
    expectProblem(await env.a.complete(upload.id, completeBody(plan, etags)), 409, "public_conflict");
  });

  test("intact parts complete after the read-back", async () => {
    const bytes = png(20, 20, 6 * MiB);
    const plan = await planUpload(bytes);
    const upload = ok(await env.a.start(uploadBody(plan)), 201).body;
    const etags = await sendAll(upload, plan);
    const { blob_key: key, store_upload_id: storeId } = await storeUpload(env, upload.id);
    const parts = completingParts(plan, etags);
    // This store reports no CRC64NVME for the assembled file: Herald must read it back itself.
    const assembled = await env.s.herald.blobs.completeMultipart(key, storeId, parts, plan.checksum);
    expect(assembled).toEqual({ verified: false });
    const stored = await env.s.herald.blobs.readBytes(key);
    expect(Buffer.from(stored).equals(Buffer.from(bytes))).toBe(true);
  });

  test("through the API, intact parts complete after the read-back", async () => {
    const bytes = png(21, 20, 6 * MiB);
    const plan = await planUpload(bytes);
    const upload = ok(await env.a.start(uploadBody(plan)), 201).body;
    const asset = ok(await env.a.complete(upload.id, completeBody(plan, await sendAll(upload, plan)))).body;
    expect(asset).toMatchObject({ status: "ready", width: 21, height: 20 });
  });
});
