// Analytics of X, Threads and LinkedIn through the real server and their fakes: each network connected
// with OAuth, a group published, counts set on the fakes, the analytics-refresh job run ten minutes
// later, and the group's numbers and coverage as the API serves them (coverage counts only the metrics
// each network offers). Also: X reads a whole destination's posts in one lookup and renews an expired
// token before reading again, a rate-limited X keeps the post pending with the reset time, a LinkedIn
// member's posts are unsupported while a page's are read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startLinkedInFake, type LinkedInFake } from "../fakes/linkedin.ts";
import { startThreadsFake, type ThreadsFake } from "../fakes/threads.ts";
import { startXFake, type XFake, xFakeEnv } from "../fakes/x.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { idem } from "../posts/helpers.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let s: TestServer;
let x: XFake;
let threads: ThreadsFake;
let linkedin: LinkedInFake;
let ws: string;
/** Destination ids: "x", "threads", "linkedin-member", "linkedin-page". */
const dest: Record<string, string> = {};
let n = 0;

beforeAll(async () => {
  [x, threads, linkedin] = await Promise.all([
    startXFake({ processingPolls: 0 }),
    startThreadsFake({ mediaProcessingPolls: 0 }),
    startLinkedInFake({ refreshTokens: true }),
  ]);
  s = await startTestServer({
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      ...xFakeEnv(x),
      HERALD_THREADS_CLIENT_ID: threads.app.clientId,
      HERALD_THREADS_CLIENT_SECRET: threads.app.clientSecret,
      HERALD_THREADS_API_BASE: threads.origin,
      HERALD_THREADS_AUTH_BASE: threads.origin,
      HERALD_LINKEDIN_CLIENT_ID: linkedin.clientId,
      HERALD_LINKEDIN_CLIENT_SECRET: linkedin.clientSecret,
      HERALD_LINKEDIN_API_BASE: linkedin.origin,
      HERALD_LINKEDIN_AUTH_BASE: linkedin.origin,
      HERALD_LINKEDIN_TOKEN_BASE: linkedin.origin,
    },
  });
  ws = s.owner.workspaceId;
  x.redirectUris.push(`${s.url}/oauth/callback/x`);
  for (const provider of ["x", "threads", "linkedin"]) await connect(provider);
  const listed = await s.request("GET", `/v1/workspaces/${ws}/destinations`);
  for (const d of listed.body.data) {
    if (d.channel === "x" || d.channel === "threads") dest[d.channel] = d.id;
    if (d.channel === "linkedin" && d.display_name === "Alice Example") dest["linkedin-member"] = d.id;
    if (d.channel === "linkedin" && d.display_name === "Devtestco") dest["linkedin-page"] = d.id;
  }
  expect(Object.keys(dest).sort()).toEqual(["linkedin-member", "linkedin-page", "threads", "x"]);
});
afterAll(async () => {
  await s.stop();
  await Promise.all([x.stop(), threads.stop(), linkedin.stop()]);
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

/** Publishes one group now: `text` on each destination; the group and its post ids by destination key. */
async function publishGroup(text: string, keys: string[]) {
  const group = `xtl-${++n}`;
  const r = await s.request("POST", `/v1/workspaces/${ws}/posts`, {
    headers: idem(),
    body: {
      when: "now",
      confirmed: true,
      group,
      posts: keys.map((key) => ({ destination_id: dest[key], body: [text] })),
    },
  });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 202 });
  await s.server.engine.runUntilIdle();
  const ids: Record<string, string> = {};
  keys.forEach((key, i) => (ids[key] = r.body.posts[i].id));
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

describe("X", () => {
  test("public and non-public numbers; link clicks not offered (X reports them only for posts with a link)", async () => {
    // Herald's X posts carry no URL (the contract), so X never has url_link_clicks for them.
    const { group, ids } = await publishGroup("X numbers", ["x"]);
    x.tweets.find((t) => t.text === "X numbers")!.counts = {
      impressions: 1500,
      nonPublicImpressions: 1400,
      replies: 3,
      likes: 40,
      retweets: 5,
      quotes: 2,
      bookmarks: 6,
      linkClicks: 17,
    };
    await readLater();
    const body = await analytics(group);
    expect(postOf(body, ids.x!)).toMatchObject({
      channel: "x",
      state: "fresh",
      last_error: null,
      metrics: {
        views: 1500,
        impressions: 1400,
        comments: 3,
        reactions: 40,
        shares: 7,
        saves: 6,
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
    expect(body.totals.link_clicks).toEqual({
      value: 0,
      coverage: { total_posts: 1, fetched_posts: 0, failed_posts: 0 },
    });
  });

  test("the destination's due posts are read in one lookup; an expired token is renewed and the read retried", async () => {
    const first = await publishGroup("X batch one", ["x"]);
    const second = await publishGroup("X batch two", ["x"]);
    x.expireAccessTokens();
    const refreshesBefore = x.grants.filter((g) => g.grantType === "refresh_token").length;
    const lookupsBefore = x.lookups.length;
    await readLater();
    expect(x.grants.filter((g) => g.grantType === "refresh_token").length).toBe(refreshesBefore + 1);
    // The lookup refused with the expired token, then the same lookup with the new one.
    const lookups = x.lookups.slice(lookupsBefore);
    expect(lookups).toHaveLength(1);
    expect(lookups[0]!.ids).toHaveLength(2);
    for (const { group } of [first, second]) expect((await analytics(group)).posts[0].state).toBe("fresh");
  });

  test("a 429 leaves the post pending with provider_rate_limited until X's reset", async () => {
    const { group, ids } = await publishGroup("X limited", ["x"]);
    s.clock.advance(10 * MINUTE);
    const reset = Math.ceil((s.clock.now() + HOUR) / 1000);
    x.failNext(1, {
      status: 429,
      path: "/2/tweets",
      headers: { "x-rate-limit-remaining": "0", "x-rate-limit-reset": String(reset) },
    });
    await s.server.scheduler.runNow("analytics-refresh");
    const post = postOf(await analytics(group), ids.x!);
    expect(post).toMatchObject({ state: "pending", last_error: { code: "provider_rate_limited" } });
    expect(post.next_automatic_refresh_at).toBe(new Date(reset * 1000).toISOString());
  });
});

describe("Threads", () => {
  test("insights: views, comments, reactions, shares fetched; impressions, saves, link clicks not offered", async () => {
    const { group, ids } = await publishGroup("Threads numbers", ["threads"]);
    threads.posts.find((p) => p.text === "Threads numbers")!.counts = {
      views: 900,
      replies: 4,
      likes: 30,
      reposts: 3,
      quotes: 2,
      shares: 1,
    };
    await readLater();
    const body = await analytics(group);
    expect(postOf(body, ids.threads!)).toMatchObject({
      channel: "threads",
      state: "fresh",
      metrics: {
        views: 900,
        impressions: 0,
        comments: 4,
        reactions: 30,
        shares: 6,
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
  });

  test("a post deleted on Threads is reported missing", async () => {
    const { group, ids } = await publishGroup("Threads deleted", ["threads"]);
    threads.posts = threads.posts.filter((p) => p.text !== "Threads deleted");
    await readLater();
    expect(postOf(await analytics(group), ids.threads!)).toMatchObject({
      state: "pending",
      last_error: { code: "provider_post_missing" },
    });
  });
});

describe("LinkedIn", () => {
  test("a page's post is read through share statistics; a member's post is unsupported", async () => {
    const { group, ids } = await publishGroup("LinkedIn numbers", ["linkedin-page", "linkedin-member"]);
    const pagePost = linkedin.posts.find(
      (p) => p.commentary === "LinkedIn numbers" && p.author === "urn:li:organization:2414183",
    )!;
    pagePost.counts = {
      impressionCount: 700,
      uniqueImpressionsCount: 500,
      clickCount: 21,
      likeCount: 15,
      commentCount: 5,
      shareCount: 3,
    };
    const statisticsBefore = linkedin.statisticsQueries.length;
    await readLater();
    const body = await analytics(group);
    expect(postOf(body, ids["linkedin-page"]!)).toMatchObject({
      channel: "linkedin",
      state: "fresh",
      metrics: {
        views: 500,
        impressions: 700,
        comments: 5,
        reactions: 15,
        shares: 3,
        saves: 0,
        link_clicks: 21,
      },
    });
    expect(postOf(body, ids["linkedin-member"]!)).toMatchObject({
      state: "unsupported",
      next_automatic_refresh_at: null,
      last_error: null,
    });
    expect(linkedin.statisticsQueries.slice(statisticsBefore)).toEqual([
      { organization: "urn:li:organization:2414183", param: "shares", urns: [pagePost.urn] },
    ]);
    expect(fetchedPosts(body)).toEqual({
      views: 1,
      impressions: 1,
      comments: 1,
      reactions: 1,
      shares: 1,
      saves: 0,
      link_clicks: 1,
    });
    expect(body.totals.impressions.coverage).toEqual({ total_posts: 2, fetched_posts: 1, failed_posts: 0 });
  });
});

describe("one group on the three networks", () => {
  test("totals add up what each network reported; coverage counts each metric's reporters", async () => {
    const text = "everywhere at once";
    const { group } = await publishGroup(text, ["x", "threads", "linkedin-page"]);
    x.tweets.find((t) => t.text === text)!.counts = { impressions: 100, nonPublicImpressions: 90, likes: 1 };
    threads.posts.find((p) => p.text === text)!.counts = { views: 200, likes: 2 };
    linkedin.posts.find((p) => p.commentary.startsWith("everywhere"))!.counts = {
      uniqueImpressionsCount: 300,
      impressionCount: 350,
      likeCount: 3,
    };
    await readLater();
    const body = await analytics(group);
    expect(body.posts.map((p: any) => [p.channel, p.state]).sort()).toEqual([
      ["linkedin", "fresh"],
      ["threads", "fresh"],
      ["x", "fresh"],
    ]);
    expect(body.totals.views).toEqual({
      value: 600,
      coverage: { total_posts: 3, fetched_posts: 3, failed_posts: 0 },
    });
    expect(body.totals.impressions).toEqual({
      value: 440,
      coverage: { total_posts: 3, fetched_posts: 2, failed_posts: 0 },
    });
    expect(body.totals.reactions.value).toBe(6);
    expect(body.totals.saves.coverage.fetched_posts).toBe(1); // X's bookmarks only
    expect(body.totals.link_clicks.coverage.fetched_posts).toBe(1); // the page's clickCount
  });
});
