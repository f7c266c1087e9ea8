// Analytics of TikTok and YouTube through the real server and their fakes: each network connected with
// OAuth, a video published, counts set on the fakes, the analytics-refresh job run ten minutes later,
// and the group's numbers and coverage as the API serves them (coverage counts only the metrics each
// network offers: views, comments, reactions and shares on TikTok; views, comments and reactions on
// YouTube). Also: a private TikTok post and a TikTok photo post are unsupported, an expired TikTok
// token is renewed (rotating refresh token) before reading again, a spent YouTube quota keeps the
// post pending until midnight Pacific, and one group on both networks adds up.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { nextPacificMidnight } from "../../src/providers/youtube/api.ts";
import { uploadAsset } from "../assets/helpers.ts";
import { jpeg, mp4 } from "../assets/samples.ts";
import { startTikTokFake, type TikTokFake } from "../fakes/tiktok.ts";
import { startYouTubeFake, type YouTubeFake } from "../fakes/youtube.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { idem } from "../posts/helpers.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

const MINUTE = 60_000;

let s: TestServer;
let tiktok: TikTokFake;
let youtube: YouTubeFake;
let ws: string;
/** Destination ids by channel. */
const dest: Record<string, string> = {};
/** Asset ids: a short video and a photo. */
let videoId = "";
let photoId = "";
let n = 0;

beforeAll(async () => {
  const clock = new ManualClock(Date.parse("2026-03-01T12:00:00.000Z"));
  [tiktok, youtube] = await Promise.all([
    startTikTokFake({ processingFetches: 0 }),
    startYouTubeFake({ now: () => clock.now(), processingPolls: 0 }),
  ]);
  s = await startTestServer({
    clock,
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      HERALD_TIKTOK_CLIENT_ID: tiktok.clientKey,
      HERALD_TIKTOK_CLIENT_SECRET: tiktok.clientSecret,
      HERALD_TIKTOK_API_BASE: tiktok.origin,
      HERALD_TIKTOK_AUTH_BASE: tiktok.origin,
      HERALD_YOUTUBE_CLIENT_ID: youtube.clientId,
      HERALD_YOUTUBE_CLIENT_SECRET: youtube.clientSecret,
      HERALD_YOUTUBE_API_BASE: youtube.origin,
      HERALD_YOUTUBE_AUTH_BASE: youtube.origin,
      HERALD_YOUTUBE_TOKEN_BASE: youtube.origin,
    },
  });
  ws = s.owner.workspaceId;
  for (const provider of ["tiktok", "youtube"]) await connect(provider);
  const listed = await s.request("GET", `/v1/workspaces/${ws}/destinations`);
  for (const d of listed.body.data) dest[d.channel] = d.id;
  expect(Object.keys(dest).sort()).toEqual(["tiktok", "youtube"]);
  videoId = (
    await uploadAsset(s, ws, mp4(720, 1280, 4, { mdatBytes: 50_000 }), {
      kind: "video",
      contentType: "video/mp4",
      fileName: "clip.mp4",
    })
  ).id;
  photoId = (await uploadAsset(s, ws, jpeg(32, 24), { contentType: "image/jpeg", fileName: "photo.jpg" })).id;
});
afterAll(async () => {
  await s.stop();
  await Promise.all([tiktok.stop(), youtube.stop()]);
});

/** Connects a network through the API: authorize on the fake (auto-approved), back to the callback. */
async function connect(provider: string): Promise<void> {
  const started = await s.request("POST", `/v1/workspaces/${ws}/destination-connections`, {
    body: { provider },
  });
  expect({ status: started.status, text: started.text }).toMatchObject({ status: 201 });
  const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
  expect(authorize.status).toBe(302);
  const callback = await returnFromOAuth(authorize.headers.get("location")!);
  expect({ status: callback.status, text: await callback.text() }).toMatchObject({ status: 200 });
  const done = await s.request("GET", `/v1/workspaces/${ws}/destination-connections/${started.body.id}`);
  expect(done.body).toMatchObject({ status: "completed", error: null });
}

/** What each channel's post of a group carries: the video, and TikTok's privacy level. */
function postFor(channel: string, text: string, over: { privacy?: string; media?: string } = {}) {
  return {
    destination_id: dest[channel],
    body: [text],
    media: [over.media ?? videoId],
    ...(channel === "tiktok"
      ? { destination_options: { tiktok: { privacy_level: over.privacy ?? "PUBLIC_TO_EVERYONE" } } }
      : {}),
  };
}

/** Publishes one group now; the group and its post ids by channel. */
async function publishGroup(
  text: string,
  channels: string[],
  over: { privacy?: string; media?: string } = {},
) {
  const group = `ty-${++n}`;
  const r = await s.request("POST", `/v1/workspaces/${ws}/posts`, {
    headers: idem(),
    body: { when: "now", confirmed: true, group, posts: channels.map((c) => postFor(c, text, over)) },
  });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 202 });
  await s.server.engine.runUntilIdle();
  const ids: Record<string, string> = {};
  channels.forEach((channel, i) => (ids[channel] = r.body.posts[i].id));
  for (const id of Object.values(ids)) {
    const post = await s.request("GET", `/v1/workspaces/${ws}/posts/${id}`);
    expect({ state: post.body.state, last_error: post.body.last_error }).toEqual({
      state: "published",
      last_error: null,
    });
  }
  return { group, ids };
}

const analytics = async (group: string) => {
  const r = await s.request("GET", `/v1/workspaces/${ws}/analytics/post-groups/${group}`);
  expect(r.status).toBe(200);
  return r.body;
};
/** Ten minutes on (the first read is due), then one pass of the job. */
async function readLater(): Promise<void> {
  s.clock.advance(10 * MINUTE);
  await s.server.scheduler.runNow("analytics-refresh");
}
const postOf = (body: any, id: string) => body.posts.find((p: any) => p.post === id);
const fetchedPosts = (body: any) =>
  Object.fromEntries(
    Object.entries(body.totals).map(([m, t]: [string, any]) => [m, t.coverage.fetched_posts]),
  );
/** The TikTok post the fake holds for a title (a video's title is its text). */
const tiktokPost = (text: string) =>
  tiktok.publishes.find((p) => p.postInfo.title === text || p.postInfo.description === text)!;

describe("TikTok", () => {
  test("views, comments, reactions, shares fetched; impressions, saves, link clicks not offered", async () => {
    const { group, ids } = await publishGroup("TikTok numbers", ["tiktok"]);
    tiktokPost("TikTok numbers").counts = { views: 5000, likes: 320, comments: 41, shares: 12 };
    const queriesBefore = tiktok.videoQueries.length;
    await readLater();
    const body = await analytics(group);
    expect(postOf(body, ids.tiktok!)).toMatchObject({
      channel: "tiktok",
      state: "fresh",
      last_error: null,
      metrics: {
        views: 5000,
        impressions: 0,
        comments: 41,
        reactions: 320,
        shares: 12,
        saves: 0,
        link_clicks: 0,
      },
    });
    expect(fetchedPosts(body)).toEqual({
      views: 1,
      impressions: 0,
      comments: 1,
      reactions: 1,
      shares: 1,
      saves: 0,
      link_clicks: 0,
    });
    expect(tiktok.videoQueries.slice(queriesBefore)).toEqual([
      {
        ids: [tiktokPost("TikTok numbers").postId!],
        fields: ["id", "view_count", "like_count", "comment_count", "share_count"],
      },
    ]);
  });

  test("a private (SELF_ONLY) post and a photo post are unsupported, never read again", async () => {
    const { group: privateGroup, ids: privateIds } = await publishGroup("TikTok private", ["tiktok"], {
      privacy: "SELF_ONLY",
    });
    const { group: photoGroup, ids: photoIds } = await publishGroup("TikTok photo", ["tiktok"], {
      media: photoId,
    });
    expect(tiktokPost("TikTok photo").kind).toBe("PHOTO");
    await readLater();
    for (const [group, id] of [
      [privateGroup, privateIds.tiktok!],
      [photoGroup, photoIds.tiktok!],
    ] as const)
      expect(postOf(await analytics(group), id)).toMatchObject({
        state: "unsupported",
        next_automatic_refresh_at: null,
        last_error: null,
      });
  });

  test("an expired token is renewed (the rotated refresh token stored) and the read retried", async () => {
    const { group, ids } = await publishGroup("TikTok renewed", ["tiktok"]);
    tiktokPost("TikTok renewed").counts = { views: 77 };
    tiktok.expireTokens();
    const refreshesBefore = tiktok.tokenRequests.filter((r) => r.grant_type === "refresh_token").length;
    await readLater();
    expect(tiktok.tokenRequests.filter((r) => r.grant_type === "refresh_token").length).toBe(
      refreshesBefore + 1,
    );
    expect(postOf(await analytics(group), ids.tiktok!)).toMatchObject({
      state: "fresh",
      metrics: { views: 77 },
    });
  });
});

describe("YouTube", () => {
  test("views, comments, reactions fetched; impressions and shares (Analytics API) not offered", async () => {
    const { group, ids } = await publishGroup("YouTube numbers", ["youtube"]);
    const video = youtube.videos.find((v) => v.description === "YouTube numbers")!;
    video.counts = { views: 900, likes: 45, favorites: 2, comments: 6 };
    const readsBefore = youtube.statisticsReads.length;
    await readLater();
    const body = await analytics(group);
    expect(postOf(body, ids.youtube!)).toMatchObject({
      channel: "youtube",
      state: "fresh",
      last_error: null,
      metrics: {
        views: 900,
        impressions: 0,
        comments: 6,
        reactions: 45,
        shares: 0,
        saves: 0,
        link_clicks: 0,
      },
    });
    expect(fetchedPosts(body)).toEqual({
      views: 1,
      impressions: 0,
      comments: 1,
      reactions: 1,
      shares: 0,
      saves: 0,
      link_clicks: 0,
    });
    expect(youtube.statisticsReads.slice(readsBefore)).toEqual([[video.id]]);
  });

  test("a spent quota leaves the post pending with provider_rate_limited until midnight Pacific", async () => {
    const { group, ids } = await publishGroup("YouTube quota", ["youtube"]);
    const units = youtube.quota.unitsLeft;
    youtube.quota.unitsLeft = 0;
    try {
      await readLater();
    } finally {
      youtube.quota.unitsLeft = units;
    }
    const post = postOf(await analytics(group), ids.youtube!);
    expect(post).toMatchObject({ state: "pending", last_error: { code: "provider_rate_limited" } });
    // quotaExceeded: YouTube's quotas reset at the next midnight in Los Angeles.
    expect(post.next_automatic_refresh_at).toBe(new Date(nextPacificMidnight(s.clock.now())).toISOString());
  });
});

describe("one group on both networks", () => {
  test("totals add up what each network reported; coverage counts each metric's reporters", async () => {
    const text = "both at once";
    const { group } = await publishGroup(text, ["tiktok", "youtube"]);
    tiktokPost(text).counts = { views: 100, likes: 10, comments: 1, shares: 4 };
    youtube.videos.find((v) => v.description === text)!.counts = { views: 200, likes: 20, comments: 2 };
    await readLater();
    const body = await analytics(group);
    expect(body.posts.map((p: any) => [p.channel, p.state]).sort()).toEqual([
      ["tiktok", "fresh"],
      ["youtube", "fresh"],
    ]);
    expect(body.totals.views).toEqual({
      value: 300,
      coverage: { total_posts: 2, fetched_posts: 2, failed_posts: 0 },
    });
    expect(body.totals.reactions.value).toBe(30);
    expect(body.totals.comments.value).toBe(3);
    expect(body.totals.shares).toEqual({
      value: 4,
      coverage: { total_posts: 2, fetched_posts: 1, failed_posts: 0 },
    });
    expect(body.totals.impressions.coverage.fetched_posts).toBe(0);
  });
});
