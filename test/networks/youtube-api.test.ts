// YouTube through the real server: connecting with Google OAuth + PKCE (an account without a channel
// refused), the 422 when Herald's Google app is not configured, Create Post with a video → the engine
// opens the upload session, uploads in chunks inside the status check (an interrupted chunk resumed
// from YouTube's offset), keeps the post awaiting the provider while YouTube processes it, then
// publishes it with a youtube.com/watch receipt; a spent quota deferred to midnight Pacific; an expired
// token renewed; validation refusals with their JSON pointers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { createProviderRegistry, type ProviderRegistry } from "../../src/providers/registry.ts";
import { YOUTUBE_RECHECK_MS } from "../../src/providers/youtube/adapter.ts";
import { uploadAsset } from "../assets/helpers.ts";
import { mp4, png } from "../assets/samples.ts";
import { startYouTubeFake, type YouTubeFake } from "../fakes/youtube.ts";
import { expectProblem } from "../helpers/problems.ts";
import { apiPosting } from "./support.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { outbox } from "../posts/engine-helpers.ts";
import type { PostsWorld } from "../posts/helpers.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

const KIB256 = 256 * 1024;
let s: TestServer;
let fake: YouTubeFake;
let ws: string;
let destinationId: string;
let original: ProviderRegistry;

const api = apiPosting("youtube", () => ({ s, ws }));
const createPost = (post: Record<string, unknown>) => api.createPost(destinationId, post);
const getPost = api.getPost;
const publishNow = (post: Record<string, unknown>) => api.publishNow(destinationId, post);

/** A video asset of about `mdatBytes` bytes (an MP4 Herald inspects: 4 s, 320×240). */
async function videoAsset(mdatBytes = 600_000) {
  const bytes = mp4(320, 240, 4, { mdatBytes });
  const asset = await uploadAsset(s, ws, bytes, {
    kind: "video",
    contentType: "video/mp4",
    fileName: "clip.mp4",
  });
  return { asset, bytes };
}

async function startConnection() {
  const started = await s.request("POST", `/v1/workspaces/${ws}/destination-connections`, {
    body: { provider: "youtube" },
  });
  expect({ status: started.status, text: started.text }).toMatchObject({ status: 201 });
  return started.body;
}

/** Follows the consent page and the callback like a browser; the connection afterwards. */
async function consentAndReturn(connection: { id: string; authorization_url: string }) {
  const authorize = await fetch(connection.authorization_url, { redirect: "manual" });
  expect(authorize.status).toBe(302);
  const callback = await returnFromOAuth(authorize.headers.get("location")!);
  const page = await callback.text();
  const done = await s.request("GET", `/v1/workspaces/${ws}/destination-connections/${connection.id}`);
  return { page, connection: done.body };
}

beforeAll(async () => {
  const clock = new ManualClock(Date.parse("2026-03-01T12:00:00.000Z"));
  fake = await startYouTubeFake({ now: () => clock.now(), processingPolls: 0 });
  s = await startTestServer({
    clock,
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      HERALD_YOUTUBE_CLIENT_ID: fake.clientId,
      HERALD_YOUTUBE_CLIENT_SECRET: fake.clientSecret,
      HERALD_YOUTUBE_API_BASE: fake.origin,
      HERALD_YOUTUBE_AUTH_BASE: fake.origin,
      HERALD_YOUTUBE_TOKEN_BASE: fake.origin,
    },
  });
  ws = s.owner.workspaceId;
  // The same registry at a test pace: 256 KiB chunks (so a video takes several), short inline polls.
  original = s.herald.providers;
  const deps = {
    fetch,
    clock: s.clock,
    timeoutMs: 2000,
    settings: s.herald.config.networks,
    pollIntervalMs: 1,
    maxPolls: 2,
    youtubeChunkBytes: KIB256,
  };
  s.herald.providers = createProviderRegistry(deps);
});
afterAll(async () => {
  s.herald.providers = original;
  await s.stop();
  await fake.stop();
});

describe("connecting YouTube", () => {
  test("a Google account without a channel is refused: the connection fails and says why", async () => {
    const channel = fake.channel;
    fake.channel = null;
    try {
      const { page, connection } = await consentAndReturn(await startConnection());
      expect(page).toContain("has no YouTube channel");
      expect(connection).toMatchObject({ status: "failed", destination_id: null });
      expect(connection.error).toContain("has no YouTube channel");
    } finally {
      fake.channel = channel;
    }
    const listed = await s.request("GET", `/v1/workspaces/${ws}/destinations`);
    expect(listed.body.data.filter((d: any) => d.channel === "youtube")).toEqual([]);
  });

  test("OAuth through the API: consent with PKCE and offline access, then the channel is the destination", async () => {
    const started = await startConnection();
    const url = new URL(started.authorization_url);
    expect(url.origin + url.pathname).toBe(`${fake.origin}/o/oauth2/v2/auth`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      redirect_uri: `${s.url}/oauth/callback/youtube`,
      access_type: "offline",
      prompt: "consent",
      code_challenge_method: "S256",
    });
    const { connection } = await consentAndReturn(started);
    expect(connection).toMatchObject({ status: "completed", error: null });
    destinationId = connection.destination_id;
    const listed = await s.request("GET", `/v1/workspaces/${ws}/destinations/${destinationId}`);
    expect(listed.body).toMatchObject({
      channel: "youtube",
      display_name: "Herald Studio",
      status: "ready",
    });
    // The fake checked the verifier against the challenge before issuing the tokens.
    expect(fake.tokenRequests.at(-1)).toMatchObject({
      grant_type: "authorization_code",
      code_verifier: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
  });
});

describe("publishing to YouTube", () => {
  test("a video: awaiting the provider while YouTube processes it, then published with a watch URL", async () => {
    const { asset, bytes } = await videoAsset();
    fake.processingPolls = 1000;
    const created = await createPost({
      body: ["Launch day\nEverything we shipped this week."],
      media: [asset.id],
      destination_options: { youtube: { privacy_status: "unlisted", tags: ["herald"] } },
    });
    expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
    const id = created.body.posts[0].id;
    await s.server.engine.runUntilIdle(); // opens the session, uploads in the check, polls, then waits
    expect((await getPost(id)).state).toBe("awaiting-provider");
    const video = fake.videos.at(-1)!;
    expect(Buffer.from(video.bytes).equals(bytes)).toBe(true);
    expect(video).toMatchObject({
      title: "Launch day",
      description: "Launch day\nEverything we shipped this week.",
      privacyStatus: "unlisted",
      tags: ["herald"],
    });
    const session = fake.sessions.at(-1)!;
    expect(session.chunks.length).toBe(Math.ceil(bytes.length / KIB256));

    video.pollsLeft = 0;
    s.clock.advance(YOUTUBE_RECHECK_MS + 1000);
    await s.server.engine.runUntilIdle();
    const published = await getPost(id);
    expect(published.state).toBe("published");
    expect(published.receipts).toEqual([
      expect.objectContaining({
        item_index: 0,
        provider_object_id: video.id,
        url: `https://www.youtube.com/watch?v=${video.id}`,
      }),
    ]);
    expect((await outbox({ s } as PostsWorld, id)).map((e) => e.type)).toEqual([
      "post.awaiting-provider",
      "post.published",
    ]);
    expect(fake.videos.filter((v) => v.id === video.id)).toHaveLength(1);
  });

  test("an upload interrupted by a 503 is resumed from YouTube's offset within the check: one video, every byte", async () => {
    const { asset, bytes } = await videoAsset();
    fake.processingPolls = 0;
    const videosBefore = fake.videos.length;
    fake.cutNextChunk({ keep: 100_000, then: 503 });
    const post = await publishNow({ body: ["Resumed"], media: [asset.id] });
    expect(post.state).toBe("published");
    expect(fake.videos.length).toBe(videosBefore + 1);
    const video = fake.videos.at(-1)!;
    expect(Buffer.from(video.bytes).equals(bytes)).toBe(true);
    expect(fake.sessions.at(-1)!.chunks[1]!.start).toBe(100_000);
    expect(post.receipts[0].url).toBe(`https://www.youtube.com/watch?v=${video.id}`);
  });

  test("an expired access token is renewed with the refresh token (kept), and the video goes out", async () => {
    const { asset } = await videoAsset(10_000);
    fake.expireTokens();
    const refreshes = () => fake.tokenRequests.filter((r) => r.grant_type === "refresh_token");
    const before = refreshes().length;
    const post = await publishNow({ body: ["After a refresh"], media: [asset.id] });
    expect(post.state).toBe("published");
    expect(refreshes().length).toBe(before + 1);
    fake.expireTokens();
    expect((await publishNow({ body: ["Again"], media: [asset.id] })).state).toBe("published");
    // Google sent no new refresh token: the first one is used again.
    expect(new Set(refreshes().map((r) => r.refresh_token)).size).toBe(1);
  });

  test("a spent quota defers the post to midnight Pacific; nothing reached YouTube", async () => {
    const { asset } = await videoAsset(10_000);
    fake.quota.insertsLeft = 0;
    const sessions = fake.sessions.length;
    try {
      const post = await publishNow({ body: ["Tomorrow"], media: [asset.id] });
      expect(post.state).toBe("ready");
      expect(post.deferred).toEqual({ reason: "provider_rate_limit", until: "2026-03-02T08:00:00.000Z" });
      expect(post.next_action_at).toBe("2026-03-02T08:00:00.000Z");
      expect(post.last_error.message).toContain("quotaExceeded");
      expect(fake.sessions.length).toBe(sessions);
    } finally {
      fake.quota.insertsLeft = 100;
    }
  });
});

describe("validation", () => {
  test("a text-only post is a 422 pointing at the body item: YouTube needs a video", async () => {
    const r = await createPost({ body: ["Just words"] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/body/0"]);
    expect(r.body.errors[0].detail).toContain("videos only");
  });

  test("an image is refused where the request names it", async () => {
    const image = await uploadAsset(s, ws, png(40, 30), { contentType: "image/png", fileName: "a.png" });
    const r = await createPost({ body: ["A picture"], media: [image.id] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/media/0"]);
  });

  test("< or > in the text is a 422 on the body item", async () => {
    const { asset } = await videoAsset(10_000);
    const r = await createPost({ body: ["Title <3"], media: [asset.id] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/body/0"]);
  });

  test("a second body item is refused where it is: YouTube has no threads", async () => {
    const { asset } = await videoAsset(10_000);
    const r = await createPost({ body: ["one", "two"], media: [asset.id] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/body/1"]);
  });

  test("an unknown privacy status is refused by the options schema", async () => {
    const { asset } = await videoAsset(10_000);
    const r = await createPost({
      body: ["x"],
      media: [asset.id],
      destination_options: { youtube: { privacy_status: "friends" } },
    });
    expectProblem(r, 400, "public_invalid_request");
    expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(
      "/posts/0/destination_options/youtube/privacy_status",
    );
  });

  test("a tag with a comma is a 400 at its pointer", async () => {
    const { asset } = await videoAsset(10_000);
    const r = await createPost({
      body: ["x"],
      media: [asset.id],
      destination_options: { youtube: { tags: ["fine", "a,b"] } },
    });
    expectProblem(r, 400, "public_invalid_request", ["/posts/0/destination_options/youtube/tags/1"]);
  });
});
