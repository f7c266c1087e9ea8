// The whole upload flow on both backends: local disk (parts through Herald's signed URLs) and S3
// (parts straight to the bucket on presigned URLs; s3rver in this process). Inspection of real
// sample files, listing, download links, delete.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engineOf } from "../../src/db/engine.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startFakeS3, type FakeS3 } from "./fake-s3.ts";
import { assetsApi, completeBody, ok, planUpload, sendAllParts, uploadAsset, uploadBody } from "./helpers.ts";
import { gif, jpeg, mp4, png, webp } from "./samples.ts";

const MiB = 1024 * 1024;

interface Backend {
  name: "local" | "s3";
  start(): Promise<{ s: TestServer; stop(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: "local",
    async start() {
      const s = await startTestServer();
      return { s, stop: () => s.stop() };
    },
  },
  {
    name: "s3",
    async start() {
      const s3: FakeS3 = await startFakeS3();
      // The fake bucket checks presigned URLs against the wall clock: run Herald on it too.
      const s = await startTestServer({ env: s3.env, clock: new ManualClock(Date.now()) });
      return {
        s,
        async stop() {
          await s.stop();
          await s3.stop();
        },
      };
    },
  },
];

for (const backend of backends) {
  describe(`${backend.name} storage`, () => {
    let s: TestServer;
    let stop: () => Promise<void>;
    let a: ReturnType<typeof assetsApi>;
    beforeAll(async () => {
      ({ s, stop } = await backend.start());
      a = assetsApi(s, s.owner.workspaceId);
    });
    afterAll(async () => {
      await stop();
    });

    test("an upload reserves a pending asset and returns one URL per part", async () => {
      const plan = await planUpload(png(30, 20, 12 * MiB));
      const r = ok(await a.start(uploadBody(plan)), 201);
      expect(r.headers.get("etag")).toBeTruthy();
      const upload = r.body;
      expect(upload).toMatchObject({
        object: "asset_upload",
        protocol: "multipart",
        part_size: 5 * MiB,
        byte_size: plan.byteSize,
      });
      expect(upload.id).toStartWith("upl_");
      expect(upload.asset_id).toStartWith("ast_");
      expect(upload.parts.map((p: any) => p.part_number)).toEqual([1, 2, 3]);
      for (const part of upload.parts) {
        expect(part.upload_url).toStartWith(
          backend.name === "local"
            ? `${s.url}/uploads/${upload.id}/parts/${part.part_number}?`
            : "http://127.0.0.1:",
        );
        expect(typeof part.required_headers).toBe("object");
      }
      if (backend.name === "s3") expect(upload.parts[1].upload_url).toContain("partNumber=2");
      expect(Date.parse(upload.expires_at) - s.clock.now()).toBeGreaterThan(23 * 3600_000);
      const pending = ok(await a.get(upload.asset_id)).body;
      expect(pending).toMatchObject({
        id: upload.asset_id,
        object: "asset",
        status: "pending_upload",
        label: "picture.png",
        type: "card",
        content_type: "image/png",
        byte_size: plan.byteSize,
        width: null,
        checksum: null,
      });
    });

    const samples: {
      name: string;
      bytes: () => Uint8Array;
      kind: string;
      contentType: string;
      expect: Record<string, unknown>;
    }[] = [
      {
        name: "PNG 1200×630 in three parts",
        bytes: () => png(1200, 630, 12 * MiB + 5),
        kind: "card",
        contentType: "image/png",
        expect: { width: 1200, height: 630, dimensions: "1200x630", format: "x-landscape", duration_sec: 0 },
      },
      {
        name: "JPEG 1080×1350 behind a large EXIF-sized block",
        bytes: () => jpeg(1080, 1350, 200_000),
        kind: "card",
        contentType: "image/jpeg",
        expect: { width: 1080, height: 1350, format: "portrait" },
      },
      {
        name: "GIF 500×500",
        bytes: () => gif(500, 500),
        kind: "poster",
        contentType: "image/gif",
        expect: { width: 500, height: 500, format: "square" },
      },
      {
        name: "WebP 1600×1200",
        bytes: () => webp(1600, 1200),
        kind: "card",
        contentType: "image/webp",
        expect: { width: 1600, height: 1200, format: "landscape" },
      },
      {
        name: "MP4 1080×1920, 12.5 s, moov after a 6 MiB mdat",
        bytes: () => mp4(1080, 1920, 12.5, { mdatBytes: 6 * MiB }),
        kind: "video",
        contentType: "video/mp4",
        expect: { width: 1080, height: 1920, format: "vertical", duration_sec: 13 },
      },
      {
        name: "MOV 1920×1080, 3 s",
        bytes: () => mp4(1920, 1080, 3, { brand: "qt  " }),
        kind: "video",
        contentType: "video/quicktime",
        expect: { width: 1920, height: 1080, format: "x-landscape", duration_sec: 3 },
      },
    ];
    for (const sample of samples) {
      test(`completes and inspects a ${sample.name}`, async () => {
        const bytes = sample.bytes();
        const asset = await uploadAsset(s, s.owner.workspaceId, bytes, {
          kind: sample.kind,
          contentType: sample.contentType,
          fileName: `sample.${sample.contentType.split("/")[1]}`,
        });
        const plan = await planUpload(bytes);
        expect(asset).toMatchObject({
          object: "asset",
          status: "ready",
          type: sample.kind,
          content_type: sample.contentType,
          byte_size: bytes.length,
          checksum: { algorithm: "crc64nvme", value: plan.checksum },
          retention: { policy: "workspace_managed", reusable: true },
          ...sample.expect,
        });
        expect(asset.inspected_at).toMatch(/Z$/);
        // The stored bytes are exactly the file.
        const stored = await s.herald.blobs.readBytes(`${s.owner.workspaceId}/${asset.id}`);
        expect(Buffer.from(stored).equals(Buffer.from(bytes))).toBe(true);
      });
    }

    test("a download URL serves the bytes for five minutes", async () => {
      const bytes = png(64, 48);
      const asset = await uploadAsset(s, s.owner.workspaceId, bytes, { fileName: "café.png" });
      const got = ok(await a.get(asset.id, "?include=download")).body;
      expect(got.download_url).toBeString();
      expect(Date.parse(got.download_url_expires_at) - s.clock.now()).toBeGreaterThan(4 * 60_000);
      expect(Date.parse(got.download_url_expires_at) - s.clock.now()).toBeLessThanOrEqual(5 * 60_000);
      const download = await fetch(got.download_url);
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
      expect(download.headers.get("content-type")).toStartWith("image/png");
      // Without include=download there is no link.
      expect(ok(await a.get(asset.id)).body).not.toHaveProperty("download_url");
    });

    test("the listing pages newest first, with download links on ready assets when asked", async () => {
      const ids = [];
      for (const width of [10, 11, 12])
        ids.push((await uploadAsset(s, s.owner.workspaceId, png(width, 10))).id);
      const first = ok(await a.list("?limit=2&include=download")).body;
      expect(first.data.map((x: any) => x.id)).toEqual([ids[2], ids[1]]);
      expect(first.has_more).toBe(true);
      for (const item of first.data) expect(item.download_url).toBeString();
      const second = ok(
        await a.list(`?limit=2&include=download&after=${encodeURIComponent(first.next_cursor)}`),
      ).body;
      expect(second.data[0].id).toBe(ids[0]);
      const plain = ok(await a.list("?limit=1")).body;
      expect(plain.data[0]).not.toHaveProperty("download_url");
    });

    test("delete removes the asset and its bytes", async () => {
      const asset = await uploadAsset(s, s.owner.workspaceId, png(8, 8));
      const key = `${s.owner.workspaceId}/${asset.id}`;
      expect(await s.herald.blobs.stat(key)).not.toBeNull();
      const r = ok(await a.remove(asset.id));
      expect(r.body).toEqual({ id: asset.id, object: "asset", deleted: true });
      expect(await s.herald.blobs.stat(key)).toBeNull();
      expectProblem(await a.get(asset.id), 404, "public_not_found");
      expectProblem(await a.remove(asset.id), 404, "public_not_found");
    });

    test("missing part: complete is 400 naming it, and works once it is sent", async () => {
      const plan = await planUpload(png(40, 30, 11 * MiB));
      const upload = ok(await a.start(uploadBody(plan)), 201).body;
      const first = await fetch(upload.parts[0].upload_url, {
        method: "PUT",
        headers: upload.parts[0].required_headers,
        body: plan.parts[0]!.bytes,
      });
      const third = await fetch(upload.parts[2].upload_url, {
        method: "PUT",
        headers: upload.parts[2].required_headers,
        body: plan.parts[2]!.bytes,
      });
      expect([first.status, third.status]).toEqual([200, 200]);
      const etags = [first.headers.get("etag")!, '"0000"', third.headers.get("etag")!];
      const r = await a.complete(upload.id, completeBody(plan, etags));
      expectProblem(r, 400, "public_invalid_request", ["/parts"]);
      expect(r.body.errors[0].detail).toContain("part 2 has not been uploaded");
      const second = await fetch(upload.parts[1].upload_url, {
        method: "PUT",
        headers: upload.parts[1].required_headers,
        body: plan.parts[1]!.bytes,
      });
      expect(second.status).toBe(200);
      etags[1] = second.headers.get("etag")!;
      const done = ok(await a.complete(upload.id, completeBody(plan, etags))).body;
      expect(done).toMatchObject({ status: "ready", width: 40, height: 30 });
    });

    test("wrong ETag: 400 on that part, and the upload stays completable", async () => {
      const plan = await planUpload(png(40, 30, 6 * MiB));
      const upload = ok(await a.start(uploadBody(plan)), 201).body;
      const etags = await sendAllParts(upload, plan);
      const r = await a.complete(upload.id, completeBody(plan, [etags[0]!, '"deadbeefdeadbeef"']));
      expectProblem(r, 400, "public_invalid_request", ["/parts/1/etag"]);
      ok(await a.complete(upload.id, completeBody(plan, etags)));
    });

    test("wrong total checksum: 400 on checksum_crc64nvme, nothing assembled", async () => {
      const plan = await planUpload(png(40, 30, 6 * MiB));
      const upload = ok(await a.start(uploadBody(plan)), 201).body;
      const etags = await sendAllParts(upload, plan);
      const body = { ...completeBody(plan, etags), checksum_crc64nvme: "AAAAAAAAAAA=" };
      expectProblem(await a.complete(upload.id, body), 400, "public_invalid_request", [
        "/checksum_crc64nvme",
      ]);
      expect(await s.herald.blobs.stat(`${s.owner.workspaceId}/${upload.asset_id}`)).toBeNull();
      expect(ok(await a.get(upload.asset_id)).body.status).toBe("pending_upload");
      ok(await a.complete(upload.id, completeBody(plan, etags)));
    });

    test("completion checks byte_size and each part's checksum against the upload", async () => {
      const plan = await planUpload(png(20, 20, 6 * MiB));
      const upload = ok(await a.start(uploadBody(plan)), 201).body;
      const etags = await sendAllParts(upload, plan);
      const body = completeBody(plan, etags);
      expectProblem(
        await a.complete(upload.id, { ...body, byte_size: plan.byteSize + 1 }),
        400,
        "public_invalid_request",
        ["/byte_size"],
      );
      const wrongPart = {
        ...body,
        parts: [body.parts[0], { ...body.parts[1]!, checksum_crc64nvme: body.parts[0]!.checksum_crc64nvme }],
      };
      expectProblem(await a.complete(upload.id, wrongPart), 400, "public_invalid_request", [
        "/parts/1/checksum_crc64nvme",
      ]);
      ok(await a.complete(upload.id, body));
    });

    test("a completed upload completes again with the same file, and refuses another", async () => {
      const plan = await planUpload(png(20, 20));
      const upload = ok(await a.start(uploadBody(plan)), 201).body;
      const etags = await sendAllParts(upload, plan);
      const first = ok(await a.complete(upload.id, completeBody(plan, etags))).body;
      const again = ok(await a.complete(upload.id, completeBody(plan, etags))).body;
      expect(again.id).toBe(first.id);
      const other = await planUpload(png(21, 20));
      expectProblem(await a.complete(upload.id, completeBody(other, etags)), 409, "public_conflict");
    });

    test("bytes that are not the declared kind of file fail the upload for good", async () => {
      const bytes = new TextEncoder().encode("%PDF-1.7 definitely not a picture");
      const plan = await planUpload(bytes);
      const upload = ok(await a.start(uploadBody(plan)), 201).body;
      const etags = await sendAllParts(upload, plan);
      const r = await a.complete(upload.id, completeBody(plan, etags));
      expectProblem(r, 400, "public_invalid_request");
      expect(r.body.detail).toContain("not a PNG, JPEG, GIF or WebP");
      expect(await s.herald.blobs.stat(`${s.owner.workspaceId}/${upload.asset_id}`)).toBeNull();
      expectProblem(await a.complete(upload.id, completeBody(plan, etags)), 409, "public_conflict");
    });

    test("a JPEG declared as PNG is refused", async () => {
      const plan = await planUpload(jpeg(100, 100));
      const upload = ok(await a.start(uploadBody(plan, { contentType: "image/png" })), 201).body;
      const etags = await sendAllParts(upload, plan);
      const r = await a.complete(upload.id, completeBody(plan, etags));
      expectProblem(r, 400, "public_invalid_request");
      expect(r.body.detail).toContain("image/jpeg");
    });

    test("a completion that died after the store assembled the file is finished by the next one", async () => {
      const plan = await planUpload(png(30, 30, 6 * MiB));
      const upload = ok(await a.start(uploadBody(plan)), 201).body;
      const etags = await sendAllParts(upload, plan);
      // As if a completion had assembled the object and the process died before recording it.
      const [row] = await engineOf(s.herald.db).query<{ blob_key: string; store_upload_id: string }>(
        "SELECT blob_key, store_upload_id FROM asset_uploads WHERE id = ?",
        [upload.id],
      );
      if (!row) throw new Error(`no upload row ${upload.id}`);
      const stored = await s.herald.blobs.listParts(row.blob_key, row.store_upload_id);
      const listed = stored.map((p) => ({
        partNumber: p.partNumber,
        etag: p.etag,
        crc64nvme: plan.parts[p.partNumber - 1]!.checksum_crc64nvme,
      }));
      const { blob_key: key, store_upload_id: storeId } = row;
      const assembled = await s.herald.blobs.completeMultipart(key, storeId, listed, plan.checksum);
      expect(assembled).toEqual({ verified: true });
      const asset = ok(await a.complete(upload.id, completeBody(plan, etags))).body;
      expect(asset).toMatchObject({
        status: "ready",
        width: 30,
        height: 30,
        checksum: { value: plan.checksum },
      });
    });

    test("two completions at once: one assembles, the other waits its turn or sees the result", async () => {
      const plan = await planUpload(png(31, 31, 6 * MiB));
      const upload = ok(await a.start(uploadBody(plan)), 201).body;
      const etags = await sendAllParts(upload, plan);
      const results = await Promise.all([
        a.complete(upload.id, completeBody(plan, etags)),
        a.complete(upload.id, completeBody(plan, etags)),
      ]);
      const statuses = results.map((r) => r.status).sort();
      expect([
        [200, 200],
        [200, 409],
      ]).toContainEqual(statuses);
      for (const r of results)
        if (r.status === 409) expect(r.body.retry).toEqual({ safety: "safe", after: 5 });
      expect(ok(await a.get(upload.asset_id)).body.status).toBe("ready");
      ok(await a.complete(upload.id, completeBody(plan, etags)));
    });

    test("the same Idempotency-Key replays the upload", async () => {
      const plan = await planUpload(png(9, 9));
      const headers = { "idempotency-key": `replay-${backend.name}` };
      const first = ok(await a.start(uploadBody(plan), headers), 201);
      const second = ok(await a.start(uploadBody(plan), headers), 201);
      expect(second.body.id).toBe(first.body.id);
      expect(second.headers.get("idempotent-replayed")).toBe("true");
    });
  });
}
