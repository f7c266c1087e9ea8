// Analytics of Facebook Pages and Instagram through the real server and the graph.facebook.com fake:
// both connected with Facebook Login, a group published, counts set on the fake, the analytics-refresh
// job run ten minutes later, and the group's numbers and coverage as the API serves them (coverage
// counts only the metrics each network offers for the post). Also: a Page under 100 likes reports its
// counts only, an Instagram media with too few viewers its likes and comments only, a deleted Facebook
// post is missing, a throttled Instagram keeps the post pending until Meta's estimate, and a dead Page
// token asks for reauthorization.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uploadAsset } from "../assets/helpers.ts";
import { jpeg } from "../assets/samples.ts";
import { startFacebookFake, type FacebookFake } from "../fakes/facebook.ts";
import { bucHeader } from "../fakes/meta.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { idem } from "../posts/helpers.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

const MINUTE = 60_000;
const LABS = "101000000000002";

let s: TestServer;
let fake: FacebookFake;
let ws: string;
/** Destination ids: "facebook" (Herald Café), "facebook-labs" (Herald Labs), "instagram" (herald.cafe). */
const dest: Record<string, string> = {};
let n = 0;

beforeAll(async () => {
  fake = await startFacebookFake({ mediaProcessingPolls: 0, reelProcessingPolls: 0 });
  s = await startTestServer({
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      HERALD_FACEBOOK_CLIENT_ID: fake.app.clientId,
      HERALD_FACEBOOK_CLIENT_SECRET: fake.app.clientSecret,
      HERALD_FACEBOOK_API_BASE: fake.origin,
      HERALD_FACEBOOK_AUTH_BASE: fake.origin,
      HERALD_INSTAGRAM_CLIENT_ID: fake.app.clientId,
      HERALD_INSTAGRAM_CLIENT_SECRET: fake.app.clientSecret,
      HERALD_INSTAGRAM_API_BASE: fake.origin,
      HERALD_INSTAGRAM_AUTH_BASE: fake.origin,
    },
  });
  ws = s.owner.workspaceId;
  for (const provider of ["facebook", "instagram"]) await connect(provider);
  const listed = await s.request("GET", `/v1/workspaces/${ws}/destinations`);
  for (const d of listed.body.data) {
    if (d.channel === "facebook" && d.display_name === "Herald Café") dest.facebook = d.id;
    if (d.channel === "facebook" && d.display_name === "Herald Labs") dest["facebook-labs"] = d.id;
    if (d.channel === "instagram" && d.display_name === "Herald Café") dest.instagram = d.id;
  }
  expect(Object.keys(dest).sort()).toEqual(["facebook", "facebook-labs", "instagram"]);
});
afterAll(async () => {
  await s.stop();
  await fake.stop();
});

/** Connects a network through the API: the Login dialog on the fake (auto-approved), back to the callback. */
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

/** Publishes one group now: `text` on each destination (Instagram with a photo); post ids by key. */
async function publishGroup(text: string, keys: string[]) {
  const group = `meta-${++n}`;
  const posts = [];
  for (const key of keys) {
    if (key !== "instagram") posts.push({ destination_id: dest[key], body: [text] });
    else {
      const asset = await uploadAsset(s, ws, jpeg(40, 30), { contentType: "image/jpeg", fileName: "p.jpg" });
      posts.push({ destination_id: dest[key], body: [text], media: [asset.id] });
    }
  }
  const r = await s.request("POST", `/v1/workspaces/${ws}/posts`, {
    headers: idem(),
    body: { when: "now", confirmed: true, group, posts },
  });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 202 });
  await s.server.engine.runUntilIdle();
  const ids: Record<string, string> = {};
  keys.forEach((key, i) => (ids[key] = r.body.posts[i].id));
  for (const id of Object.values(ids)) {
    const post = await s.request("GET", `/v1/workspaces/${ws}/posts/${id}`);
    expect(post.body.state).toBe("published");
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
const facebookPost = (text: string) => fake.posts.find((p) => p.message === text)!;
const instagramMedia = (text: string) => fake.igPosts.find((p) => p.caption === text)!;

describe("Facebook", () => {
  test(
    "counts and insights: views, impressions, comments, reactions, shares, link clicks fetched; saves " +
      "not offered",
    async () => {
      const { group, ids } = await publishGroup("Facebook numbers", ["facebook"]);
      facebookPost("Facebook numbers").counts = {
        comments: 4,
        shares: 3,
        reactions: { like: 20, love: 5 },
        mediaViews: 1500,
        uniqueMediaViews: 1100,
        clicks: { "link clicks": 9, "other clicks": 40 },
      };
      await readLater();
      const body = await analytics(group);
      expect(postOf(body, ids.facebook!)).toMatchObject({
        channel: "facebook",
        state: "fresh",
        last_error: null,
        metrics: {
          views: 1500,
          impressions: 1100,
          comments: 4,
          reactions: 25,
          shares: 3,
          saves: 0,
          link_clicks: 9,
        },
      });
      expect(fetchedPosts(body)).toEqual({
        views: 1,
        impressions: 1,
        comments: 1,
        reactions: 1,
        shares: 1,
        saves: 0,
        link_clicks: 1,
      });
    },
  );

  test("a Page under 100 likes has no insights: comments, reactions and shares only", async () => {
    fake.pages.find((p) => p.id === LABS)!.likes = 40;
    const { group, ids } = await publishGroup("Labs numbers", ["facebook-labs"]);
    facebookPost("Labs numbers").counts = { comments: 2, shares: 1, reactions: { wow: 3 }, mediaViews: 70 };
    await readLater();
    const body = await analytics(group);
    expect(postOf(body, ids["facebook-labs"]!)).toMatchObject({
      state: "fresh",
      metrics: { views: 0, impressions: 0, comments: 2, reactions: 3, shares: 1, saves: 0, link_clicks: 0 },
    });
    expect(fetchedPosts(body)).toEqual({
      views: 0,
      impressions: 0,
      comments: 1,
      reactions: 1,
      shares: 1,
      saves: 0,
      link_clicks: 0,
    });
  });

  test("a post deleted on Facebook is reported missing", async () => {
    const { group, ids } = await publishGroup("Facebook deleted", ["facebook"]);
    fake.posts = fake.posts.filter((p) => p.message !== "Facebook deleted");
    await readLater();
    expect(postOf(await analytics(group), ids.facebook!)).toMatchObject({
      state: "pending",
      last_error: { code: "provider_post_missing" },
    });
  });
});

describe("Instagram", () => {
  test("insights: views, reach as impressions, comments, likes, shares, saves fetched; link clicks not offered", async () => {
    const { group, ids } = await publishGroup("Instagram numbers", ["instagram"]);
    instagramMedia("Instagram numbers").counts = {
      views: 2000,
      reach: 1300,
      likes: 150,
      comments: 12,
      shares: 8,
      saved: 30,
    };
    await readLater();
    const body = await analytics(group);
    expect(postOf(body, ids.instagram!)).toMatchObject({
      channel: "instagram",
      state: "fresh",
      metrics: {
        views: 2000,
        impressions: 1300,
        comments: 12,
        reactions: 150,
        shares: 8,
        saves: 30,
        link_clicks: 0,
      },
    });
    expect(fetchedPosts(body)).toEqual({
      views: 1,
      impressions: 1,
      comments: 1,
      reactions: 1,
      shares: 1,
      saves: 1,
      link_clicks: 0,
    });
  });

  test('"Not enough viewers": the media\'s likes and comments only, and the destination stays connected', async () => {
    const { group, ids } = await publishGroup("Instagram few viewers", ["instagram"]);
    Object.assign(instagramMedia("Instagram few viewers"), {
      insights: "not_enough_viewers",
      counts: { views: 5, reach: 4, likes: 2, comments: 1 },
    });
    await readLater();
    const body = await analytics(group);
    expect(postOf(body, ids.instagram!)).toMatchObject({
      state: "fresh",
      metrics: { views: 0, impressions: 0, comments: 1, reactions: 2, shares: 0, saves: 0 },
    });
    expect(fetchedPosts(body)).toMatchObject({ views: 0, comments: 1, reactions: 1, saves: 0 });
    const destination = await s.request("GET", `/v1/workspaces/${ws}/destinations/${dest.instagram}`);
    expect(destination.body.status).toBe("ready");
  });

  test("a throttled read leaves the post pending with provider_rate_limited until Meta's estimate", async () => {
    const { group, ids } = await publishGroup("Instagram limited", ["instagram"]);
    s.clock.advance(10 * MINUTE);
    fake.failNext(1, { status: 429, path: "/insights", headers: bucHeader(45) });
    await s.server.scheduler.runNow("analytics-refresh");
    const post = postOf(await analytics(group), ids.instagram!);
    expect(post).toMatchObject({ state: "pending", last_error: { code: "provider_rate_limited" } });
    expect(Date.parse(post.next_automatic_refresh_at)).toBeGreaterThanOrEqual(s.clock.now() + 45 * MINUTE);
  });
});

describe("one group on both networks", () => {
  test("totals add up what each network reported; coverage counts each metric's reporters", async () => {
    const text = "on Facebook and Instagram";
    const { group } = await publishGroup(text, ["facebook", "instagram"]);
    facebookPost(text).counts = {
      comments: 1,
      reactions: { like: 4 },
      mediaViews: 300,
      uniqueMediaViews: 200,
    };
    instagramMedia(text).counts = { views: 500, reach: 400, likes: 6, comments: 2, saved: 3 };
    await readLater();
    const body = await analytics(group);
    expect(body.posts.map((p: any) => [p.channel, p.state]).sort()).toEqual([
      ["facebook", "fresh"],
      ["instagram", "fresh"],
    ]);
    expect(body.totals.views).toEqual({
      value: 800,
      coverage: { total_posts: 2, fetched_posts: 2, failed_posts: 0 },
    });
    expect(body.totals.impressions.value).toBe(600);
    expect(body.totals.reactions.value).toBe(10);
    // Nobody shared the Facebook post (Graph leaves `shares` out); Instagram's shares insight is 0.
    expect(body.totals.shares.coverage.fetched_posts).toBe(1);
    expect(body.totals.saves.coverage.fetched_posts).toBe(1); // Instagram's saved only
    expect(body.totals.link_clicks.coverage.fetched_posts).toBe(0); // no link clicked on Facebook
  });

  test("a dead Page token: the read records destination_reauthorization_required", async () => {
    const { group, ids } = await publishGroup("before the token died", ["facebook"]);
    fake.revokeTokens();
    await readLater();
    expect(postOf(await analytics(group), ids.facebook!)).toMatchObject({
      state: "pending",
      last_error: { code: "destination_reauthorization_required" },
    });
  });
});
