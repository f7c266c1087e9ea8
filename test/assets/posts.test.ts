// Assets and posts, on both backends: a post whose asset is still uploading is `preparing` and goes
// on once the upload completes; publishing to Bluesky reads the bytes through the blob store (the
// Bluesky fake receives exactly the file); Bluesky's 1,000,000-byte image limit; deleting an asset
// that an unfinished post uses is refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { cid } from "../fakes/shared.ts";
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

for (const storage of ["local", "s3"] as const) {
  describe(`${storage} storage`, () => {
    let s: TestServer;
    let s3: FakeS3 | null = null;
    let bluesky: BlueskyFake;
    let destination: string;
    let a: ReturnType<typeof assetsApi>;
    let groups = 0;

    beforeAll(async () => {
      s3 = storage === "s3" ? await startFakeS3() : null;
      s = await startTestServer({
        env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1", ...s3?.env },
        clock: new ManualClock(Date.now()),
      });
      bluesky = await startBlueskyFake();
      const connected = ok(
        await s.request("POST", `/v1/workspaces/${s.owner.workspaceId}/destination-connections`, {
          body: {
            provider: "bluesky",
            instance_origin: bluesky.origin,
            handle: "alice.test",
            app_password: "alice-app-pass",
          },
        }),
        201,
      );
      destination = connected.body.destination_id;
      a = assetsApi(s, s.owner.workspaceId);
    });
    afterAll(async () => {
      await s.stop();
      await bluesky.stop();
      await s3?.stop();
    });

    const createPost = (assetId: string, when: string) =>
      s.request("POST", `/v1/workspaces/${s.owner.workspaceId}/posts`, {
        headers: idem(),
        body: {
          when,
          confirmed: true,
          group: `assets-${storage}-${++groups}`,
          posts: [
            {
              destination_id: destination,
              body: ["A picture"],
              media: [assetId],
              destination_options: { bluesky: { alt_text_by_asset_id: { [assetId]: "A grey square" } } },
            },
          ],
        },
      });
    const getPost = async (id: string) =>
      ok(await s.request("GET", `/v1/workspaces/${s.owner.workspaceId}/posts/${id}`)).body;

    test("a post with a pending asset is preparing, goes on when the upload completes, and Bluesky gets the bytes from the store", async () => {
      const bytes = png(300, 200, 200_000);
      const plan = await planUpload(bytes);
      const upload = ok(await a.start(uploadBody(plan)), 201).body;
      const at = new Date(s.clock.now() + 30 * 60_000).toISOString();
      const post = ok(await createPost(upload.asset_id, at), 201).body.posts[0];
      expect(post.state).toBe("preparing");
      await s.server.engine.runUntilIdle();
      expect((await getPost(post.id)).state).toBe("preparing");

      const etags = await sendAllParts(upload, plan);
      ok(await a.complete(upload.id, completeBody(plan, etags)));
      await s.server.engine.runUntilIdle();
      expect((await getPost(post.id)).state).toBe("scheduled");

      s.clock.advance(30 * 60_000);
      const blobsBefore = bluesky.blobs.length;
      await s.server.engine.runUntilIdle();
      const published = await getPost(post.id);
      expect({ state: published.state, last_error: published.last_error }).toEqual({
        state: "published",
        last_error: null,
      });
      const sent = bluesky.blobs.slice(blobsBefore);
      expect(sent).toEqual([
        expect.objectContaining({ mimeType: "image/png", size: bytes.length, cid: cid(bytes, 0x55) }),
      ]);
      const record = bluesky.records.find((r) => published.receipts[0].provider_object_id.endsWith(r.rkey))!;
      expect(record.record.embed.images[0]).toMatchObject({
        alt: "A grey square",
        aspectRatio: { width: 300, height: 200 },
      });
    });

    test("an image over 1,000,000 bytes is refused for Bluesky (422), one of exactly 1,000,000 is taken", async () => {
      const big = await uploadAsset(s, s.owner.workspaceId, png(10, 10, 1_000_001));
      const r = await createPost(big.id, "now");
      expectProblem(r, 422, "public_unpublishable", ["/posts/0/media/0"]);
      expect(r.body.errors[0].detail).toContain("1000000");
      const fits = await uploadAsset(s, s.owner.workspaceId, png(10, 10, 1_000_000));
      const post = ok(await createPost(fits.id, "now"), 202).body.posts[0];
      await s.server.engine.runUntilIdle();
      expect((await getPost(post.id)).state).toBe("published");
      expect(bluesky.blobs.at(-1)!.size).toBe(1_000_000);
    });

    test("the limit applies to a pending upload's declared size too", async () => {
      const plan = await planUpload(png(10, 10, 1_500_000));
      const upload = ok(await a.start(uploadBody(plan)), 201).body;
      expectProblem(await createPost(upload.asset_id, "now"), 422, "public_unpublishable", [
        "/posts/0/media/0",
      ]);
    });

    test("deleting an asset is refused while an unfinished post uses it, and allowed once the post is over", async () => {
      const asset = await uploadAsset(s, s.owner.workspaceId, png(12, 12));
      const at = new Date(s.clock.now() + 3600_000).toISOString();
      const post = ok(await createPost(asset.id, at), 201).body.posts[0];
      const refused = await a.remove(asset.id);
      expectProblem(refused, 409, "public_conflict");
      expect(refused.body.detail).toContain(post.id);
      expect(ok(await a.get(asset.id)).body.status).toBe("ready");
      ok(
        await s.request("POST", `/v1/workspaces/${s.owner.workspaceId}/posts/${post.id}/cancel`, {
          body: { confirmed: true },
        }),
      );
      expect(ok(await a.remove(asset.id)).body.deleted).toBe(true);
    });

    test("a draft holds its asset too", async () => {
      const asset = await uploadAsset(s, s.owner.workspaceId, png(13, 13));
      ok(
        await s.request("POST", `/v1/workspaces/${s.owner.workspaceId}/posts`, {
          body: {
            when: "draft",
            group: `draft-${storage}`,
            posts: [{ channel: "bluesky", body: ["draft"], media: [asset.id] }],
          },
        }),
        201,
      );
      expectProblem(await a.remove(asset.id), 409, "public_conflict");
    });
  });
}
