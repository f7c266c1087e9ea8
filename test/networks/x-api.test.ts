// X through the real server: connecting with OAuth 2.0 + PKCE (authorize on the fake, back to the
// callback), the 422 when Herald's X app is not configured, Create Post → engine → a published
// thread with x.com receipts, an expired token refreshed (and the rotated refresh token stored),
// an image with alt text and a video (processed inline, or awaiting the provider until a later
// check), and validation refusals with their JSON pointers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createProviderRegistry, type ProviderRegistry } from "../../src/providers/registry.ts";
import { uploadAsset } from "../assets/helpers.ts";
import { mp4, png } from "../assets/samples.ts";
import { startXFake, type XFake, xFakeEnv } from "../fakes/x.ts";
import { expectProblem } from "../helpers/problems.ts";
import { apiPosting } from "./support.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { outbox } from "../posts/engine-helpers.ts";
import type { PostsWorld } from "../posts/helpers.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

let s: TestServer;
let fake: XFake;
let ws: string;

let destinationId: string;

const api = apiPosting("x", () => ({ s, ws }));
const createPost = (post: Record<string, unknown>, when = "now") => api.createPost(destinationId, post, when);
const getPost = api.getPost;
const publishNow = (post: Record<string, unknown>) => api.publishNow(destinationId, post);

beforeAll(async () => {
  fake = await startXFake({ processingPolls: 0 });
  s = await startTestServer({
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      ...xFakeEnv(fake),
    },
  });
  ws = s.owner.workspaceId;
  // The app's registered callback: Herald's return page, known once the server has its port.
  fake.redirectUris.push(`${s.url}/oauth/callback/x`);
});
afterAll(async () => {
  await s.stop();
  await fake.stop();
});

describe("connecting X", () => {
  test("OAuth 2.0 + PKCE through the API: authorize on X, back to the callback, a destination for the user", async () => {
    const started = await s.request("POST", `/v1/workspaces/${ws}/destination-connections`, {
      body: { provider: "x" },
    });
    expect({ status: started.status, text: started.text }).toMatchObject({ status: 201 });
    expect(started.body.authorization_url).toStartWith(`${fake.origin}/i/oauth2/authorize?`);
    const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
    expect(authorize.status).toBe(302);
    expect(fake.authorizations[0]).toMatchObject({
      clientId: fake.clientId,
      redirectUri: `${s.url}/oauth/callback/x`,
      scope: "tweet.read tweet.write users.read offline.access media.write",
    });
    const callback = await returnFromOAuth(authorize.headers.get("location")!);
    expect({ status: callback.status, text: await callback.text() }).toMatchObject({ status: 200 });
    const done = await s.request("GET", `/v1/workspaces/${ws}/destination-connections/${started.body.id}`);
    expect(done.body).toMatchObject({ status: "completed", error: null });
    destinationId = done.body.destination_id;
    const destination = await s.request("GET", `/v1/workspaces/${ws}/destinations/${destinationId}`);
    expect(destination.body).toMatchObject({ channel: "x", display_name: "Herald Dev", status: "ready" });
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /i/oauth2/authorize",
      "POST /2/oauth2/token",
      "GET /2/users/me",
    ]);
    expect(fake.grants.map((g) => g.grantType)).toEqual(["authorization_code"]);
  });
});

describe("publishing to X", () => {
  test("a three-item thread is published, each item replying to the previous one, with x.com receipts", async () => {
    const post = await publishNow({ body: ["one", "two", "three"] });
    expect({ state: post.state, last_error: post.last_error }).toEqual({
      state: "published",
      last_error: null,
    });
    const tweets = fake.tweets.slice(-3);
    expect(tweets.map((t) => [t.text, t.replyTo])).toEqual([
      ["one", null],
      ["two", tweets[0]!.id],
      ["three", tweets[1]!.id],
    ]);
    expect(post.receipts.map((r: any) => [r.item_index, r.provider_object_id, r.url])).toEqual(
      tweets.map((t, i) => [i, t.id, `https://x.com/herald_dev/status/${t.id}`]),
    );
  });

  test("an expired access token is refreshed once and the post goes out; the rotated refresh token is stored", async () => {
    for (const round of [1, 2]) {
      fake.expireAccessTokens();
      const post = await publishNow({ body: [`after expiry ${round}`] });
      expect(post.state).toBe("published");
      expect(fake.tweets.at(-1)!.text).toBe(`after expiry ${round}`);
    }
    // The second refresh could only succeed with the refresh token the first one returned.
    const refreshes = fake.grants.filter((g) => g.grantType === "refresh_token");
    expect(refreshes).toHaveLength(2);
    expect(fake.refreshTokenValid(refreshes[0]!.refreshToken!)).toBe(false);
    expect(refreshes[1]!.refreshToken).not.toBe(refreshes[0]!.refreshToken);
  });

  test("duplicate content is refused by X: the post fails without an automatic retry", async () => {
    expect((await publishNow({ body: ["said once"] })).state).toBe("published");
    const before = fake.requests.filter((r) => r.path === "/2/tweets").length;
    const again = await publishNow({ body: ["said once"] });
    expect(again.state).toBe("failed");
    expect(again.last_error.message).toContain("duplicate content");
    s.clock.advance(3_600_000);
    await s.server.engine.runUntilIdle();
    expect(fake.requests.filter((r) => r.path === "/2/tweets").length).toBe(before + 1);
  });
});

describe("media through the API", () => {
  let original: ProviderRegistry;
  beforeAll(() => {
    // The inline processing polls pause a second each in production; the same registry at a test pace.
    original = s.herald.providers;
    s.herald.providers = createProviderRegistry({
      fetch,
      clock: s.clock,
      timeoutMs: 5000,
      settings: s.herald.config.networks,
      pollIntervalMs: 10,
      maxPolls: 2,
    });
  });
  afterAll(() => {
    s.herald.providers = original;
  });

  test("an image is uploaded with the alt text from destination_options.x", async () => {
    const bytes = png(64, 48);
    const asset = await uploadAsset(s, ws, bytes);
    const post = await publishNow({
      body: ["a picture"],
      media: [asset.id],
      destination_options: { x: { alt_text_by_asset_id: { [asset.id]: "a grey rectangle" } } },
    });
    expect(post.state).toBe("published");
    const m = fake.media.at(-1)!;
    expect(m).toMatchObject({ category: "tweet_image", mediaType: "image/png", altText: "a grey rectangle" });
    expect(Buffer.from(m.bytes!).equals(bytes)).toBe(true);
    expect(fake.tweets.at(-1)!.mediaIds).toEqual([m.id]);
    expect(post.receipts[0].url).toBe(`https://x.com/herald_dev/status/${fake.tweets.at(-1)!.id}`);
  });

  test("a video processed within the inline polls is posted in one run", async () => {
    fake.processingPolls = 2;
    const bytes = mp4(640, 360, 3);
    const asset = await uploadAsset(s, ws, bytes, {
      kind: "video",
      contentType: "video/mp4",
      fileName: "clip.mp4",
    });
    const post = await publishNow({ body: ["a clip"], media: [asset.id] });
    expect(post.state).toBe("published");
    const m = fake.media.at(-1)!;
    expect(m).toMatchObject({ category: "tweet_video", state: "succeeded" });
    expect(Buffer.from(m.bytes!).equals(bytes)).toBe(true);
  });

  test("a video still processing awaits the provider, and a later check posts it once", async () => {
    fake.processingPolls = 5;
    const asset = await uploadAsset(s, ws, mp4(1280, 720, 4), {
      kind: "video",
      contentType: "video/mp4",
      fileName: "long.mp4",
    });
    const created = await createPost({ body: ["a longer clip"], media: [asset.id] });
    const id = created.body.posts[0].id;
    await s.server.engine.runUntilIdle();
    expect((await getPost(id)).state).toBe("awaiting-provider");
    expect(fake.tweets.some((t) => t.text === "a longer clip")).toBe(false);

    for (let check = 0; check < 5 && (await getPost(id)).state !== "published"; check++) {
      s.clock.advance(60_000);
      await s.server.engine.runUntilIdle();
    }
    const post = await getPost(id);
    expect(post.state).toBe("published");
    const tweets = fake.tweets.filter((t) => t.text === "a longer clip");
    expect(tweets).toHaveLength(1);
    expect(tweets[0]!.mediaIds).toEqual([fake.media.at(-1)!.id]);
    const events = (await outbox({ s } as PostsWorld, id)).map((e) => e.type);
    expect(events[0]).toBe("post.awaiting-provider");
    expect(events.at(-1)).toBe("post.published");
  });

  test("five images are refused at the fifth (422)", async () => {
    const assets = [];
    for (let i = 0; i < 5; i++) assets.push(await uploadAsset(s, ws, png(8 + i, 8)));
    const r = await createPost({ body: ["many"], media: assets.map((a) => a.id) });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/media/4"]);
  });
});

describe("refusals before sending", () => {
  test.each([
    ["a URL in a reply", "/posts/0/body/1", ["plain words", "read https://example.com/post"]],
    ["281 characters", "/posts/0/body/0", ["a".repeat(281)]],
    ["141 CJK characters (each counts 2)", "/posts/0/body/0", ["漢".repeat(141)]],
  ])("%s is a 422 at %s", async (_name, pointer, body) => {
    expectProblem(await createPost({ body }), 422, "public_unpublishable", [pointer]);
  });

  test("280 CJK-weighted characters pass (140 × 2)", async () => {
    const r = await createPost({ body: ["漢".repeat(140)] }, "draft");
    expect(r.status).toBe(201);
  });

  test("alt text for an asset that is not attached is refused at its option's pointer", async () => {
    const r = await createPost({
      body: ["x"],
      destination_options: { x: { alt_text_by_asset_id: { ast_missing: "nothing" } } },
    });
    expectProblem(r, 400, "public_invalid_request", [
      "/posts/0/destination_options/x/alt_text_by_asset_id/ast_missing",
    ]);
  });

  test("alt text over 1000 characters and unknown options are refused by the options schema", async () => {
    const asset = await uploadAsset(s, ws, png(9, 9));
    const r = await createPost({
      body: ["x"],
      media: [asset.id],
      destination_options: { x: { alt_text_by_asset_id: { [asset.id]: "a".repeat(1001) }, poll: true } },
    });
    expectProblem(r, 400, "public_invalid_request");
    const pointers = r.body.errors.map((e: { pointer: string }) => e.pointer);
    expect(pointers.sort()).toEqual(
      [
        `/posts/0/destination_options/x/alt_text_by_asset_id/${asset.id}`,
        "/posts/0/destination_options/x/poll",
      ].sort(),
    );
  });
});
