// Instagram (through Facebook Login) through the real server: the 422 naming the variables when
// Herald's Meta app is not configured, connecting (one destination per professional account linked to
// a Page, none for a Page without one; connecting again never duplicates), Create Post → engine →
// containers pulled by the fake from Herald's signed download URLs → media_publish, an Instagram
// carousel, a reel awaiting the provider while its container processes, and validation refusals.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uploadAsset } from "../assets/helpers.ts";
import { jpeg, mp4, png } from "../assets/samples.ts";
import { startFacebookFake, type FacebookFake } from "../fakes/facebook.ts";
import { expectProblem } from "../helpers/problems.ts";
import { apiPosting } from "./support.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { outbox } from "../posts/engine-helpers.ts";
import type { PostsWorld } from "../posts/helpers.ts";
import { INSTAGRAM_PENDING_CHECK_MS } from "../../src/providers/instagram/publish.ts";
import { META_NOT_READY_WAITS } from "../../src/providers/meta/containers.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

let s: TestServer;
let fake: FacebookFake;
let ws: string;

/** Destination ids by account name. */
const destinations: Record<string, string> = {};

const api = apiPosting("instagram", () => ({ s, ws }));
const createPost = (post: Record<string, unknown>, destinationId = destinations["Herald Café"]!) =>
  api.createPost(destinationId, post);
const getPost = api.getPost;

beforeAll(async () => {
  fake = await startFacebookFake({ mediaProcessingPolls: 0 });
  s = await startTestServer({
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      HERALD_INSTAGRAM_CLIENT_ID: fake.app.clientId,
      HERALD_INSTAGRAM_CLIENT_SECRET: fake.app.clientSecret,
      HERALD_INSTAGRAM_API_BASE: fake.origin,
      HERALD_INSTAGRAM_AUTH_BASE: fake.origin,
    },
  });
  ws = s.owner.workspaceId;
});
afterAll(async () => {
  await s.stop();
  await fake.stop();
});

async function connectInstagram() {
  const started = await s.request("POST", `/v1/workspaces/${ws}/destination-connections`, {
    body: { provider: "instagram" },
  });
  expect({ status: started.status, text: started.text }).toMatchObject({ status: 201 });
  expect(started.body.authorization_url).toStartWith(`${fake.origin}/v25.0/dialog/oauth?`);
  const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
  expect(authorize.status).toBe(302);
  const callback = await returnFromOAuth(authorize.headers.get("location")!);
  expect({ status: callback.status, text: await callback.text() }).toMatchObject({ status: 200 });
  const done = await s.request("GET", `/v1/workspaces/${ws}/destination-connections/${started.body.id}`);
  expect(done.body).toMatchObject({ status: "completed", error: null });
  return done.body;
}

async function instagramDestinations() {
  const listed = await s.request("GET", `/v1/workspaces/${ws}/destinations`);
  return listed.body.data.filter((d: any) => d.channel === "instagram");
}

async function photoAsset(width = 40, height = 30) {
  return uploadAsset(s, ws, jpeg(width, height), { contentType: "image/jpeg", fileName: "photo.jpg" });
}

describe("connecting Instagram", () => {
  test("Facebook Login connects each linked professional account (not the Page without one); again, no duplicates", async () => {
    await connectInstagram();
    expect(fake.authorizations[0]).toMatchObject({
      redirect_uri: `${s.url}/oauth/callback/instagram`,
      scope:
        "instagram_basic,instagram_content_publish,instagram_manage_insights,pages_show_list," +
        "pages_read_engagement,business_management,instagram_manage_comments",
    });
    const listed = await instagramDestinations();
    expect(listed.map((d: any) => [d.display_name, d.status]).sort()).toEqual([
      ["Herald Books", "ready"],
      ["Herald Café", "ready"],
    ]);
    for (const d of listed) destinations[d.display_name] = d.id;

    const tokensBefore = new Set(fake.tokens.keys());
    await connectInstagram();
    const again = await instagramDestinations();
    expect(again.map((d: any) => d.id).sort()).toEqual(listed.map((d: any) => d.id).sort());
    // The stored Page tokens were replaced by the new ones.
    fake.revokeTokens((_, value) => tokensBefore.has(value));
    const asset = await photoAsset();
    const created = await createPost({ body: ["after reconnecting"], media: [asset.id] });
    expect(created.status).toBe(202);
    await s.server.engine.runUntilIdle();
    expect((await getPost(created.body.posts[0].id)).state).toBe("published");
  });
});

describe("publishing to Instagram", () => {
  test("a single image is pulled from Herald's signed download URL, published once, with a permalink receipt", async () => {
    const asset = await photoAsset();
    const created = await createPost({
      body: ["Fresh bread #bakery"],
      media: [asset.id],
      destination_options: { instagram: { alt_text_by_asset_id: { [asset.id]: "a loaf on a board" } } },
    });
    expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
    await s.server.engine.runUntilIdle();
    const post = await getPost(created.body.posts[0].id);
    expect(post.state).toBe("published");
    const container = fake.containers.at(-1)!;
    expect(container).toMatchObject({
      mediaType: "IMAGE",
      caption: "Fresh bread #bakery",
      altText: "a loaf on a board",
      download: { status: 200, contentType: "image/jpeg", bytes: asset.byte_size },
    });
    expect(container.mediaUrl).toStartWith(`${s.url}/downloads/${asset.id}?`);
    const stored = fake.igPosts.at(-1)!;
    expect(stored).toMatchObject({
      igId: "17841400000000001",
      containerId: container.id,
      mediaType: "IMAGE",
    });
    expect(post.receipts).toEqual([
      expect.objectContaining({ item_index: 0, provider_object_id: stored.id, url: stored.permalink }),
    ]);
    expect(post.receipts[0].url).toMatch(/^https:\/\/www\.instagram\.com\/p\/\w+\/$/);
  });

  test("an Instagram carousel: two images become one CAROUSEL_ALBUM post", async () => {
    const first = await photoAsset(40, 30);
    const second = await photoAsset(30, 30);
    const created = await createPost(
      { body: ["Two loaves"], media: [first.id, second.id] },
      destinations["Herald Books"],
    );
    expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
    await s.server.engine.runUntilIdle();
    const post = await getPost(created.body.posts[0].id);
    expect(post.state).toBe("published");
    const stored = fake.igPosts.at(-1)!;
    expect(stored).toMatchObject({
      igId: "17841400000000003",
      mediaType: "CAROUSEL_ALBUM",
      caption: "Two loaves",
    });
    const children = fake.containers.filter((c) => stored.children.includes(c.id));
    expect(children.map((c) => [c.isCarouselItem, c.caption, c.download?.bytes])).toEqual([
      [true, null, first.byte_size],
      [true, null, second.byte_size],
    ]);
    expect(post.receipts[0]).toMatchObject({ provider_object_id: stored.id, url: stored.permalink });
  });

  test("a reel awaits the provider while its container processes, then is published once", async () => {
    const asset = await uploadAsset(s, ws, mp4(1080, 1920, 5, { mdatBytes: 20_000 }), {
      kind: "video",
      contentType: "video/mp4",
      fileName: "clip.mp4",
    });
    fake.mediaProcessingPolls = 1000;
    const publishes = () => fake.requests.filter((r) => r.path.endsWith("/media_publish")).length;
    const before = publishes();
    const created = await createPost({ body: ["a clip"], media: [asset.id] });
    expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
    const id = created.body.posts[0].id;
    await s.server.engine.runUntilIdle();
    expect((await getPost(id)).state).toBe("awaiting-provider");
    const container = fake.containers.at(-1)!;
    expect(container).toMatchObject({ mediaType: "REELS", statusCode: "IN_PROGRESS" });
    expect(container.download).toEqual({ status: 200, contentType: "video/mp4", bytes: asset.byte_size });

    fake.mediaProcessingPolls = 0;
    fake.finishProcessing();
    s.clock.advance(INSTAGRAM_PENDING_CHECK_MS + 1000);
    await s.server.engine.runUntilIdle();
    const published = await getPost(id);
    expect(published.state).toBe("published");
    const stored = fake.igPosts.at(-1)!;
    expect(stored).toMatchObject({ containerId: container.id, mediaType: "VIDEO" });
    expect(published.receipts[0]).toMatchObject({ provider_object_id: stored.id, url: stored.permalink });
    expect((await outbox({ s } as PostsWorld, id)).map((e) => e.type)).toEqual([
      "post.awaiting-provider",
      "post.published",
    ]);
    expect(publishes()).toBe(before + 1);
  });
});

describe("Meta's error classes through the engine (meta/errors.ts)", () => {
  const CAFE_IG = "17841400000000001";

  async function withAttempts(id: string) {
    const r = await s.request("GET", `/v1/workspaces/${ws}/posts/${id}?include=attempts`);
    expect(r.status).toBe(200);
    return r.body;
  }

  test("9007/2207027 after FINISHED: waits, awaits the provider, retries the same container, one post", async () => {
    // The first run and the first check each hear "please wait" after every wait; the retry publishes.
    fake.notReadyAfterFinished = 2 * (META_NOT_READY_WAITS + 1) + 1;
    const containersBefore = fake.containers.length;
    const postsBefore = fake.igPosts.length;
    try {
      const asset = await photoAsset();
      const created = await createPost({ body: ["not ready yet"], media: [asset.id] });
      expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
      const id = created.body.posts[0].id;
      await s.server.engine.runUntilIdle();
      expect((await getPost(id)).state).toBe("awaiting-provider");

      s.clock.advance(INSTAGRAM_PENDING_CHECK_MS + 1000);
      await s.server.engine.runUntilIdle();
      const retrying = await getPost(id);
      expect(retrying.state).toBe("ready");
      expect(retrying.last_error).toMatchObject({ code: "provider_unavailable", user_action: "retry" });
      expect(retrying.last_error.message).toContain("not ready for publishing");

      s.clock.advance(5 * 60_000);
      await s.server.engine.runUntilIdle();
      const published = await getPost(id);
      expect(published.state).toBe("published");
      expect(fake.containers.length - containersBefore).toBe(1);
      expect(fake.igPosts.length - postsBefore).toBe(1);
      const stored = fake.igPosts.at(-1)!;
      expect(stored.containerId).toBe(fake.containers.at(-1)!.id);
      expect(published.receipts[0]).toMatchObject({ provider_object_id: stored.id, url: stored.permalink });
    } finally {
      fake.notReadyAfterFinished = 0;
    }
  });

  test("4/2207051 (suspected spam): failed once with Meta's message, never retried automatically", async () => {
    fake.restrictedForSpam.add(CAFE_IG);
    try {
      const calls = fake.publishCalls;
      const asset = await photoAsset();
      const created = await createPost({ body: ["buy now"], media: [asset.id] });
      expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
      const id = created.body.posts[0].id;
      await s.server.engine.runUntilIdle();
      const failed = await getPost(id);
      expect(failed.state).toBe("failed");
      expect(failed.last_error).toMatchObject({
        code: "provider_rejected",
        retryable: false,
        retry_safety: "not_retryable",
        user_action: "check_account",
      });
      expect(failed.last_error.message).toContain(
        "We restrict certain activity to protect our community. Tell us if you think we made a mistake.",
      );
      // Hours later nothing was sent again (it used to be retried as throttling for hours).
      s.clock.advance(6 * 60 * 60_000);
      await s.server.engine.runUntilIdle();
      const later = await withAttempts(id);
      expect(later.state).toBe("failed");
      expect(later.attempts).toHaveLength(1);
      expect(later.attempts[0].provider).toMatchObject({ error_code: "4", subcode: "2207051" });
      expect(fake.publishCalls - calls).toBe(1);
    } finally {
      fake.restrictedForSpam.clear();
    }
  });
});

describe("validation", () => {
  test("text alone is a 422 pointing at the body item", async () => {
    const r = await createPost({ body: ["just words"] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/body/0"]);
  });

  test("a PNG is refused at its media pointer (Instagram takes JPEG)", async () => {
    const asset = await uploadAsset(s, ws, png(40, 30), { contentType: "image/png", fileName: "a.png" });
    const r = await createPost({ body: ["x"], media: [asset.id] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/media/0"]);
  });

  test("a caption over 2,200 characters is refused at the body item", async () => {
    const asset = await photoAsset();
    const r = await createPost({ body: ["a".repeat(2201)], media: [asset.id] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/body/0"]);
  });

  test("alt text for an asset that is not attached is refused at its option's pointer", async () => {
    const asset = await photoAsset();
    const r = await createPost({
      body: ["x"],
      media: [asset.id],
      destination_options: { instagram: { alt_text_by_asset_id: { ast_missing: "nothing" } } },
    });
    expectProblem(r, 400, "public_invalid_request", [
      "/posts/0/destination_options/instagram/alt_text_by_asset_id/ast_missing",
    ]);
  });
});
