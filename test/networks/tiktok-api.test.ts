// TikTok through the real server: connecting with Login Kit OAuth (authorize on the fake, back to the
// callback), the 422 when Herald's TikTok app is not configured, Create Post of a video → engine →
// init → awaiting-provider while the check uploads it and TikTok processes it → published with a
// tiktok.com/@user/video/<id> receipt, photos pulled from Herald's signed URLs, an expired token
// renewed with the rotated refresh token stored, and validation refusals with their JSON pointers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uploadAsset } from "../assets/helpers.ts";
import { jpeg, mp4, png } from "../assets/samples.ts";
import { startTikTokFake, type TikTokFake } from "../fakes/tiktok.ts";
import { expectProblem } from "../helpers/problems.ts";
import { apiPosting } from "./support.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { outbox } from "../posts/engine-helpers.ts";
import type { PostsWorld } from "../posts/helpers.ts";
import { TIKTOK_MAX_RECHECK_MS } from "../../src/providers/tiktok/publish.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

let s: TestServer;
let fake: TikTokFake;
let ws: string;

let destinationId: string;

const api = apiPosting("tiktok", () => ({ s, ws }));
const createPost = (post: Record<string, unknown>, when = "now") => api.createPost(destinationId, post, when);
const getPost = api.getPost;
const publishNow = (post: Record<string, unknown>) => api.publishNow(destinationId, post);

const PUBLIC = { tiktok: { privacy_level: "PUBLIC_TO_EVERYONE" } };

beforeAll(async () => {
  fake = await startTikTokFake({ processingFetches: 0 });
  s = await startTestServer({
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      HERALD_TIKTOK_CLIENT_ID: fake.clientKey,
      HERALD_TIKTOK_CLIENT_SECRET: fake.clientSecret,
      HERALD_TIKTOK_API_BASE: fake.origin,
      HERALD_TIKTOK_AUTH_BASE: fake.origin,
    },
  });
  ws = s.owner.workspaceId;
});
afterAll(async () => {
  await s.stop();
  await fake.stop();
});

describe("connecting TikTok", () => {
  test("OAuth through the API: authorize on TikTok, back to the callback, a destination for the creator", async () => {
    const started = await s.request("POST", `/v1/workspaces/${ws}/destination-connections`, {
      body: { provider: "tiktok" },
    });
    expect({ status: started.status, text: started.text }).toMatchObject({ status: 201 });
    expect(started.body.authorization_url).toStartWith(`${fake.origin}/v2/auth/authorize/?`);
    const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
    expect(authorize.status).toBe(302);
    expect(fake.authorizations[0]).toMatchObject({
      client_key: fake.clientKey,
      redirect_uri: `${s.url}/oauth/callback/tiktok`,
      scope: "user.info.basic,video.publish,video.upload,video.list",
      response_type: "code",
    });
    const callback = await returnFromOAuth(authorize.headers.get("location")!);
    expect({ status: callback.status, text: await callback.text() }).toMatchObject({ status: 200 });
    const done = await s.request("GET", `/v1/workspaces/${ws}/destination-connections/${started.body.id}`);
    expect(done.body).toMatchObject({ status: "completed", error: null });
    destinationId = done.body.destination_id;
    const destination = await s.request("GET", `/v1/workspaces/${ws}/destinations/${destinationId}`);
    expect(destination.body).toMatchObject({
      channel: "tiktok",
      display_name: "Alice TikTok",
      status: "ready",
    });
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /v2/auth/authorize/",
      "POST /v2/oauth/token/",
      "GET /v2/user/info/",
      "POST /v2/post/publish/creator_info/query/",
    ]);
  });
});

describe("publishing to TikTok", () => {
  test(
    "a video: init, awaiting the provider while the check uploads it and TikTok processes it, then " +
      "published once",
    async () => {
      const bytes = mp4(720, 1280, 8, { mdatBytes: 200_000 });
      const asset = await uploadAsset(s, ws, bytes, {
        kind: "video",
        contentType: "video/mp4",
        fileName: "clip.mp4",
      });
      fake.options.processingFetches = 1000;
      const created = await createPost({
        body: ["My first TikTok #herald"],
        media: [asset.id],
        destination_options: { tiktok: { privacy_level: "PUBLIC_TO_EVERYONE", disable_comment: false } },
      });
      expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
      const id = created.body.posts[0].id;
      await s.server.engine.runUntilIdle(); // init, then the check uploads and polls a few times
      expect((await getPost(id)).state).toBe("awaiting-provider");
      const publish = fake.publishes.at(-1)!;
      expect(publish).toMatchObject({ kind: "VIDEO", state: "processing", receivedBytes: bytes.length });
      expect(publish.postInfo).toMatchObject({
        title: "My first TikTok #herald",
        privacy_level: "PUBLIC_TO_EVERYONE",
        disable_comment: false,
        disable_duet: true,
      });
      expect(Buffer.from(publish.bytes).equals(bytes)).toBe(true);

      publish.processingLeft = 0;
      s.clock.advance(TIKTOK_MAX_RECHECK_MS);
      await s.server.engine.runUntilIdle();
      const published = await getPost(id);
      expect(published.state).toBe("published");
      expect(published.receipts).toEqual([
        expect.objectContaining({
          item_index: 0,
          provider_object_id: publish.postId,
          url: `https://www.tiktok.com/@alice.tt/video/${publish.postId}`,
        }),
      ]);
      expect(fake.publishes.filter((p) => p.postInfo.title === "My first TikTok #herald")).toHaveLength(1);
      expect((await outbox({ s } as PostsWorld, id)).map((e) => e.type)).toEqual([
        "post.awaiting-provider",
        "post.published",
      ]);
      fake.options.processingFetches = 0;
    },
  );

  test("photos are pulled by TikTok from Herald's signed download URLs", async () => {
    const asset = await uploadAsset(s, ws, jpeg(32, 24), {
      contentType: "image/jpeg",
      fileName: "photo.jpg",
    });
    const post = await publishNow({ body: ["Two photos"], media: [asset.id], destination_options: PUBLIC });
    expect({ state: post.state, last_error: post.last_error }).toEqual({
      state: "published",
      last_error: null,
    });
    const publish = fake.publishes.at(-1)!;
    expect(publish.kind).toBe("PHOTO");
    expect(publish.sourceInfo.photo_images[0]).toStartWith(`${s.url}/downloads/${asset.id}?`);
    expect(publish.downloads).toEqual([
      expect.objectContaining({ status: 200, contentType: "image/jpeg", bytes: asset.byte_size }),
    ]);
    expect(post.receipts[0]).toMatchObject({
      provider_object_id: publish.postId,
      url: "https://www.tiktok.com/@alice.tt",
    });
  });

  test("an expired access token is refreshed and the post goes out; the rotated refresh token is stored", async () => {
    const asset = await uploadAsset(s, ws, mp4(720, 1280, 4), {
      kind: "video",
      contentType: "video/mp4",
      fileName: "a.mp4",
    });
    for (const round of [1, 2]) {
      fake.expireTokens();
      const post = await publishNow({
        body: [`after expiry ${round}`],
        media: [asset.id],
        destination_options: PUBLIC,
      });
      expect(post.state).toBe("published");
    }
    // The second refresh could only succeed with the refresh token the first one returned.
    const refreshes = fake.tokenRequests.filter((r) => r.grant_type === "refresh_token");
    expect(refreshes).toHaveLength(2);
    expect(refreshes[1]!.refresh_token).not.toBe(refreshes[0]!.refresh_token);
    expect(fake.refreshTokenValid(refreshes[0]!.refresh_token!)).toBe(false);
  });

  test("a privacy level TikTok does not offer the creator fails the post, and nothing is initialised", async () => {
    const asset = await uploadAsset(s, ws, mp4(720, 1280, 4), {
      kind: "video",
      contentType: "video/mp4",
      fileName: "b.mp4",
    });
    fake.options.privacyLevelOptions = ["SELF_ONLY"];
    const inits = fake.publishes.length;
    try {
      const post = await publishNow({
        body: ["not for everyone"],
        media: [asset.id],
        destination_options: PUBLIC,
      });
      expect(post.state).toBe("failed");
      expect(post.last_error.message).toContain("privacy_level PUBLIC_TO_EVERYONE is not one of them");
      expect(fake.publishes.length).toBe(inits);
    } finally {
      fake.options.privacyLevelOptions = [
        "PUBLIC_TO_EVERYONE",
        "MUTUAL_FOLLOW_FRIENDS",
        "FOLLOWER_OF_CREATOR",
        "SELF_ONLY",
      ];
    }
  });
});

describe("refusals before sending", () => {
  test("text alone is a 422 at the body item: TikTok posts media", async () => {
    expectProblem(
      await createPost({ body: ["just words"], destination_options: PUBLIC }),
      422,
      "public_unpublishable",
      ["/posts/0/body/0"],
    );
  });

  test("a PNG photo is a 422 at the media, and a second body item at its place (no threads)", async () => {
    const asset = await uploadAsset(s, ws, png(9, 9));
    const r = await createPost({ body: ["one", "two"], media: [asset.id], destination_options: PUBLIC });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/body/1", "/posts/0/media/0"]);
  });

  test("a post without a privacy level is refused: TikTok forbids choosing one for the user", async () => {
    const asset = await uploadAsset(s, ws, mp4(720, 1280, 4), {
      kind: "video",
      contentType: "video/mp4",
      fileName: "c.mp4",
    });
    const r = await createPost({ body: ["who sees this?"], media: [asset.id] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/destination_options/tiktok/privacy_level"]);
    expect(r.body.errors[0].detail).toContain("privacy_level");
  });

  test("options: an unknown privacy level and unknown fields fail the schema; branded content cannot be private", async () => {
    const schema = await createPost({
      body: ["x"],
      destination_options: { tiktok: { privacy_level: "FRIENDS", auto_add_music: true } },
    });
    expectProblem(schema, 400, "public_invalid_request");
    expect(schema.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(
      [
        "/posts/0/destination_options/tiktok/auto_add_music",
        "/posts/0/destination_options/tiktok/privacy_level",
      ].sort(),
    );
    const branded = await createPost({
      body: ["x"],
      destination_options: { tiktok: { privacy_level: "SELF_ONLY", brand_content_toggle: true } },
    });
    expectProblem(branded, 400, "public_invalid_request", [
      "/posts/0/destination_options/tiktok/privacy_level",
    ]);
  });
});
