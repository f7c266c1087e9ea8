// The assets-cleanup job on both backends: expired uploads lose their parts and their reserved
// asset, deleted assets lose their bytes, and objects or multipart uploads no row claims (a crash
// between the store and the database) are removed after the grace period.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { engineOf } from "../../src/db/engine.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { cleanupAssets } from "../../src/modules/assets/cleanup.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startFakeS3, type FakeS3 } from "./fake-s3.ts";
import {
  assetsApi,
  completeBody,
  idem,
  ok,
  planUpload,
  sendAllParts,
  uploadAsset,
  uploadBody,
} from "./helpers.ts";
import { png } from "./samples.ts";

const MiB = 1024 * 1024;

for (const storage of ["local", "s3"] as const) {
  describe(`${storage} storage`, () => {
    let s: TestServer;
    let s3: FakeS3 | null = null;
    let a: ReturnType<typeof assetsApi>;
    beforeAll(async () => {
      s3 = storage === "s3" ? await startFakeS3() : null;
      s = await startTestServer({ env: { ...s3?.env }, clock: new ManualClock(Date.now()) });
      a = assetsApi(s, s.owner.workspaceId);
    });
    afterAll(async () => {
      await s.stop();
      await s3?.stop();
    });

    const storeUploadIdOf = async (uploadId: string) => {
      const sql = "SELECT store_upload_id FROM asset_uploads WHERE id = ?";
      const [row] = await engineOf(s.herald.db).query<{ store_upload_id: string }>(sql, [uploadId]);
      return row!.store_upload_id;
    };
    const multipartIds = async () => {
      const ids: string[] = [];
      for await (const u of s.herald.blobs.listMultipart()) ids.push(u.uploadId);
      return ids;
    };

    test("an expired upload loses its parts and its reserved asset; completing it is 409", async () => {
      const plan = await planUpload(png(20, 20, 6 * MiB));
      const upload = ok(await a.start(uploadBody(plan)), 201).body;
      const etags = await sendAllParts(upload, plan);
      const storeId = await storeUploadIdOf(upload.id);
      expect(await multipartIds()).toContain(storeId);
      s.clock.advance(24 * 3600_000 + 1000);
      const report = await cleanupAssets(s.herald);
      expect(report.expired_uploads).toBe(1);
      expect(report.abandoned_assets).toBe(1);
      expect(await multipartIds()).not.toContain(storeId);
      expectProblem(await a.get(upload.asset_id), 404, "public_not_found");
      expectProblem(await a.complete(upload.id, completeBody(plan, etags)), 409, "public_conflict");
      // A second run finds nothing more to do.
      expect(await cleanupAssets(s.herald)).toMatchObject({ expired_uploads: 0, abandoned_assets: 0 });
    });

    test("a reserved asset that a live post waits on stays until the post is over", async () => {
      const plan = await planUpload(png(20, 20));
      const upload = ok(await a.start(uploadBody(plan)), 201).body;
      const draft = ok(
        await s.request("POST", `/v1/workspaces/${s.owner.workspaceId}/posts`, {
          body: {
            when: "draft",
            group: `cleanup-${storage}`,
            posts: [{ channel: "mastodon", body: ["wait"], media: [upload.asset_id] }],
          },
        }),
        201,
      ).body.posts[0];
      s.clock.advance(24 * 3600_000 + 1000);
      await cleanupAssets(s.herald);
      expect(ok(await a.get(upload.asset_id)).body.status).toBe("pending_upload");
      ok(
        await s.request("DELETE", `/v1/workspaces/${s.owner.workspaceId}/posts/${draft.id}`, {
          headers: { ...idem(), "if-match": "*" },
        }),
      );
      expect((await cleanupAssets(s.herald)).abandoned_assets).toBe(1);
      expectProblem(await a.get(upload.asset_id), 404, "public_not_found");
    });

    test("a deleted asset whose bytes could not be removed loses them on the next run", async () => {
      const asset = await uploadAsset(s, s.owner.workspaceId, png(9, 9));
      const key = `${s.owner.workspaceId}/${asset.id}`;
      // As if DELETE had run while the store was unreachable: the row is deleted, the bytes remain.
      const deleteRow = "UPDATE assets SET deleted_at = ? WHERE id = ?";
      await engineOf(s.herald.db).query(deleteRow, [s.clock.now(), asset.id]);
      expect(await s.herald.blobs.stat(key)).not.toBeNull();
      expect((await cleanupAssets(s.herald)).deleted_blobs).toBe(1);
      expect(await s.herald.blobs.stat(key)).toBeNull();
      const sql = "SELECT blob_key FROM assets WHERE id = ?";
      const [row] = await engineOf(s.herald.db).query<{ blob_key: string | null }>(sql, [asset.id]);
      expect(row!.blob_key).toBeNull();
    });

    test("objects and multipart uploads no row claims are removed after the grace period, claimed ones never", async () => {
      const kept = await uploadAsset(s, s.owner.workspaceId, png(7, 7));
      const live = ok(await a.start(uploadBody(await planUpload(png(5, 5)))), 201).body;
      const orphanKey = `${s.owner.workspaceId}/ast_orphan0000000000000000000`;
      await s.herald.blobs.put(orphanKey, new Uint8Array([1, 2, 3]));
      const orphanUpload = await s.herald.blobs.createMultipart(
        `${s.owner.workspaceId}/ast_orphan1111111111111111111`,
        { contentType: "image/png" },
      );

      const fresh = await cleanupAssets(s.herald);
      expect(fresh).toMatchObject({ orphan_objects: 0, orphan_uploads: 0 });
      expect(await s.herald.blobs.stat(orphanKey)).not.toBeNull();

      const late = await cleanupAssets(s.herald, { graceMs: -60_000 });
      expect(late.orphan_objects).toBe(1);
      expect(late.orphan_uploads).toBe(1);
      expect(await s.herald.blobs.stat(orphanKey)).toBeNull();
      expect(await multipartIds()).not.toContain(orphanUpload);
      expect(await multipartIds()).toContain(await storeUploadIdOf(live.id));
      expect(await s.herald.blobs.stat(`${s.owner.workspaceId}/${kept.id}`)).not.toBeNull();
      expect(ok(await a.get(kept.id)).body.status).toBe("ready");
    });

    if (storage === "local") {
      test("temp files a crash left behind are removed after the grace period", async () => {
        const tmp = join(s.dataDir, "blobs", ".tmp", ".tmp-leftover");
        writeFileSync(tmp, "half a file");
        expect((await cleanupAssets(s.herald)).temp_files).toBe(0);
        expect((await cleanupAssets(s.herald, { graceMs: -60_000 })).temp_files).toBe(1);
        expect(await Bun.file(tmp).exists()).toBe(false);
      });
    }

    test("the job is scheduled as assets-cleanup and reports on /health", async () => {
      await s.server.scheduler.runNow("assets-cleanup");
      const health = ok(await s.request("GET", "/health", { key: null })).body;
      const job = health.jobs.find((j: { id: string }) => j.id === "assets-cleanup");
      expect(job).toMatchObject({ failed: false });
      expect(job.last_finished_at).toBeString();
    });
  });
}
