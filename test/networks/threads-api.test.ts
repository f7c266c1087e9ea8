// Threads through the real server: connecting with OAuth (code → short-lived → long-lived token), the
// 422 when Herald's Threads app is not configured, Create Post → engine → containers → published
// receipts, media pulled by the fake from Herald's signed download URL (pending while the container
// processes), and validation refusals with their JSON pointers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { jpeg } from "../assets/samples.ts";
import { uploadAsset } from "../assets/helpers.ts";
import { startThreadsFake, type ThreadsFake } from "../fakes/threads.ts";
import { expectProblem } from "../helpers/problems.ts";
import { apiPosting } from "./support.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { outbox } from "../posts/engine-helpers.ts";
import type { PostsWorld } from "../posts/helpers.ts";
import { THREADS_PENDING_CHECK_MS } from "../../src/providers/threads/publish.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

let s: TestServer;
let fake: ThreadsFake;
let ws: string;

let destinationId: string;

const api = apiPosting("threads", () => ({ s, ws }));
const createPost = (post: Record<string, unknown>, when = "now") => api.createPost(destinationId, post, when);
const getPost = api.getPost;

function env(f: ThreadsFake): Record<string, string> {
  return {
    HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
    HERALD_THREADS_CLIENT_ID: f.app.clientId,
    HERALD_THREADS_CLIENT_SECRET: f.app.clientSecret,
    HERALD_THREADS_API_BASE: f.origin,
    HERALD_THREADS_AUTH_BASE: f.origin,
  };
}

beforeAll(async () => {
  fake = await startThreadsFake({ mediaProcessingPolls: 0 });
  s = await startTestServer({ env: env(fake) });
  ws = s.owner.workspaceId;
});
afterAll(async () => {
  await s.stop();
  await fake.stop();
});

describe("connecting Threads", () => {
  test("OAuth through the API: authorize on Threads, back to the callback, a destination with the profile", async () => {
    const started = await s.request("POST", `/v1/workspaces/${ws}/destination-connections`, {
      body: { provider: "threads" },
    });
    expect({ status: started.status, text: started.text }).toMatchObject({ status: 201 });
    expect(started.body.status).toBe("pending");
    expect(started.body.authorization_url).toStartWith(`${fake.origin}/oauth/authorize?`);
    const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
    expect(authorize.status).toBe(302);
    expect(fake.authorizations[0]).toMatchObject({
      client_id: fake.app.clientId,
      redirect_uri: `${s.url}/oauth/callback/threads`,
      scope: "threads_basic,threads_content_publish,threads_manage_replies,threads_manage_insights",
      response_type: "code",
    });
    const callback = await returnFromOAuth(authorize.headers.get("location")!);
    expect({ status: callback.status, text: await callback.text() }).toMatchObject({ status: 200 });
    const done = await s.request("GET", `/v1/workspaces/${ws}/destination-connections/${started.body.id}`);
    expect(done.body).toMatchObject({ status: "completed", error: null });
    destinationId = done.body.destination_id;
    const destination = await s.request("GET", `/v1/workspaces/${ws}/destinations/${destinationId}`);
    expect(destination.body).toMatchObject({ channel: "threads", display_name: "Alice", status: "ready" });
    // The code was exchanged, then the short-lived token for a long-lived one.
    expect(fake.requests.map((r) => `${r.method} ${r.path}`).slice(1)).toEqual([
      "POST /oauth/access_token",
      "GET /access_token",
      "GET /v1.0/me",
    ]);
    expect([...fake.tokens.values()].map((t) => t.kind)).toEqual(["short", "long"]);
  });
});

describe("publishing to Threads", () => {
  test("a three-item thread is published, each item a reply to the previous one, with permalink receipts", async () => {
    const created = await createPost({ body: ["one", "two", "three"] });
    expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
    const id = created.body.posts[0].id;
    await s.server.engine.runUntilIdle();
    const post = await getPost(id);
    expect(post.state).toBe("published");
    const posts = fake.posts.slice(-3);
    expect(posts.map((p) => p.text)).toEqual(["one", "two", "three"]);
    expect(posts.map((p) => p.replyToId)).toEqual([null, posts[0]!.id, posts[1]!.id]);
    expect(post.receipts.map((r: any) => [r.item_index, r.provider_object_id, r.url])).toEqual(
      posts.map((p, i) => [i, p.id, p.permalink]),
    );
    for (const receipt of post.receipts)
      expect(receipt.url).toMatch(/^https:\/\/www\.threads\.net\/@alice\/post\//);
  });

  test("an image is pulled from Herald's signed URL; while its container processes the post awaits the provider", async () => {
    const asset = await uploadAsset(s, ws, jpeg(32, 24), {
      contentType: "image/jpeg",
      fileName: "photo.jpg",
    });
    fake.mediaProcessingPolls = 1000;
    const publishes = () => fake.requests.filter((r) => r.path.endsWith("/threads_publish")).length;
    const publishedBefore = publishes();
    const created = await createPost({
      body: ["a photo"],
      media: [asset.id],
      destination_options: {
        threads: { alt_text_by_asset_id: { [asset.id]: "a grey photo" }, reply_control: "everyone" },
      },
    });
    expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
    const id = created.body.posts[0].id;
    await s.server.engine.runUntilIdle();

    const waiting = await getPost(id);
    expect(waiting.state).toBe("awaiting-provider");
    const container = fake.containers.at(-1)!;
    expect(container).toMatchObject({
      mediaType: "IMAGE",
      status: "IN_PROGRESS",
      altText: "a grey photo",
      replyControl: "everyone",
    });
    expect(container.mediaUrl).toStartWith(`${s.url}/downloads/${asset.id}?`);
    expect(container.download).toEqual({ status: 200, contentType: "image/jpeg", bytes: asset.byte_size });
    expect((await outbox({ s } as PostsWorld, id)).map((e) => e.type)).toEqual(["post.awaiting-provider"]);

    fake.mediaProcessingPolls = 0;
    fake.finishProcessing();
    s.clock.advance(THREADS_PENDING_CHECK_MS + 1000);
    await s.server.engine.runUntilIdle();
    const published = await getPost(id);
    expect(published.state).toBe("published");
    const post = fake.posts.at(-1)!;
    expect(post).toMatchObject({ containerId: container.id, mediaType: "IMAGE", text: "a photo" });
    expect(published.receipts).toEqual([
      expect.objectContaining({ item_index: 0, provider_object_id: post.id, url: post.permalink }),
    ]);
    expect((await outbox({ s } as PostsWorld, id)).map((e) => e.type)).toEqual([
      "post.awaiting-provider",
      "post.published",
    ]);
    expect(publishes()).toBe(publishedBefore + 1);
  });

  test("text over 500 characters (emojis by their bytes) is a 422 pointing at the body item", async () => {
    const r = await createPost({ body: ["fine", `${"a".repeat(497)}👍`] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/body/1"]);
  });

  test("alt text for an asset that is not attached is refused at its option's pointer", async () => {
    const r = await createPost({
      body: ["x"],
      destination_options: { threads: { alt_text_by_asset_id: { ast_missing: "nothing" } } },
    });
    expectProblem(r, 400, "public_invalid_request", [
      "/posts/0/destination_options/threads/alt_text_by_asset_id/ast_missing",
    ]);
  });

  test("an unknown reply_control is refused by the options schema", async () => {
    const r = await createPost({
      body: ["x"],
      destination_options: { threads: { reply_control: "nobody" } },
    });
    expectProblem(r, 400, "public_invalid_request");
    expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(
      "/posts/0/destination_options/threads/reply_control",
    );
  });
});

describe("Meta's error classes through the engine (meta/errors.ts)", () => {
  test("9007/2207027 after FINISHED: Herald waits and publishes the same container, one post", async () => {
    fake.notReadyAfterFinished = 2;
    const containersBefore = fake.containers.length;
    const postsBefore = fake.posts.length;
    const calls = fake.publishCalls;
    try {
      const post = await api.publishNow(destinationId, { body: ["not ready yet"] });
      expect(post.state).toBe("published");
      expect(fake.containers.length - containersBefore).toBe(1);
      expect(fake.posts.length - postsBefore).toBe(1);
      expect(fake.publishCalls - calls).toBe(3);
      expect(post.receipts[0]).toMatchObject({ provider_object_id: fake.posts.at(-1)!.id });
    } finally {
      fake.notReadyAfterFinished = 0;
    }
  });

  test("4/2207051 (suspected spam): failed once with Meta's message, never retried automatically", async () => {
    fake.restrictedForSpam = true;
    const calls = fake.publishCalls;
    try {
      const post = await api.publishNow(destinationId, { body: ["buy now"] });
      expect(post.state).toBe("failed");
      expect(post.last_error).toMatchObject({ code: "provider_rejected", user_action: "check_account" });
      expect(post.last_error.message).toContain("We restrict certain activity to protect our community");
      s.clock.advance(6 * 60 * 60_000);
      await s.server.engine.runUntilIdle();
      const r = await s.request("GET", `/v1/workspaces/${ws}/posts/${post.id}?include=attempts`);
      expect(r.body.state).toBe("failed");
      expect(r.body.attempts).toHaveLength(1);
      expect(fake.publishCalls - calls).toBe(1);
    } finally {
      fake.restrictedForSpam = false;
    }
  });
});
