// First comments (issue 31) through the real server, engine and each network's fake: sent once right
// after the post with the network's own call, shown as a `first_comment` receipt; too long is a 422
// at its pointer, elsewhere an unknown option (400); a refused comment leaves the post published with
// first_comment_failed and a retry sends the comment alone; a rate-limited one is retried; an
// unanswered one is looked up; a process that dies during the call is resumed without a second comment.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PublishingEngine } from "../../src/modules/publishing/engine.ts";
import { createProviderRegistry, type ProviderRegistry } from "../../src/providers/registry.ts";
import { uploadAsset } from "../assets/helpers.ts";
import { jpeg, mp4 } from "../assets/samples.ts";
import { startFacebookFake, type FacebookFake } from "../fakes/facebook.ts";
import { startLinkedInFake, type LinkedInFake } from "../fakes/linkedin.ts";
import { graphErrorBody } from "../fakes/meta.ts";
import type { FailSpec, FakeControls } from "../fakes/shared.ts";
import { googleErrorBody, startYouTubeFake, type YouTubeFake } from "../fakes/youtube.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { apiPosting } from "../networks/support.ts";
import { onNth, outbox, waitFor } from "./engine-helpers.ts";

let s: TestServer;
let facebook: FacebookFake;
let linkedin: LinkedInFake;
let youtube: YouTubeFake;
let original: ProviderRegistry;
const destinations: Record<string, string> = {};
const api = apiPosting("first-comment", () => ({ s, ws: s.owner.workspaceId }));

type Channel = "facebook" | "instagram" | "linkedin" | "youtube";

/** One network as the tests drive it. */
interface Network {
  channel: Channel;
  fake: () => FakeControls;
  /** What the post's body and assets are (Instagram needs an image, YouTube a video). */
  post: (text: string) => Promise<Record<string, unknown>>;
  /** Part of the path of the comment's create call. */
  commentPath: string;
  /** The comments the network holds on the post `objectId`: their ids and texts. */
  comments: (objectId: string) => { id: string; text: string }[];
  /** The network's documented longest comment. */
  max: number;
  /** A permanent refusal of the comment, as the network answers it. */
  refusal: FailSpec;
}

const networks: Network[] = [
  {
    channel: "facebook",
    fake: () => facebook,
    post: async (text) => ({ body: [text] }),
    commentPath: "/comments",
    comments: (id) =>
      facebook.comments.filter((c) => c.objectId === id).map((c) => ({ id: c.id, text: c.message })),
    max: 8000,
    refusal: {
      status: 400,
      body: graphErrorBody({
        message: "(#100) Comments on this object are turned off",
        code: 100,
        subcode: 1446036,
      }),
    },
  },
  {
    channel: "instagram",
    fake: () => facebook,
    post: async (text) => ({ body: [text], media: [(await image()).id] }),
    commentPath: "/comments",
    comments: (id) =>
      facebook.comments.filter((c) => c.objectId === id).map((c) => ({ id: c.id, text: c.message })),
    max: 2200,
    refusal: {
      status: 400,
      body: graphErrorBody({
        message: "(#10) Application does not have permission for this action",
        code: 10,
      }),
    },
  },
  {
    channel: "linkedin",
    fake: () => linkedin,
    post: async (text) => ({ body: [text] }),
    commentPath: "/comments",
    comments: (urn) =>
      linkedin.comments.filter((c) => c.object === urn).map((c) => ({ id: c.urn, text: c.text })),
    max: 1250,
    refusal: {
      status: 422,
      body: { status: 422, message: "Comment content is not allowed", code: "UNPROCESSABLE_ENTITY" },
    },
  },
  {
    channel: "youtube",
    fake: () => youtube,
    post: async (text) => ({ body: [text], media: [(await video()).id] }),
    commentPath: "/commentThreads",
    comments: (videoId) =>
      youtube.commentThreads
        .filter((t) => t.videoId === videoId)
        .map((t) => ({ id: t.id, text: t.textOriginal })),
    max: 10_000,
    refusal: {
      status: 403,
      body: googleErrorBody(403, "commentsDisabled", "The video has disabled comments."),
    },
  },
];

async function image() {
  return uploadAsset(s, s.owner.workspaceId, jpeg(1080, 1080), {
    contentType: "image/jpeg",
    fileName: "photo.jpg",
  });
}

async function video() {
  return uploadAsset(s, s.owner.workspaceId, mp4(320, 240, 4, { mdatBytes: 200_000 }), {
    kind: "video",
    contentType: "video/mp4",
    fileName: "clip.mp4",
  });
}

async function oauth(provider: Channel): Promise<void> {
  const ws = s.owner.workspaceId;
  const started = await s.request("POST", `/v1/workspaces/${ws}/destination-connections`, {
    body: { provider },
  });
  expect({ status: started.status, text: started.text }).toMatchObject({ status: 201 });
  const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
  expect(authorize.status).toBe(302);
  expect((await returnFromOAuth(authorize.headers.get("location")!)).status).toBe(200);
  const listed = await s.request("GET", `/v1/workspaces/${ws}/destinations`);
  destinations[provider] = listed.body.data.find((d: any) => d.channel === provider).id;
}

beforeAll(async () => {
  let now = () => Date.now();
  facebook = await startFacebookFake({ mediaProcessingPolls: 0, now: () => now() });
  linkedin = await startLinkedInFake({ now: () => now() });
  youtube = await startYouTubeFake({ processingPolls: 0, now: () => now() });
  s = await startTestServer({
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      HERALD_PROVIDER_TIMEOUT_SECONDS: "2",
      HERALD_FACEBOOK_CLIENT_ID: facebook.app.clientId,
      HERALD_FACEBOOK_CLIENT_SECRET: facebook.app.clientSecret,
      HERALD_FACEBOOK_API_BASE: facebook.origin,
      HERALD_FACEBOOK_AUTH_BASE: facebook.origin,
      HERALD_INSTAGRAM_CLIENT_ID: facebook.app.clientId,
      HERALD_INSTAGRAM_CLIENT_SECRET: facebook.app.clientSecret,
      HERALD_INSTAGRAM_API_BASE: facebook.origin,
      HERALD_INSTAGRAM_AUTH_BASE: facebook.origin,
      HERALD_LINKEDIN_CLIENT_ID: linkedin.clientId,
      HERALD_LINKEDIN_CLIENT_SECRET: linkedin.clientSecret,
      HERALD_LINKEDIN_API_BASE: linkedin.origin,
      HERALD_LINKEDIN_AUTH_BASE: linkedin.origin,
      HERALD_LINKEDIN_TOKEN_BASE: linkedin.origin,
      HERALD_YOUTUBE_CLIENT_ID: youtube.clientId,
      HERALD_YOUTUBE_CLIENT_SECRET: youtube.clientSecret,
      HERALD_YOUTUBE_API_BASE: youtube.origin,
      HERALD_YOUTUBE_AUTH_BASE: youtube.origin,
      HERALD_YOUTUBE_TOKEN_BASE: youtube.origin,
    },
  });
  now = () => s.clock.now();
  // Quick status polls (YouTube's processing, Instagram's containers) so runUntilIdle settles fast.
  original = s.herald.providers;
  s.herald.providers = createProviderRegistry({
    fetch,
    clock: s.clock,
    timeoutMs: 2000,
    settings: s.herald.config.networks,
    pollIntervalMs: 1,
    maxPolls: 2,
  });
  for (const channel of ["facebook", "instagram", "linkedin", "youtube"] as const) await oauth(channel);
});
afterAll(async () => {
  s.herald.providers = original;
  await s.stop();
  await facebook.stop();
  await linkedin.stop();
  await youtube.stop();
});

/** Comment create calls the network received so far. */
const commentCalls = (n: Network) =>
  n.fake().requests.filter((r) => r.method === "POST" && r.path.endsWith(n.commentPath));

/** Creates and publishes a post with a first comment; the post as created. */
async function createWithComment(n: Network, text: string, comment: string) {
  const post = await n.post(text);
  const created = await api.createPost(destinations[n.channel]!, {
    ...post,
    destination_options: { [n.channel]: { first_comment: comment } },
  });
  expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
  return created.body.posts[0];
}

describe.each(networks)("$channel", (n) => {
  test("the comment goes once, with the network's call, right after the post: a first_comment receipt", async () => {
    const stamp = `${n.channel} ${Date.now()}`;
    const before = commentCalls(n).length;
    const created = await createWithComment(n, `post ${stamp}`, `comment ${stamp}`);
    await s.server.engine.runUntilIdle();
    const post = await api.getPost(created.id);
    expect({ state: post.state, last_error: post.last_error }).toEqual({
      state: "published",
      last_error: null,
    });
    expect(post.available_actions).toEqual([]);
    const [item, comment, ...more] = post.receipts;
    expect(more).toEqual([]);
    expect(item).toMatchObject({ object: "receipt", kind: "post", item_index: 0, state: "published" });
    const held = n.comments(item.provider_object_id);
    expect(held).toEqual([{ id: comment.provider_object_id, text: `comment ${stamp}` }]);
    expect(comment).toMatchObject({
      object: "receipt",
      kind: "first_comment",
      state: "published",
      error: null,
    });
    expect(comment.url).toStartWith("https://");
    expect(typeof comment.published_at).toBe("string");
    expect(commentCalls(n).length).toBe(before + 1);
    // One post.published event: the comment adds none.
    const events = (await outbox({ s, ws: s.owner.workspaceId } as never, created.id)).map((e) => e.type);
    expect(events.filter((t) => t === "post.published")).toHaveLength(1);
  });

  test("a comment longer than the network takes is a 422 at its pointer; nothing is stored", async () => {
    const post = await n.post("too long");
    const r = await api.createPost(destinations[n.channel]!, {
      ...post,
      destination_options: { [n.channel]: { first_comment: "a".repeat(n.max + 1) } },
    });
    expectProblem(r, 422, "public_unpublishable", [
      `/posts/0/destination_options/${n.channel}/first_comment`,
    ]);
    expect(r.body.errors[0].detail).toContain(String(n.max));
  });

  test("a refused comment leaves the post published with first_comment_failed; retry sends the comment alone", async () => {
    const stamp = `${n.channel} refused ${Date.now()}`;
    n.fake().failNext(1, { ...n.refusal, path: n.commentPath });
    const created = await createWithComment(n, `post ${stamp}`, `comment ${stamp}`);
    await s.server.engine.runUntilIdle();
    const failed = await api.getPost(created.id);
    expect(failed.state).toBe("published");
    expect(failed.last_error).toMatchObject({
      code: "first_comment_failed",
      retryable: true,
      user_action: "retry",
    });
    expect(failed.available_actions).toEqual(["retry"]);
    const comment = failed.receipts.find((r: any) => r.kind === "first_comment");
    expect(comment).toMatchObject({
      state: "failed",
      provider_object_id: null,
      url: null,
      published_at: null,
    });
    expect(Object.keys(comment.error).sort()).toEqual(["code", "message"]);
    expect(failed.last_error.message).toContain(comment.error.message);
    const objectId = failed.receipts[0].provider_object_id;
    expect(n.comments(objectId)).toEqual([]);

    const posts = n.fake().requests.length;
    const retried = await s.request(
      "POST",
      `/v1/workspaces/${s.owner.workspaceId}/posts/${created.id}/retry`,
      {
        body: { confirmed: true },
      },
    );
    expect({ status: retried.status, text: retried.text }).toMatchObject({ status: 200 });
    expect(retried.body).toMatchObject({ state: "published", last_error: null, available_actions: [] });
    await s.server.engine.runUntilIdle();
    const after = await api.getPost(created.id);
    expect(after.receipts.map((r: any) => [r.kind, r.state])).toEqual([
      ["post", "published"],
      ["first_comment", "published"],
    ]);
    expect(after.receipts[0].provider_object_id).toBe(objectId);
    expect(n.comments(objectId)).toEqual([
      { id: after.receipts[1].provider_object_id, text: `comment ${stamp}` },
    ]);
    // Only comment calls and their reads went out after the retry: the post was not sent again.
    const since = n
      .fake()
      .requests.slice(posts)
      .filter((r) => r.method === "POST");
    expect(since.every((r) => r.path.endsWith(n.commentPath))).toBe(true);
    expect(since).toHaveLength(1);
    const again = await s.request("POST", `/v1/workspaces/${s.owner.workspaceId}/posts/${created.id}/retry`, {
      body: { confirmed: true },
    });
    expect(again.status).toBe(409);
  });

  test("a process that dies during the comment's call: resumed from the network's comments, one comment", async () => {
    const stamp = `${n.channel} crash ${Date.now()}`;
    const created = await createWithComment(n, `post ${stamp}`, `comment ${stamp}`);
    onNth(n.fake(), n.commentPath, 1, () => (n.fake().hangAfterReceive = true));
    // Another process publishes the post (its ticks also run the status checks of a video still
    // processing) and dies while its comment call is unanswered.
    const other = new PublishingEngine(s.herald);
    const objectId = await waitFor("the comment to reach the network", async () => {
      await other.tick();
      const post = await api.getPost(created.id);
      const id = post.receipts[0]?.provider_object_id;
      return id && n.comments(id).length === 1 ? id : undefined;
    });
    other.stop();
    n.fake().hangAfterReceive = false;
    const sent = commentCalls(n).length;
    const waiting = await api.getPost(created.id);
    expect(waiting.state).toBe("published");
    expect(waiting.receipts[1]).toMatchObject({ kind: "first_comment", state: "pending" });
    s.clock.advance(Math.max(s.herald.config.engine.leaseMs, 60_000) + 1000);
    await s.server.engine.runUntilIdle();
    await other.drain();
    const post = await api.getPost(created.id);
    const held = n.comments(objectId);
    expect(held).toHaveLength(1);
    expect(post.receipts[1]).toMatchObject({
      kind: "first_comment",
      state: "published",
      provider_object_id: held[0]!.id,
    });
    expect(commentCalls(n).length).toBe(sent);
    expect(post.last_error).toBeNull();
  });
});

test("a rate-limited comment is retried later, once", async () => {
  const n = networks[0]!;
  const stamp = `limited ${Date.now()}`;
  facebook.failNext(1, {
    status: 400,
    body: graphErrorBody({ message: "(#32) Page request limit reached", code: 32 }),
    path: "/comments",
  });
  const created = await createWithComment(n, `post ${stamp}`, `comment ${stamp}`);
  await s.server.engine.runUntilIdle();
  const waiting = await api.getPost(created.id);
  expect(waiting).toMatchObject({ state: "published", last_error: null });
  expect(waiting.receipts[1]).toMatchObject({ kind: "first_comment", state: "pending" });
  s.clock.advance(2 * 60 * 60_000);
  await s.server.engine.runUntilIdle();
  const post = await api.getPost(created.id);
  expect(post.receipts[1]).toMatchObject({ kind: "first_comment", state: "published" });
  expect(n.comments(post.receipts[0].provider_object_id)).toHaveLength(1);
});

test("a comment answered 500 is looked up a minute later: absent, so sent again, once", async () => {
  const n = networks[2]!;
  const stamp = `unanswered ${Date.now()}`;
  linkedin.failNext(1, { status: 500, path: "/comments" });
  const created = await createWithComment(n, `post ${stamp}`, `comment ${stamp}`);
  await s.server.engine.runUntilIdle();
  const objectId = (await api.getPost(created.id)).receipts[0].provider_object_id;
  expect(n.comments(objectId)).toEqual([]);
  s.clock.advance(5 * 60_000);
  await s.server.engine.runUntilIdle();
  const post = await api.getPost(created.id);
  expect(post.receipts[1]).toMatchObject({ kind: "first_comment", state: "published" });
  expect(n.comments(objectId)).toHaveLength(1);
  const reads = linkedin.requests.filter((r) => r.method === "GET" && r.path.endsWith("/comments"));
  expect(reads.length).toBeGreaterThan(0);
});

test("Instagram: a comment with more than 30 hashtags is a 422 at its pointer", async () => {
  const r = await api.createPost(destinations.instagram!, {
    body: ["tags"],
    media: [(await image()).id],
    destination_options: {
      instagram: { first_comment: Array.from({ length: 31 }, (_, i) => `#t${i}`).join(" ") },
    },
  });
  expectProblem(r, 422, "public_unpublishable", ["/posts/0/destination_options/instagram/first_comment"]);
  expect(r.body.errors[0].detail).toContain("hashtags");
});

test("first_comment on a network without first comments (x) is an unknown option: 400 with its pointer", async () => {
  const r = await s.request("POST", `/v1/workspaces/${s.owner.workspaceId}/posts`, {
    headers: { "idempotency-key": `fc-x-${Date.now()}` },
    body: {
      when: "draft",
      group: `fc-x-${Date.now()}`,
      posts: [{ channel: "x", body: ["hello"], destination_options: { x: { first_comment: "hi" } } }],
    },
  });
  expectProblem(r, 400, "public_invalid_request", ["/posts/0/destination_options/x/first_comment"]);
});

test("an unanswered comment the look-up cannot settle fails unsafe; a retry needs acknowledge_duplicate_risk", async () => {
  const n = networks[0]!;
  const stamp = `undecided ${Date.now()}`;
  const created = await createWithComment(n, `post ${stamp}`, `comment ${stamp}`);
  onNth(facebook, "/comments", 1, () => (facebook.hangAfterReceive = true));
  const other = new PublishingEngine(s.herald);
  const objectId = await waitFor("the comment to reach Facebook", async () => {
    await other.tick();
    const id = (await api.getPost(created.id)).receipts[0]?.provider_object_id;
    return id && n.comments(id).length === 1 ? id : undefined;
  });
  other.stop();
  facebook.hangAfterReceive = false;
  // A second comment with the same text appears meanwhile (made by hand): the look-up cannot tell.
  const made = facebook.comments.find((c) => c.objectId === objectId)!;
  facebook.comments.push({ ...made, id: `${made.id}9` });
  s.clock.advance(Math.max(s.herald.config.engine.leaseMs, 60_000) + 1000);
  await s.server.engine.runUntilIdle();
  await other.drain();
  const failed = await api.getPost(created.id);
  expect(failed).toMatchObject({ state: "published", retry_safety: "unsafe", available_actions: ["retry"] });
  expect(failed.last_error).toMatchObject({
    code: "first_comment_failed",
    retry_safety: "unsafe",
    user_action: "inspect_resource",
  });
  expect(failed.receipts[1]).toMatchObject({ state: "failed", error: { code: "provider_outcome_unknown" } });
  const path = `/v1/workspaces/${s.owner.workspaceId}/posts/${created.id}/retry`;
  const refused = await s.request("POST", path, { body: { confirmed: true } });
  expectProblem(refused, 409, "public_conflict", ["/acknowledge_duplicate_risk"]);
  const retried = await s.request("POST", path, {
    body: { confirmed: true, acknowledge_duplicate_risk: true },
  });
  expect(retried.status).toBe(200);
  await s.server.engine.runUntilIdle();
  const post = await api.getPost(created.id);
  expect(post.receipts[1]).toMatchObject({ state: "published" });
  expect(n.comments(objectId)).toHaveLength(3);
});
