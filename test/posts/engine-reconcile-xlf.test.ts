// X, LinkedIn and Facebook through the real server and engine when a create call goes out unanswered:
// after a dead publisher (expired lease) and after a timeout, the post is looked up in the account's
// listing before anything is sent again. Found: published with a receipt pointing at it, one post on
// the network. Absent (the listing reaches back without it): sent again, one post. Two candidates:
// needs attention with the reason.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PublishingEngine } from "../../src/modules/publishing/engine.ts";
import { RECONCILE_AFTER_MS } from "../../src/modules/publishing/publish-post.ts";
import { startFacebookFake, type FacebookFake } from "../fakes/facebook.ts";
import { startLinkedInFake, type LinkedInFake } from "../fakes/linkedin.ts";
import type { FakeControls } from "../fakes/shared.ts";
import { startXFake, xFakeEnv, type XFake } from "../fakes/x.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { onNth, publish, waitFor, whileHanging } from "./engine-helpers.ts";
import { getPost, type PostsWorld } from "./helpers.ts";

let s: TestServer;
let x: XFake;
let linkedin: LinkedInFake;
let facebook: FacebookFake;
let w: PostsWorld;
const destinations: Record<string, string> = {};

/** One network as the tests drive it: where its creates go, and the posts it holds by text. */
interface Network {
  channel: "x" | "linkedin" | "facebook";
  fake: () => FakeControls;
  createPath: string;
  /** Ids of the posts the network holds with `text`. */
  held(text: string): string[];
  /** Puts a second post with `text` on the account, as if made by hand meanwhile. */
  holdCopy(text: string): void;
}

const networks: Network[] = [
  {
    channel: "x",
    fake: () => x,
    createPath: "/2/tweets",
    held: (text) => x.tweets.filter((t) => t.text === text).map((t) => t.id),
    holdCopy: (text) =>
      x.tweets.push({ ...x.tweets.find((t) => t.text === text)!, id: "1880028106020599999" }),
  },
  {
    channel: "linkedin",
    fake: () => linkedin,
    createPath: "/rest/posts",
    held: (text) => linkedin.posts.filter((p) => p.commentary === text).map((p) => p.urn),
    holdCopy: (text) => {
      const post = linkedin.posts.find((p) => p.commentary === text)!;
      linkedin.posts.push({ ...post, urn: "urn:li:share:7000000000000000999", createdAt: s.clock.now() });
    },
  },
  {
    channel: "facebook",
    fake: () => facebook,
    createPath: "/feed",
    held: (text) => facebook.posts.filter((p) => p.message === text).map((p) => p.id),
    holdCopy: (text) => {
      const post = facebook.posts.find((p) => p.message === text)!;
      facebook.posts.push({ ...post, id: `${post.pageId}_999999` });
    },
  },
];

async function oauth(provider: string): Promise<string> {
  const started = await s.request("POST", `/v1/workspaces/${w.ws}/destination-connections`, {
    body: { provider },
  });
  expect({ status: started.status, text: started.text }).toMatchObject({ status: 201 });
  const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
  expect(authorize.status).toBe(302);
  expect((await returnFromOAuth(authorize.headers.get("location")!)).status).toBe(200);
  const done = await s.request("GET", `/v1/workspaces/${w.ws}/destination-connections/${started.body.id}`);
  expect(done.body).toMatchObject({ status: "completed", error: null });
  return done.body.destination_id;
}

async function destinationNamed(channel: string, name: string): Promise<string> {
  const listed = await s.request("GET", `/v1/workspaces/${w.ws}/destinations`);
  return listed.body.data.find((d: any) => d.channel === channel && d.display_name === name).id;
}

beforeAll(async () => {
  // The fakes date posts by Herald's clock, so "since the call" means the same instant to both.
  let now = () => Date.now();
  x = await startXFake({ processingPolls: 0, now: () => now() });
  linkedin = await startLinkedInFake({ now: () => now() });
  facebook = await startFacebookFake({ reelProcessingPolls: 0, now: () => now() });
  s = await startTestServer({
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      HERALD_PROVIDER_TIMEOUT_SECONDS: "2",
      ...xFakeEnv(x),
      HERALD_LINKEDIN_CLIENT_ID: linkedin.clientId,
      HERALD_LINKEDIN_CLIENT_SECRET: linkedin.clientSecret,
      HERALD_LINKEDIN_API_BASE: linkedin.origin,
      HERALD_LINKEDIN_AUTH_BASE: linkedin.origin,
      HERALD_LINKEDIN_TOKEN_BASE: linkedin.origin,
      HERALD_FACEBOOK_CLIENT_ID: facebook.app.clientId,
      HERALD_FACEBOOK_CLIENT_SECRET: facebook.app.clientSecret,
      HERALD_FACEBOOK_API_BASE: facebook.origin,
      HERALD_FACEBOOK_AUTH_BASE: facebook.origin,
    },
  });
  now = () => s.clock.now();
  w = { s, ws: s.owner.workspaceId, destinationId: "", mastodon: null as never, stop: async () => {} };
  x.redirectUris.push(`${s.url}/oauth/callback/x`);
  destinations.x = await oauth("x");
  await oauth("linkedin");
  destinations.linkedin = await destinationNamed("linkedin", "Devtestco");
  await oauth("facebook");
  destinations.facebook = await destinationNamed("facebook", "Herald Café");
});
afterAll(async () => {
  await s.stop();
  await x.stop();
  await linkedin.stop();
  await facebook.stop();
});

/** Requests the network received on its create path. */
const creates = (n: Network) =>
  n.fake().requests.filter((r) => r.method === "POST" && r.path.endsWith(n.createPath));

describe.each(networks)("$channel: an unanswered create is looked up", (n) => {
  test("after a dead publisher: published from the listing, one post on the network, never sent again", async () => {
    const text = `${n.channel} crash ${Date.now()}`;
    const created = await publish(w, destinations[n.channel]!, [text]);
    n.fake().hangAfterReceive = true;
    const other = new PublishingEngine(s.herald);
    await other.tick();
    other.stop();
    await waitFor("the create to reach the network", () => (n.held(text).length === 1 ? true : undefined));
    n.fake().hangAfterReceive = false;
    expect((await getPost(w, created.id)).state).toBe("processing");
    const sent = creates(n).length;
    s.clock.advance(s.herald.config.engine.leaseMs + 1000);
    await s.server.engine.runUntilIdle();
    const post = await getPost(w, created.id, true);
    expect({ state: post.state, error: post.last_error }).toEqual({ state: "published", error: null });
    expect(n.held(text)).toHaveLength(1);
    expect(post.receipts.map((r: any) => r.provider_object_id)).toEqual(n.held(text));
    expect(creates(n).length).toBe(sent);
    expect(post.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
      ["initial", "outcome_unknown"],
      ["recovery", "succeeded"],
    ]);
    await other.drain();
    expect((await getPost(w, created.id)).state).toBe("published");
  });

  test("after a timeout: ready with outcome_unknown (nothing to do), a minute later published from the listing", async () => {
    const text = `${n.channel} timeout ${Date.now()}`;
    const created = await whileHanging(n.fake(), async () => {
      const made = await publish(w, destinations[n.channel]!, [text]);
      await s.server.engine.runUntilIdle();
      return made;
    });
    const waiting = await getPost(w, created.id);
    expect(waiting.state).toBe("ready");
    expect(waiting.last_error).toMatchObject({ code: "provider_outcome_unknown", user_action: "none" });
    const sent = creates(n).length;
    s.clock.advance(RECONCILE_AFTER_MS + 1000);
    await s.server.engine.runUntilIdle();
    const post = await getPost(w, created.id);
    expect({ state: post.state, error: post.last_error }).toEqual({ state: "published", error: null });
    expect(n.held(text)).toHaveLength(1);
    expect(post.receipts.map((r: any) => r.provider_object_id)).toEqual(n.held(text));
    expect(creates(n).length).toBe(sent);
  });

  test("absent: a create answered 500 that made nothing is sent again once the listing proves it absent", async () => {
    const text = `${n.channel} absent ${Date.now()}`;
    n.fake().failNext(1, { status: 500, path: n.createPath });
    const created = await publish(w, destinations[n.channel]!, [text]);
    await s.server.engine.runUntilIdle();
    expect((await getPost(w, created.id)).last_error).toMatchObject({ code: "provider_outcome_unknown" });
    expect(n.held(text)).toHaveLength(0);
    s.clock.advance(RECONCILE_AFTER_MS + 1000);
    await s.server.engine.runUntilIdle();
    const post = await getPost(w, created.id);
    expect({ state: post.state, error: post.last_error }).toEqual({ state: "published", error: null });
    expect(n.held(text)).toHaveLength(1);
    expect(post.receipts.map((r: any) => r.provider_object_id)).toEqual(n.held(text));
  });

  test("two candidates on the network: needs attention with the reason, nothing sent again", async () => {
    const text = `${n.channel} twice ${Date.now()}`;
    const created = await whileHanging(n.fake(), async () => {
      const made = await publish(w, destinations[n.channel]!, [text]);
      await s.server.engine.runUntilIdle();
      return made;
    });
    n.holdCopy(text);
    const sent = creates(n).length;
    s.clock.advance(RECONCILE_AFTER_MS + 1000);
    await s.server.engine.runUntilIdle();
    const post = await getPost(w, created.id);
    expect(post).toMatchObject({ state: "needs-attention", retry_safety: "unsafe" });
    expect(post.last_error).toMatchObject({
      code: "provider_outcome_unknown",
      user_action: "inspect_resource",
    });
    expect(post.last_error.message).toContain("2 of the");
    expect(creates(n).length).toBe(sent);
    expect(n.held(text)).toHaveLength(2);
  });
});

test("x: a thread whose second item went unanswered before the publisher died goes on from the listing's post", async () => {
  const stamp = Date.now();
  const body = [`thread a ${stamp}`, `thread b ${stamp}`, `thread c ${stamp}`];
  const created = await publish(w, destinations.x!, body);
  onNth(x, "/2/tweets", 2, () => (x.hangAfterReceive = true));
  const other = new PublishingEngine(s.herald);
  await other.tick();
  other.stop();
  await waitFor("the second item to reach X", () =>
    x.tweets.some((t) => t.text === body[1]) ? true : undefined,
  );
  x.hangAfterReceive = false;
  s.clock.advance(s.herald.config.engine.leaseMs + 1000);
  await s.server.engine.runUntilIdle();
  const post = await getPost(w, created.id);
  expect({ state: post.state, error: post.last_error }).toEqual({ state: "published", error: null });
  const tweets = body.map((text) => x.tweets.filter((t) => t.text === text));
  expect(tweets.map((t) => t.length)).toEqual([1, 1, 1]);
  const [a, b, c] = tweets.map((t) => t[0]!);
  expect([a!.replyTo, b!.replyTo, c!.replyTo]).toEqual([null, a!.id, b!.id]);
  expect(post.receipts.map((r: any) => r.provider_object_id)).toEqual([a!.id, b!.id, c!.id]);
  await other.drain();
});
