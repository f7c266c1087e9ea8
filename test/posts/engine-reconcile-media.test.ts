// Instagram and Threads through the real server when the publish call (media_publish, threads_publish)
// goes out unanswered: after a dead process (another engine claims the post, the fake stores the post
// and never answers, that engine stops, the lease expires) and after a live timeout, Herald looks the
// item up among the account's latest posts before sending anything: found → published with a receipt
// pointing at the one post; none in a listing that reaches back → sent again (one post); two matching
// posts → needs-attention (provider_outcome_unknown, retry_safety unsafe).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { PublishingEngine } from "../../src/modules/publishing/engine.ts";
import { RECONCILE_AFTER_MS } from "../../src/modules/publishing/publish-post.ts";
import { THREADS_PENDING_CHECK_MS } from "../../src/providers/threads/publish.ts";
import { uploadAsset } from "../assets/helpers.ts";
import { jpeg, mp4 } from "../assets/samples.ts";
import { startFacebookFake, type FacebookFake } from "../fakes/facebook.ts";
import { startThreadsFake, type ThreadsFake } from "../fakes/threads.ts";
import { startYouTubeFake, type YouTubeFake } from "../fakes/youtube.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "./engine-helpers.ts";

let s: TestServer;
let ws: string;
let facebook: FacebookFake;
let threads: ThreadsFake;
let youtube: YouTubeFake;
const destinations: Record<string, string> = {};
let groups = 0;

beforeAll(async () => {
  const clock = new ManualClock(Date.parse("2026-03-01T12:00:00.000Z"));
  const now = () => clock.now();
  facebook = await startFacebookFake({ mediaProcessingPolls: 0, now });
  threads = await startThreadsFake({ mediaProcessingPolls: 0, now });
  youtube = await startYouTubeFake({ now, processingPolls: 0 });
  s = await startTestServer({
    clock,
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      // A create left unanswered times out quickly; the dead engine's late timeout writes nothing.
      HERALD_PROVIDER_TIMEOUT_SECONDS: "1",
      HERALD_INSTAGRAM_CLIENT_ID: facebook.app.clientId,
      HERALD_INSTAGRAM_CLIENT_SECRET: facebook.app.clientSecret,
      HERALD_INSTAGRAM_API_BASE: facebook.origin,
      HERALD_INSTAGRAM_AUTH_BASE: facebook.origin,
      HERALD_THREADS_CLIENT_ID: threads.app.clientId,
      HERALD_THREADS_CLIENT_SECRET: threads.app.clientSecret,
      HERALD_THREADS_API_BASE: threads.origin,
      HERALD_THREADS_AUTH_BASE: threads.origin,
      HERALD_YOUTUBE_CLIENT_ID: youtube.clientId,
      HERALD_YOUTUBE_CLIENT_SECRET: youtube.clientSecret,
      HERALD_YOUTUBE_API_BASE: youtube.origin,
      HERALD_YOUTUBE_AUTH_BASE: youtube.origin,
      HERALD_YOUTUBE_TOKEN_BASE: youtube.origin,
    },
  });
  ws = s.owner.workspaceId;
  for (const provider of ["instagram", "threads", "youtube"]) {
    const started = await s.request("POST", `/v1/workspaces/${ws}/destination-connections`, {
      body: { provider },
    });
    expect(started.status).toBe(201);
    const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
    expect((await returnFromOAuth(authorize.headers.get("location")!)).status).toBe(200);
    const listed = await s.request("GET", `/v1/workspaces/${ws}/destinations`);
    const mine = listed.body.data.filter((d: any) => d.channel === provider);
    destinations[provider] = (mine.find((d: any) => d.display_name === "Herald Café") ?? mine[0]).id;
  }
});
afterAll(async () => {
  await s.stop();
  await facebook.stop();
  await threads.stop();
  await youtube.stop();
});

/** One network as the cases drive it: its fake's switches and the posts it holds with a text. */
interface Network {
  name: "instagram" | "threads";
  hang(on: boolean): void;
  postsWith(text: string): { id: string }[];
  /** Forgets the posts with `text` (the network did not make them after all). */
  drop(text: string): void;
  /** A post with `text` made on the account now, outside Herald. */
  seed(text: string): void;
}

const networks: Network[] = [
  {
    name: "instagram",
    hang: (on) => (facebook.hangAfterReceive = on),
    postsWith: (text) => facebook.igPosts.filter((p) => p.caption === text),
    drop: (text) => (facebook.igPosts = facebook.igPosts.filter((p) => p.caption !== text)),
    seed(text) {
      const id = `179${Date.now()}${++groups}`;
      const igId = facebook.pages[0]!.instagram!.id;
      facebook.igPosts.push({
        id,
        igId,
        containerId: `c${id}`,
        mediaType: "IMAGE",
        caption: text,
        children: [],
        shortcode: `S${id}`,
        permalink: `https://www.instagram.com/p/S${id}/`,
        timestamp: s.clock.now(),
      });
    },
  },
  {
    name: "threads",
    hang: (on) => (threads.hangAfterReceive = on),
    postsWith: (text) => threads.posts.filter((p) => p.text === text),
    drop: (text) => (threads.posts = threads.posts.filter((p) => p.text !== text)),
    seed(text) {
      const id = `180${Date.now()}${++groups}`;
      threads.posts.push({
        id,
        containerId: `c${id}`,
        mediaType: "TEXT_POST",
        text,
        children: [],
        replyToId: null,
        replyControl: null,
        shortcode: `S${id}`,
        permalink: `https://www.threads.net/@${threads.account.username}/post/S${id}`,
        timestamp: s.clock.now(),
      });
    },
  },
];

/** Create Post "now" on the network's destination (Instagram with a photo); the created post. */
async function publish(network: Network, text: string): Promise<{ id: string }> {
  const media =
    network.name === "instagram"
      ? [(await uploadAsset(s, ws, jpeg(40, 30), { contentType: "image/jpeg", fileName: "p.jpg" })).id]
      : [];
  const r = await s.request("POST", `/v1/workspaces/${ws}/posts`, {
    headers: { "idempotency-key": `reconcile-${++groups}` },
    body: {
      when: "now",
      confirmed: true,
      group: `reconcile-${groups}`,
      posts: [{ destination_id: destinations[network.name], body: [text], media }],
    },
  });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 202 });
  return r.body.posts[0];
}

async function getPost(id: string) {
  const r = await s.request("GET", `/v1/workspaces/${ws}/posts/${id}?include=attempts`);
  expect(r.status).toBe(200);
  return r.body;
}

describe.each(networks)("$name: a publish that went out unanswered", (network) => {
  test("after a dead process: looked up at once, published with the one post's receipt", async () => {
    const text = `dead run ${network.name}`;
    const created = await publish(network, text);
    network.hang(true);
    const other = new PublishingEngine(s.herald);
    await other.tick();
    other.stop();
    await waitFor("the publish to reach the network", () =>
      network.postsWith(text).length > 0 ? true : undefined,
    );
    network.hang(false);
    expect((await getPost(created.id)).state).toBe("processing");
    s.clock.advance(s.herald.config.engine.leaseMs + 1000);
    await s.server.engine.runUntilIdle();
    const post = await getPost(created.id);
    const made = network.postsWith(text);
    expect(made).toHaveLength(1);
    expect(post).toMatchObject({ state: "published", retry_safety: "safe" });
    expect(post.receipts.map((r: any) => r.provider_object_id)).toEqual([made[0]!.id]);
    expect(post.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
      ["initial", "outcome_unknown"],
      ["recovery", "succeeded"],
    ]);
    await other.drain();
    expect((await getPost(created.id)).state).toBe("published");
  });

  test("after a timeout: ready (provider_outcome_unknown, user_action none), then found a minute later", async () => {
    const text = `timed out ${network.name}`;
    const created = await publish(network, text);
    network.hang(true);
    await s.server.engine.runUntilIdle();
    network.hang(false);
    const waiting = await getPost(created.id);
    expect(waiting).toMatchObject({ state: "ready", retry_safety: "unsafe" });
    expect(waiting.last_error).toMatchObject({ code: "provider_outcome_unknown", user_action: "none" });
    expect(network.postsWith(text)).toHaveLength(1);
    s.clock.advance(RECONCILE_AFTER_MS + 1000);
    await s.server.engine.runUntilIdle();
    const post = await getPost(created.id);
    expect(post.state).toBe("published");
    expect(network.postsWith(text)).toHaveLength(1);
    expect(post.receipts[0].provider_object_id).toBe(network.postsWith(text)[0]!.id);
  });

  test("not made after all (the listing reaches back, no match): sent again, one post", async () => {
    const text = `lost ${network.name}`;
    const created = await publish(network, text);
    network.hang(true);
    await s.server.engine.runUntilIdle();
    network.hang(false);
    network.drop(text);
    s.clock.advance(RECONCILE_AFTER_MS + 1000);
    await s.server.engine.runUntilIdle();
    const post = await getPost(created.id);
    expect(post.state).toBe("published");
    const made = network.postsWith(text);
    expect(made).toHaveLength(1);
    expect(post.receipts[0].provider_object_id).toBe(made[0]!.id);
  });

  test("two posts match: needs attention (provider_outcome_unknown, unsafe), nothing sent again", async () => {
    const text = `twice ${network.name}`;
    network.seed(text);
    const created = await publish(network, text);
    network.hang(true);
    await s.server.engine.runUntilIdle();
    network.hang(false);
    s.clock.advance(RECONCILE_AFTER_MS + 1000);
    await s.server.engine.runUntilIdle();
    const post = await getPost(created.id);
    expect(post).toMatchObject({ state: "needs-attention", retry_safety: "unsafe" });
    expect(post.last_error.code).toBe("provider_outcome_unknown");
    expect(post.last_error.message).toContain("2 of the");
    expect(network.postsWith(text)).toHaveLength(2);
  });
});

describe("Threads: the publish of a stored container (a status check) goes out unanswered", () => {
  test("the check runs again with the stored container (never a second one): published once", async () => {
    const asset = await uploadAsset(s, ws, jpeg(40, 30), { contentType: "image/jpeg", fileName: "p.jpg" });
    threads.mediaProcessingPolls = 1000;
    const r = await s.request("POST", `/v1/workspaces/${ws}/posts`, {
      headers: { "idempotency-key": `reconcile-${++groups}` },
      body: {
        when: "now",
        confirmed: true,
        group: `reconcile-${groups}`,
        posts: [{ destination_id: destinations.threads, body: ["a slow photo"], media: [asset.id] }],
      },
    });
    expect(r.status).toBe(202);
    const id = r.body.posts[0].id;
    await s.server.engine.runUntilIdle();
    threads.mediaProcessingPolls = 0;
    expect((await getPost(id)).state).toBe("awaiting-provider");
    const containers = threads.containers.length;
    threads.finishProcessing();
    threads.hangAfterReceive = true;
    s.clock.advance(THREADS_PENDING_CHECK_MS + 1);
    await s.server.engine.runUntilIdle();
    threads.hangAfterReceive = false;
    const waiting = await getPost(id);
    expect(waiting).toMatchObject({ state: "ready", retry_safety: "unsafe" });
    expect(waiting.last_error).toMatchObject({ code: "provider_outcome_unknown", user_action: "none" });
    expect(waiting.last_error.message).toContain("check it on the network again");
    // Meta did not publish it after all: the same container is FINISHED again.
    threads.posts = threads.posts.filter((p) => p.text !== "a slow photo");
    const container = threads.containers.at(-1)!;
    container.status = "FINISHED";
    container.mediaId = null;
    s.clock.advance(RECONCILE_AFTER_MS + 1000);
    await s.server.engine.runUntilIdle();
    const post = await getPost(id);
    expect(post.state).toBe("published");
    const made = threads.posts.filter((p) => p.text === "a slow photo");
    expect(made.map((p) => p.containerId)).toEqual([container.id]);
    expect(threads.containers.length).toBe(containers);
    expect(post.receipts[0].provider_object_id).toBe(made[0]!.id);
  });
});

describe("YouTube: a run that died before its upload session was stored", () => {
  test("the uploads playlist holds no such video: sent again, one video, no person asked", async () => {
    const bytes = mp4(320, 240, 4, { mdatBytes: 2000 });
    const asset = await uploadAsset(s, ws, bytes, {
      kind: "video",
      contentType: "video/mp4",
      fileName: "clip.mp4",
    });
    const r = await s.request("POST", `/v1/workspaces/${ws}/posts`, {
      headers: { "idempotency-key": `reconcile-${++groups}` },
      body: {
        when: "now",
        confirmed: true,
        group: `reconcile-${groups}`,
        posts: [{ destination_id: destinations.youtube, body: ["Crash test\nA video."], media: [asset.id] }],
      },
    });
    expect({ status: r.status, text: r.text }).toMatchObject({ status: 202 });
    const id = r.body.posts[0].id;
    // The dead run's session request is still on its way when the run dies.
    youtube.delayMs = 1500;
    const other = new PublishingEngine(s.herald);
    await other.tick();
    other.stop();
    await waitFor("the session request to reach YouTube", () =>
      youtube.requests.some((q) => q.method === "POST" && q.path.includes("/upload/")) ? true : undefined,
    );
    youtube.delayMs = 0;
    s.clock.advance(s.herald.config.engine.leaseMs + 1000);
    await s.server.engine.runUntilIdle();
    const post = await getPost(id);
    expect(post.state).toBe("published");
    expect(youtube.videos).toHaveLength(1);
    expect(post.receipts.map((x: any) => x.provider_object_id)).toEqual([youtube.videos[0]!.id]);
    expect(post.attempts.map((a: any) => [a.trigger, a.status])).toEqual([
      ["initial", "outcome_unknown"],
      ["recovery", "succeeded"],
    ]);
    expect(youtube.requests.filter((q) => q.path === "/youtube/v3/playlistItems")).toHaveLength(1);
    await other.drain();
    expect((await getPost(id)).state).toBe("published");
    expect(youtube.videos).toHaveLength(1);
  });
});
