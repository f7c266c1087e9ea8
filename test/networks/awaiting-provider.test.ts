// The engine's side of networks that publish asynchronously, driven through the real server against
// the Threads fake: a post waits in `awaiting-provider` through quiet status checks, an expired
// container is sent again, a refused one fails and is sent afresh on retry, a thread continues after
// a pending item, and the credentials-renewal job renews a token before it dies unused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { engineOf } from "../../src/db/engine.ts";
import { tables } from "../helpers/tables.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { MAX_AUTOMATIC_RETRIES } from "../../src/modules/publishing/failures.ts";
import { THREADS_PENDING_CHECK_MS } from "../../src/providers/threads/publish.ts";
import { THREADS_REFRESH_AHEAD_MS } from "../../src/providers/threads/adapter.ts";
import { jpeg } from "../assets/samples.ts";
import { uploadAsset } from "../assets/helpers.ts";
import { startThreadsFake, type ThreadsFake } from "../fakes/threads.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { outbox } from "../posts/engine-helpers.ts";
import type { StoredProviderPending } from "../../src/db/pending.ts";
import { openPending, sealPending } from "../../src/modules/publishing/pending.ts";
import type { PostsWorld } from "../posts/helpers.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

const { posts } = tables;

const DAY_MS = 24 * 60 * 60_000;
let s: TestServer;
let fake: ThreadsFake;
let ws: string;
let destinationId: string;
let n = 0;

beforeAll(async () => {
  const clock = new ManualClock(Date.parse("2026-03-01T12:00:00.000Z"));
  fake = await startThreadsFake({ mediaProcessingPolls: 0, now: () => clock.now() });
  s = await startTestServer({
    clock,
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      HERALD_THREADS_CLIENT_ID: fake.app.clientId,
      HERALD_THREADS_CLIENT_SECRET: fake.app.clientSecret,
      HERALD_THREADS_API_BASE: fake.origin,
      HERALD_THREADS_AUTH_BASE: fake.origin,
    },
  });
  ws = s.owner.workspaceId;
  destinationId = await connectThreads();
});
afterAll(async () => {
  await s.stop();
  await fake.stop();
});

async function connectThreads(): Promise<string> {
  const started = await s.request("POST", `/v1/workspaces/${ws}/destination-connections`, {
    body: { provider: "threads" },
  });
  expect(started.status).toBe(201);
  const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
  expect((await returnFromOAuth(authorize.headers.get("location")!)).status).toBe(200);
  const done = await s.request("GET", `/v1/workspaces/${ws}/destination-connections/${started.body.id}`);
  expect(done.body.status).toBe("completed");
  return done.body.destination_id;
}

/**
 * Create Post now with one Threads post whose item `imageItem` carries `images` fresh images (two or
 * more: a carousel); returns its id.
 */
async function postWithImage(body: string[], imageItem = 0, images = 1): Promise<string> {
  const assets = [];
  for (let i = 0; i < images; i++)
    assets.push(
      await uploadAsset(s, ws, jpeg(16 + 2 * i, 12), { contentType: "image/jpeg", fileName: "a.jpg" }),
    );
  const r = await s.request("POST", `/v1/workspaces/${ws}/posts`, {
    headers: { "idempotency-key": `await-${++n}` },
    body: {
      when: "now",
      confirmed: true,
      group: `await-${n}`,
      posts: [
        {
          destination_id: destinationId,
          body,
          media_items: assets.map((asset) => ({ asset_id: asset.id, item_index: imageItem })),
        },
      ],
    },
  });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 202 });
  return r.body.posts[0].id;
}

async function post(id: string) {
  const r = await s.request("GET", `/v1/workspaces/${ws}/posts/${id}?include=attempts`);
  expect(r.status).toBe(200);
  return r.body;
}

async function pendingColumn(id: string): Promise<unknown> {
  const rows = await engineOf(s.herald.db).query<{ provider_pending: string | null }>(
    "SELECT provider_pending FROM posts WHERE id = ?",
    [id],
  );
  return rows[0]!.provider_pending === null ? null : JSON.parse(rows[0]!.provider_pending);
}

const events = async (id: string) => (await outbox({ s } as PostsWorld, id)).map((e) => e.type);
const publishCalls = () => fake.requests.filter((r) => r.path.endsWith("/threads_publish")).length;

/** Moves the clock past the next status check and runs the engine until it has nothing due. */
async function nextCheck(): Promise<void> {
  s.clock.advance(THREADS_PENDING_CHECK_MS + 1);
  await s.server.engine.runUntilIdle();
}

describe("awaiting-provider", () => {
  test("status checks that find the container still processing are quiet; one attempt spans the wait", async () => {
    fake.mediaProcessingPolls = 1_000;
    const id = await postWithImage(["processing slowly"]);
    await s.server.engine.runUntilIdle();
    expect((await post(id)).state).toBe("awaiting-provider");
    const stored = (await pendingColumn(id)) as StoredProviderPending;
    expect(stored).toMatchObject({ item_index: 0, since: s.clock.now() });
    // What the status check needs is sealed like a token: the container id is not readable in the row.
    expect(Object.keys(stored).sort()).toEqual(["item_index", "sealed", "since"]);
    const container = fake.containers.at(-1)!.id;
    expect(JSON.stringify(stored)).not.toContain(container);
    expect(openPending(s.herald, stored)!.data).toEqual({ container, children: [] });
    for (let check = 0; check < 3; check++) await nextCheck();
    const waiting = await post(id);
    expect(waiting).toMatchObject({ state: "awaiting-provider", attempt_count: 1 });
    expect(waiting.attempts.map((a: any) => a.status)).toEqual(["started"]);
    expect(await events(id)).toEqual(["post.awaiting-provider"]);
    expect((await pendingColumn(id)) as object).toMatchObject({ item_index: 0, since: stored.since });

    const before = publishCalls();
    fake.finishProcessing();
    await nextCheck();
    const done = await post(id);
    expect(done).toMatchObject({ state: "published", attempt_count: 1 });
    expect(done.attempts.map((a: any) => a.status)).toEqual(["succeeded"]);
    expect(await events(id)).toEqual(["post.awaiting-provider", "post.published"]);
    expect(await pendingColumn(id)).toBeNull();
    expect(publishCalls()).toBe(before + 1);
    // Nothing is left to check: later ticks publish nothing more.
    await nextCheck();
    expect(publishCalls()).toBe(before + 1);
    fake.mediaProcessingPolls = 0;
  });

  test("a pending item stored before sealing (plain data) is still checked and published", async () => {
    fake.mediaProcessingPolls = 1_000;
    const id = await postWithImage(["stored plain"]);
    await s.server.engine.runUntilIdle();
    const opened = openPending(s.herald, (await pendingColumn(id)) as StoredProviderPending)!;
    await inTransaction(s.herald.db, (tx) =>
      tx.update(posts).set({ providerPending: opened }).where(eq(posts.id, id)),
    );
    expect(Object.keys((await pendingColumn(id)) as object).sort()).toEqual(["data", "item_index", "since"]);
    const before = publishCalls();
    fake.finishProcessing();
    await nextCheck();
    expect((await post(id)).state).toBe("published");
    expect(publishCalls()).toBe(before + 1);
    fake.mediaProcessingPolls = 0;
  });

  test("a container the network let expire is created again and published once", async () => {
    fake.mediaProcessingPolls = 1_000;
    fake.nextContainerEnds({ status: "EXPIRED" });
    const id = await postWithImage(["expires first"]);
    await s.server.engine.runUntilIdle();
    const first = fake.containers.at(-1)!;
    fake.mediaProcessingPolls = 0;
    fake.finishProcessing();
    expect(first.status).toBe("EXPIRED");
    await nextCheck();
    expect((await post(id)).state).toBe("published");
    const published = fake.posts.filter((p) => p.text === "expires first");
    expect(published).toHaveLength(1);
    expect(published[0]!.containerId).not.toBe(first.id);
  });

  test("a container that fails processing fails the post; a retry sends a new container", async () => {
    fake.mediaProcessingPolls = 1_000;
    fake.nextContainerEnds({ status: "ERROR", errorMessage: "FAILED_PROCESSING_VIDEO" });
    const id = await postWithImage(["refused by processing"]);
    await s.server.engine.runUntilIdle();
    fake.finishProcessing();
    fake.mediaProcessingPolls = 0;
    await nextCheck();
    const failed = await post(id);
    expect(failed.state).toBe("failed");
    expect(failed.last_error.message).toContain("FAILED_PROCESSING_VIDEO");
    expect(await pendingColumn(id)).toBeNull();
    expect(await events(id)).toEqual(["post.awaiting-provider", "post.failed"]);

    const containers = fake.containers.length;
    const retried = await s.request("POST", `/v1/workspaces/${ws}/posts/${id}/retry`, {
      headers: { "idempotency-key": `retry-${id}` },
      body: { confirmed: true },
    });
    expect({ status: retried.status, text: retried.text }).toMatchObject({ status: 200 });
    await s.server.engine.runUntilIdle();
    expect((await post(id)).state).toBe("published");
    expect(fake.containers.length).toBe(containers + 1);
    expect(fake.posts.filter((p) => p.text === "refused by processing")).toHaveLength(1);
  });

  test("status checks that keep failing end in failed, but a retry checks the same container", async () => {
    fake.mediaProcessingPolls = 1_000;
    const id = await postWithImage(["checks keep failing"]);
    await s.server.engine.runUntilIdle();
    const container = fake.containers.at(-1)!;
    const containers = fake.containers.length;
    // Threads answers the status reads of this container with 503: the first check and every retry.
    fake.failNext(MAX_AUTOMATIC_RETRIES + 1, { status: 503, path: `/v1.0/${container.id}` });
    for (let i = 0; i < 10 && (await post(id)).state !== "failed"; i++) {
      s.clock.advance(2 * 60 * 60_000); // backoffs are 15 s to 3 h: a few steps, within the container life
      await s.server.engine.runUntilIdle();
    }
    const failed = await post(id);
    expect(failed.state).toBe("failed");
    expect(failed.last_error.message).toContain("automatic retries");
    expect((await pendingColumn(id)) as object).toMatchObject({ item_index: 0 });
    fake.mediaProcessingPolls = 0;
    fake.finishProcessing();
    const retried = await s.request("POST", `/v1/workspaces/${ws}/posts/${id}/retry`, {
      headers: { "idempotency-key": `retry-${id}` },
      body: { confirmed: true },
    });
    expect(retried.status).toBe(200);
    await s.server.engine.runUntilIdle();
    expect((await post(id)).state).toBe("published");
    expect(fake.containers.length).toBe(containers);
    expect(fake.posts.filter((p) => p.containerId === container.id)).toHaveLength(1);
  });

  test("a thread whose middle item waits continues after it, each item replying to the previous", async () => {
    fake.mediaProcessingPolls = 1_000;
    const id = await postWithImage(["one", "two, with a photo", "three"], 1);
    await s.server.engine.runUntilIdle();
    const waiting = await post(id);
    expect(waiting.state).toBe("awaiting-provider");
    expect(waiting.receipts.map((r: any) => r.item_index)).toEqual([0]);
    fake.mediaProcessingPolls = 0;
    fake.finishProcessing();
    await nextCheck();
    const done = await post(id);
    expect(done.state).toBe("published");
    const items = fake.posts.slice(-3);
    expect(items.map((p) => p.text)).toEqual(["one", "two, with a photo", "three"]);
    expect(items.map((p) => p.replyToId)).toEqual([null, items[0]!.id, items[1]!.id]);
    expect(done.receipts.map((r: any) => r.provider_object_id)).toEqual(items.map((p) => p.id));
  });
});

describe("recovery of a status check", () => {
  test("a process that died mid-check after Threads published: the check resumes and finds the post", async () => {
    fake.mediaProcessingPolls = 1_000;
    const id = await postWithImage(["published just before the crash"]);
    await s.server.engine.runUntilIdle();
    expect((await post(id)).state).toBe("awaiting-provider");
    const container = fake.containers.at(-1)!;
    fake.mediaProcessingPolls = 0;
    fake.finishProcessing();
    // The dead run: it claimed the check (processing, its lease), Threads published the container,
    // and the process died before storing the receipt.
    const published = await fetch(
      `${fake.origin}/v1.0/${fake.account.id}/threads_publish?creation_id=${container.id}` +
        `&access_token=${fake.issueToken()}`,
      { method: "POST" },
    );
    expect(published.status).toBe(200);
    const past = s.clock.now() - 1;
    await inTransaction(s.herald.db, (tx) =>
      tx
        .update(posts)
        .set({ state: "processing", leaseOwner: "proc_dead", leaseExpiresAt: past })
        .where(eq(posts.id, id)),
    );
    await s.server.engine.runUntilIdle();
    const done = await post(id);
    expect(done).toMatchObject({ state: "published", attempt_count: 1 });
    const onThreads = fake.posts.filter((p) => p.text === "published just before the crash");
    expect(onThreads).toHaveLength(1);
    expect(done.receipts.map((r: any) => r.provider_object_id)).toEqual([onThreads[0]!.id]);
    // The user heard of the wait and the publication, nothing else (no needs-attention).
    expect(await events(id)).toEqual(["post.awaiting-provider", "post.published"]);
  });
});

describe("a carousel through the engine", () => {
  test("its items wait; the CAROUSEL container is stored before it is published, once", async () => {
    fake.mediaProcessingPolls = 1_000;
    const id = await postWithImage(["a pair of photos"], 0, 2);
    await s.server.engine.runUntilIdle();
    expect((await post(id)).state).toBe("awaiting-provider");
    const waiting = openPending(s.herald, (await pendingColumn(id)) as StoredProviderPending)!;
    expect(waiting.data).toMatchObject({ container: null });
    expect(waiting.data.children).toHaveLength(2);

    fake.mediaProcessingPolls = 0;
    fake.finishProcessing();
    await nextCheck();
    const done = await post(id);
    expect(done).toMatchObject({ state: "published", attempt_count: 1 });
    const carousels = fake.containers.filter(
      (c) => c.mediaType === "CAROUSEL" && c.text === "a pair of photos",
    );
    expect(carousels).toHaveLength(1);
    expect(fake.posts.filter((p) => p.text === "a pair of photos")).toHaveLength(1);
    expect(await events(id)).toEqual(["post.awaiting-provider", "post.published"]);
  });

  test("a check that died after publishing the stored CAROUSEL container: the post is found, not sent twice", async () => {
    fake.mediaProcessingPolls = 1_000;
    const text = "a carousel before the crash";
    const id = await postWithImage([text], 0, 2);
    await s.server.engine.runUntilIdle();
    const waiting = openPending(s.herald, (await pendingColumn(id)) as StoredProviderPending)!;
    const children = waiting.data.children as string[];
    fake.mediaProcessingPolls = 0;
    fake.finishProcessing();

    // What the dead runs did: one check made the CAROUSEL container and stored it (as Herald does
    // before publishing one); the next published it on Threads and died before storing the receipt.
    const token = fake.issueToken();
    const made = await fetch(`${fake.origin}/v1.0/${fake.account.id}/threads`, {
      method: "POST",
      body: new URLSearchParams({
        media_type: "CAROUSEL",
        children: children.join(","),
        text,
        access_token: token,
      }),
    });
    const container = ((await made.json()) as { id: string }).id;
    await fetch(`${fake.origin}/v1.0/${container}?fields=status&access_token=${token}`);
    const published = await fetch(
      `${fake.origin}/v1.0/${fake.account.id}/threads_publish?creation_id=${container}&access_token=${token}`,
      { method: "POST" },
    );
    expect(published.status).toBe(200);
    const stored = sealPending(s.herald, { ...waiting, data: { children, container } });
    await inTransaction(s.herald.db, (tx) =>
      tx
        .update(posts)
        .set({
          state: "processing",
          providerPending: stored,
          leaseOwner: "proc_dead",
          leaseExpiresAt: s.clock.now() - 1,
        })
        .where(eq(posts.id, id)),
    );
    await s.server.engine.runUntilIdle();
    const done = await post(id);
    expect(done).toMatchObject({ state: "published", attempt_count: 1 });
    const onThreads = fake.posts.filter((p) => p.text === text);
    expect(onThreads).toHaveLength(1);
    expect(done.receipts.map((r: any) => r.provider_object_id)).toEqual([onThreads[0]!.id]);
    expect(fake.containers.filter((c) => c.mediaType === "CAROUSEL" && c.text === text)).toHaveLength(1);
  });
});

describe("credentials-renewal", () => {
  const refreshes = () => fake.requests.filter((r) => r.path === "/refresh_access_token").length;

  test("a token is left alone until it is within a week of expiry, then renewed", async () => {
    const before = refreshes();
    await s.server.scheduler.runNow("credentials-renewal");
    expect(refreshes()).toBe(before);
    // 60-day token: past 53 days it is inside the 7-day window.
    s.clock.advance(60 * DAY_MS - THREADS_REFRESH_AHEAD_MS + 60_000);
    await s.server.scheduler.runNow("credentials-renewal");
    expect(refreshes()).toBe(before + 1);
    const again = await s.request("GET", `/v1/workspaces/${ws}/destinations/${destinationId}`);
    expect(again.body.status).toBe("ready");
    // Renewed for 60 days from now: the next run has nothing to do.
    await s.server.scheduler.runNow("credentials-renewal");
    expect(refreshes()).toBe(before + 1);
  });

  test("a renewal the network refuses marks the destination for reauthorization at once", async () => {
    s.clock.advance(60 * DAY_MS - THREADS_REFRESH_AHEAD_MS + 60_000);
    fake.revokeTokens();
    await s.server.scheduler.runNow("credentials-renewal");
    const row = await s.request("GET", `/v1/workspaces/${ws}/destinations/${destinationId}`);
    expect(row.body).toMatchObject({ status: "unavailable", unavailable_reason: "reauthorization_required" });
  });
});
