import { afterEach, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { ManualClock, systemClock, type Clock } from "../../src/lib/clock.ts";
import { runTyped } from "../../src/providers/http.ts";
import {
  createThreadsAdapter,
  THREADS_LIMITS,
  THREADS_MIN_REFRESH_AGE_MS,
  THREADS_REFRESH_AHEAD_MS,
  THREADS_RULES,
  THREADS_SCOPES,
  type ThreadsAdapter,
} from "../../src/providers/threads/adapter.ts";
import { THREADS_PENDING_CHECK_MS } from "../../src/providers/threads/publish.ts";
import { META_NOT_READY_WAITS } from "../../src/providers/meta/containers.ts";
import { threadsLength } from "../../src/providers/threads/rules.ts";
import {
  type DestinationRef,
  type MediaItem,
  type MetricsTarget,
  type PublishedItem,
} from "../../src/providers/types.ts";
import { jpeg, mp4 } from "../assets/samples.ts";
import { bucHeader, graphErrorBody } from "../fakes/meta.ts";
import { startThreadsFake, type ThreadsFake, type ThreadsFakeOptions } from "../fakes/threads.ts";
import { adapterScenarios, registeredAs } from "./scenarios.ts";
import {
  expectProviderError,
  makePng,
  mediaItem,
  publishInput,
  expectPendingItem,
  expectPublished,
  servedFiles,
  type ServedFiles,
  fakeApp,
} from "./support.ts";

const HOUR = 60 * 60_000;
const DAY = 24 * HOUR;

// The files Meta "downloads": a small server standing in for Herald's signed download URLs.
const files: ServedFiles = new Map([
  ["/square.png", { type: "image/png", bytes: makePng({ width: 6, height: 6 }) }],
  ["/photo.jpg", { type: "image/jpeg", bytes: new Uint8Array(jpeg(8, 6)) }],
  ["/clip.mp4", { type: "video/mp4", bytes: new Uint8Array(mp4(16, 9, 3)) }],
]);
const { served, origin: mediaOrigin } = servedFiles(files, "image/png");

let fake: ThreadsFake;
afterEach(async () => fake?.stop());

function adapterFor(
  f: ThreadsFake,
  over: { clock?: Clock; maxPolls?: number; timeoutMs?: number; scopes?: string } = {},
) {
  return createThreadsAdapter({
    fetch,
    clock: over.clock ?? systemClock,
    timeoutMs: over.timeoutMs ?? 2000,
    pollIntervalMs: 2,
    maxPolls: over.maxPolls ?? 3,
    apps: {
      threads: fakeApp({ ...f.app, origin: f.origin }, { scopes: over.scopes ?? null }),
    },
  });
}

function destinationOf(f: ThreadsFake, ageMs = 0): DestinationRef {
  const issuedAt = Date.now() - ageMs;
  return {
    origin: f.origin,
    externalId: f.account.id,
    handle: f.account.username,
    credentials: { accessToken: f.issueToken({ ageMs }), issuedAt, expiresAt: issuedAt + 60 * DAY },
    limits: THREADS_LIMITS,
  };
}

async function start(
  options: ThreadsFakeOptions = {},
  over: Parameters<typeof adapterFor>[1] = {},
): Promise<{ adapter: ThreadsAdapter; destination: DestinationRef }> {
  fake = await startThreadsFake(options);
  return { adapter: adapterFor(fake, over), destination: destinationOf(fake) };
}

/** Runs `action` when the first request whose method and path match arrives, before the fake handles it. */
function onRequest(f: ThreadsFake, method: string, part: string, action: () => void): void {
  let done = false;
  const push = f.requests.push.bind(f.requests);
  f.requests.push = (...items) => {
    for (const item of items)
      if (!done && item.method === method && item.path.includes(part)) {
        done = true;
        action();
      }
    return push(...items);
  };
}

/** Publishes a container the way another Herald run would have (straight to the fake). */
async function publishBehindHerald(f: ThreadsFake, creationId: string, accessToken: string): Promise<string> {
  const response = await fetch(`${f.origin}/v1.0/${f.account.id}/threads_publish`, {
    method: "POST",
    body: new URLSearchParams({ creation_id: creationId, access_token: accessToken }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

describe("connecting through OAuth", () => {
  test("the authorization URL has the app, the comma-separated scopes and the state, and no PKCE", async () => {
    const { adapter } = await start();
    const url = new URL(
      adapter.authorizationUrl({
        origin: fake.origin,
        clientId: fake.app.clientId,
        redirectUri: "https://herald.example/oauth/callback/threads",
        state: "st_1",
        codeChallenge: "challenge-not-sent",
      }),
    );
    expect(url.origin + url.pathname).toBe(`${fake.origin}/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: fake.app.clientId,
      redirect_uri: "https://herald.example/oauth/callback/threads",
      scope: "threads_basic,threads_content_publish,threads_manage_replies,threads_manage_insights",
      response_type: "code",
      state: "st_1",
    });
    expect(THREADS_SCOPES).toHaveLength(4);
    const narrowed = adapterFor(fake, { scopes: "threads_basic,threads_content_publish" });
    const params = new URL(
      narrowed.authorizationUrl({
        origin: fake.origin,
        clientId: "c",
        redirectUri: "https://h.example/cb",
        state: "s",
        codeChallenge: "x",
      }),
    ).searchParams;
    expect(params.get("scope")).toBe("threads_basic,threads_content_publish");
  });

  test("code → short-lived token → long-lived token (60 days) → the profile", async () => {
    const { adapter } = await start({ redirectUris: ["https://herald.example/oauth/callback/threads"] });
    const redirectUri = "https://herald.example/oauth/callback/threads";
    const consent = await fetch(
      adapter.authorizationUrl({
        origin: fake.origin,
        clientId: fake.app.clientId,
        redirectUri,
        state: "st_2",
        codeChallenge: "unused",
      }),
      { redirect: "manual" },
    );
    expect(consent.status).toBe(302);
    const back = new URL(consent.headers.get("location")!);
    expect(back.origin + back.pathname).toBe(redirectUri);
    expect(back.searchParams.get("state")).toBe("st_2");
    const before = Date.now();
    const [account] = await adapter.completeAuthorization({
      origin: fake.origin,
      clientId: fake.app.clientId,
      clientSecret: fake.app.clientSecret,
      redirectUri,
      code: back.searchParams.get("code")!,
      codeVerifier: "unused",
    });
    expect(account).toMatchObject({
      externalId: fake.account.id,
      handle: "alice",
      displayName: "Alice",
      profileImageUrl: fake.account.threads_profile_picture_url,
      limits: THREADS_LIMITS,
    });
    const credentials = account!.credentials as { accessToken: string; expiresAt: number; issuedAt: number };
    expect(fake.tokens.get(credentials.accessToken)?.kind).toBe("long");
    expect(credentials.issuedAt).toBeGreaterThanOrEqual(before);
    expect(credentials.expiresAt - credentials.issuedAt).toBe(60 * DAY);
    expect(fake.requests.slice(1).map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /oauth/access_token",
      "GET /access_token",
      "GET /v1.0/me",
    ]);
  });

  test("a code that was already used is refused", async () => {
    const { adapter } = await start();
    const error = await expectProviderError(
      adapter.completeAuthorization({
        origin: fake.origin,
        clientId: fake.app.clientId,
        clientSecret: fake.app.clientSecret,
        redirectUri: "https://herald.example/cb",
        code: "AQ-not-issued",
        codeVerifier: "",
      }),
      "rejected",
    );
    expect(error.errorCode).toBe("100");
    expect(error.message).toContain("Invalid verification code format.");
  });
});

describe("refreshing the long-lived token", () => {
  test("a token younger than 24 h comes back unchanged without a call", async () => {
    const { adapter } = await start();
    const destination = destinationOf(fake, THREADS_MIN_REFRESH_AGE_MS - HOUR);
    const refreshed = await adapter.refreshCredentials({ destination });
    expect(refreshed).toEqual(destination.credentials);
    expect(fake.requests).toHaveLength(0);
    expect(adapter.refreshAheadMs).toBe(THREADS_REFRESH_AHEAD_MS);
    expect(THREADS_REFRESH_AHEAD_MS).toBe(7 * DAY);
  });

  test("a token 24 h old or more is exchanged for a new one valid 60 days", async () => {
    const clock = new ManualClock(Date.now());
    fake = await startThreadsFake();
    const adapter = adapterFor(fake, { clock });
    const destination = destinationOf(fake, 25 * HOUR);
    const refreshed = await adapter.refreshCredentials({ destination });
    expect(refreshed.accessToken).not.toBe(destination.credentials.accessToken);
    expect(fake.tokens.get(refreshed.accessToken as string)?.kind).toBe("long");
    expect(refreshed).toMatchObject({ issuedAt: clock.now(), expiresAt: clock.now() + 60 * DAY });
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /refresh_access_token"]);
  });

  test("a dead token (code 190) cannot be refreshed: auth_revoked", async () => {
    const { adapter } = await start();
    const destination = destinationOf(fake, 2 * DAY);
    fake.revokeTokens();
    const error = await expectProviderError(adapter.refreshCredentials({ destination }), "auth_revoked");
    expect(error.errorCode).toBe("190");
  });
});

describe("publishing", () => {
  test("a three-item thread: each item a container published as a reply to the previous one", async () => {
    const { adapter, destination } = await start();
    const published: PublishedItem[] = [];
    for (const [i, text] of ["first", "second", "third"].entries()) {
      const outcome = await adapter.publishItem(
        publishInput(destination, {
          text,
          itemIndex: i,
          root: published[0] ?? null,
          parent: published.at(-1) ?? null,
        }),
      );
      published.push(expectPublished(outcome));
    }
    expect(fake.posts.map((p) => [p.text, p.replyToId, p.mediaType])).toEqual([
      ["first", null, "TEXT_POST"],
      ["second", published[0]!.providerObjectId, "TEXT_POST"],
      ["third", published[1]!.providerObjectId, "TEXT_POST"],
    ]);
    expect(published.map((p) => p.providerObjectId)).toEqual(fake.posts.map((p) => p.id));
    expect(published.map((p) => p.url)).toEqual(fake.posts.map((p) => p.permalink));
    expect(published[0]!.url).toMatch(/^https:\/\/www\.threads\.net\/@alice\/post\/\w+$/);
    expect(fake.containers.every((c) => c.status === "PUBLISHED")).toBe(true);
    expect(published[2]!.provider).toMatchObject({
      operation: "POST /{user-id}/threads_publish",
      statusCode: 200,
    });
  });

  test("an image is pulled from its public URL, with alt text and reply_control", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 1 });
    const image = served("/photo.jpg");
    const outcome = await adapter.publishItem(
      publishInput(destination, {
        text: "a photo",
        media: [image],
        options: {
          alt_text_by_asset_id: { [image.assetId]: "a grey photo" },
          reply_control: "mentioned_only",
        },
      }),
    );
    const published = expectPublished(outcome);
    const [container] = fake.containers;
    expect(container).toMatchObject({
      mediaType: "IMAGE",
      mediaUrl: `${mediaOrigin()}/photo.jpg`,
      text: "a photo",
      altText: "a grey photo",
      replyControl: "mentioned_only",
      download: { status: 200, contentType: "image/jpeg", bytes: files.get("/photo.jpg")!.bytes.length },
    });
    expect(fake.posts[0]).toMatchObject({
      id: published.providerObjectId,
      mediaType: "IMAGE",
      text: "a photo",
    });
  });

  test("a carousel: each item a carousel container, then the CAROUSEL container once they are FINISHED", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 1 });
    const media = [served("/square.png"), served("/clip.mp4"), served("/photo.jpg", { altText: "own alt" })];
    const published = expectPublished(
      await adapter.publishItem(publishInput(destination, { text: "three things", media })),
    );
    const children = fake.containers.filter((c) => c.isCarouselItem);
    expect(children.map((c) => [c.mediaType, c.mediaUrl, c.text, c.altText, c.download?.status])).toEqual([
      ["IMAGE", `${mediaOrigin()}/square.png`, null, null, 200],
      ["VIDEO", `${mediaOrigin()}/clip.mp4`, null, null, 200],
      ["IMAGE", `${mediaOrigin()}/photo.jpg`, null, "own alt", 200],
    ]);
    const carousel = fake.containers.find((c) => c.mediaType === "CAROUSEL")!;
    expect(carousel).toMatchObject({
      text: "three things",
      children: children.map((c) => c.id),
      status: "PUBLISHED",
    });
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0]).toMatchObject({ id: published.providerObjectId, mediaType: "CAROUSEL_ALBUM" });
  });

  test("a video still processing after the inline polls is pending; checkPending publishes it once FINISHED", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 6 }, { maxPolls: 3 });
    const input = publishInput(destination, { text: "a clip", media: [served("/clip.mp4")] });
    const before = Date.now();
    const pending = expectPendingItem(await adapter.publishItem(input));
    const container = fake.containers[0]!;
    expect(pending.data).toEqual({ children: [], container: container.id });
    expect(pending.checkAgainAt).toBeGreaterThanOrEqual(before + THREADS_PENDING_CHECK_MS);
    expect(container).toMatchObject({ mediaType: "VIDEO", status: "IN_PROGRESS", pollsLeft: 3 });
    expect(fake.posts).toHaveLength(0);

    const still = await adapter.checkPending({ destination, item: input, data: pending.data, since: before });
    expect(still.state).toBe("pending");
    expect(fake.posts).toHaveLength(0);

    const done = await adapter.checkPending({ destination, item: input, data: pending.data, since: before });
    expect(done.state).toBe("published");
    const item = (done as { item: PublishedItem }).item;
    expect(fake.posts).toEqual([
      expect.objectContaining({ id: item.providerObjectId, text: "a clip", mediaType: "VIDEO" }),
    ]);
    expect(item.url).toBe(fake.posts[0]!.permalink);
    // IN_PROGRESS for 6 polls, FINISHED at the 7th: 3 inline, 3 in the first check, 1 in the second.
    expect(
      fake.requests.filter((r) => r.method === "GET" && r.path === `/v1.0/${container.id}`),
    ).toHaveLength(7);
  });

  test("a carousel whose items are still processing stays pending until they finish, then gets its container", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 50 }, { maxPolls: 2 });
    const input = publishInput(destination, {
      text: "pair",
      media: [served("/square.png"), served("/clip.mp4")],
    });
    const pending = expectPendingItem(await adapter.publishItem(input));
    expect(pending.data).toEqual({ children: fake.containers.map((c) => c.id), container: null });
    fake.finishProcessing();
    const since = Date.now();
    // The check makes the CAROUSEL container and hands it back to be stored before publishing it.
    const made = await adapter.checkPending({ destination, item: input, data: pending.data, since });
    expect(made.state).toBe("pending");
    const carousel = fake.containers.at(-1)!;
    expect(carousel.mediaType).toBe("CAROUSEL");
    expect(made.state === "pending" && made.data).toEqual({
      children: pending.data.children,
      container: carousel.id,
    });
    expect(made.state === "pending" && made.checkAgainAt).toBeLessThanOrEqual(Date.now());
    expect(fake.posts).toHaveLength(0);
    const done = await adapter.checkPending({
      destination,
      item: input,
      data: (made as { data: Record<string, unknown> }).data,
      since,
    });
    expect(done.state).toBe("published");
    expect(fake.containers.map((c) => c.mediaType)).toEqual(["IMAGE", "VIDEO", "CAROUSEL"]);
    expect(fake.posts).toHaveLength(1);
  });
});

describe("refusals and failures", () => {
  test("a container in ERROR is rejected with Meta's error message, and nothing is published", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 1 });
    fake.nextContainerEnds({ status: "ERROR", errorMessage: "INVALID_DURATION" });
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { media: [served("/clip.mp4")] })),
      "rejected",
    );
    expect(error.message).toContain("INVALID_DURATION");
    expect(fake.posts).toHaveLength(0);
  });

  test("media whose URL does not answer 200 fails its container (FAILED_DOWNLOADING_*): rejected", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    const missing = served("/missing.png", { contentType: "image/png" });
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { media: [missing] })),
      "rejected",
    );
    expect(fake.containers[0]!.download).toMatchObject({ status: 404 });
    expect(error.message).toContain("FAILED_DOWNLOADING_IMAGE");
    expect(error.message).toContain("public URL");
    expect(fake.posts).toHaveLength(0);
  });

  test("a carousel item in ERROR is rejected naming the media", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    const media = [
      served("/square.png"),
      served("/gone.mp4", { contentType: "video/mp4", assetId: "ast_clip" }),
    ];
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { media })),
      "rejected",
    );
    expect(error.message).toContain("media 1 (ast_clip)");
    expect(error.message).toContain("FAILED_DOWNLOADING_VIDEO");
    expect(fake.containers.some((c) => c.mediaType === "CAROUSEL")).toBe(false);
  });

  test("an EXPIRED container is gone when checked (nothing was published), transient when found inline", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 10 }, { maxPolls: 2 });
    fake.nextContainerEnds({ status: "EXPIRED" });
    const input = publishInput(destination, { media: [served("/clip.mp4")] });
    const pending = expectPendingItem(await adapter.publishItem(input));
    fake.finishProcessing();
    const status = await adapter.checkPending({
      destination,
      item: input,
      data: pending.data,
      since: Date.now(),
    });
    expect(status).toMatchObject({ state: "gone" });
    fake.nextContainerEnds({ status: "EXPIRED" });
    await expectProviderError(adapter.publishItem(publishInput(destination, { text: "late" })), "transient");
    expect(fake.posts).toHaveLength(0);
  });

  test("a container already PUBLISHED is never published again: its post is found on the profile", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 10 }, { maxPolls: 1 });
    const since = Date.now();
    const input = publishInput(destination, {
      text: "published by a run that died",
      media: [served("/clip.mp4")],
    });
    const pending = expectPendingItem(await adapter.publishItem(input));
    fake.finishProcessing();
    const mediaId = await publishBehindHerald(
      fake,
      String(pending.data.container),
      String(destination.credentials.accessToken),
    );
    const status = await adapter.checkPending({ destination, item: input, data: pending.data, since });
    expect(status.state).toBe("published");
    const item = (status as { item: PublishedItem }).item;
    expect(item).toMatchObject({ providerObjectId: mediaId, url: fake.posts[0]!.permalink });
    expect(fake.posts).toHaveLength(1);
    expect(fake.requests.filter((r) => r.path.endsWith("/threads_publish"))).toHaveLength(1);
  });

  test("a reply whose container was published already is found among the replies", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 10 }, { maxPolls: 1 });
    const root = expectPublished(await adapter.publishItem(publishInput(destination, { text: "root" })));
    const input = publishInput(destination, {
      text: "reply",
      itemIndex: 1,
      root,
      parent: root,
      media: [served("/clip.mp4")],
    });
    const pending = expectPendingItem(await adapter.publishItem(input));
    fake.finishProcessing();
    const mediaId = await publishBehindHerald(
      fake,
      String(pending.data.container),
      String(destination.credentials.accessToken),
    );
    const status = await adapter.checkPending({
      destination,
      item: input,
      data: pending.data,
      since: Date.now() - 1000,
    });
    expect(status).toMatchObject({ state: "published", item: { providerObjectId: mediaId } });
    expect(fake.requests.some((r) => r.path === `/v1.0/${fake.account.id}/replies`)).toBe(true);
  });

  test("a PUBLISHED container whose post cannot be told apart is outcome_unknown, and is not published again", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 10 }, { maxPolls: 1 });
    const since = Date.now();
    expectPublished(await adapter.publishItem(publishInput(destination, { text: "gm" })));
    const input = publishInput(destination, { text: "gm", media: [served("/clip.mp4")] });
    const pending = expectPendingItem(await adapter.publishItem(input));
    fake.finishProcessing();
    await publishBehindHerald(
      fake,
      String(pending.data.container),
      String(destination.credentials.accessToken),
    );
    const error = await expectProviderError(
      adapter.checkPending({ destination, item: input, data: pending.data, since }),
      "outcome_unknown",
    );
    expect(error.message).toContain("already published");
    expect(error.message).toContain("2 of the profile's latest posts match it");
    expect(fake.posts).toHaveLength(2);
  });

  test("a publish refused because another run just published the container reports that post", async () => {
    const { adapter, destination } = await start();
    onRequest(fake, "POST", "/threads_publish", () => {
      const container = fake.containers.at(-1)!;
      container.status = "PUBLISHED";
      fake.posts.push({
        id: "99",
        containerId: container.id,
        mediaType: "TEXT_POST",
        text: "raced",
        children: [],
        replyToId: null,
        replyControl: null,
        shortcode: "RACED",
        permalink: "https://www.threads.net/@alice/post/RACED",
        timestamp: Date.now(),
      });
      fake.failNext(1, {
        status: 400,
        path: "/threads_publish",
        body: graphErrorBody({ message: "The media container has already been published", code: 100 }),
      });
    });
    const published = expectPublished(
      await adapter.publishItem(publishInput(destination, { text: "raced" })),
    );
    expect(published).toMatchObject({
      providerObjectId: "99",
      url: "https://www.threads.net/@alice/post/RACED",
    });
    expect(fake.posts).toHaveLength(1);
  });

  test("after a successful publish an unreadable permalink falls back to the profile URL", async () => {
    const { adapter, destination } = await start();
    onRequest(fake, "POST", "/threads_publish", () => fake.failNext(1, { status: 500, path: "/v1.0/1" }));
    const published = expectPublished(
      await adapter.publishItem(publishInput(destination, { text: "no link" })),
    );
    expect(published.url).toBe("https://www.threads.net/@alice");
    expect(published.providerObjectId).toBe(fake.posts[0]!.id);
  });

  test("code 2 with is_transient: outcome_unknown on threads_publish, transient on a status read", async () => {
    const { adapter, destination } = await start();
    const body = graphErrorBody({ message: "An unexpected error has occurred.", code: 2, isTransient: true });
    fake.failNext(1, { status: 400, path: "/threads_publish", body });
    await expectProviderError(
      adapter.publishItem(publishInput(destination, { text: "maybe" })),
      "outcome_unknown",
    );
    fake.failNext(1, { status: 400, path: "/v1.0/1789", body });
    await expectProviderError(adapter.publishItem(publishInput(destination, { text: "read" })), "transient");
    expect(fake.posts).toHaveLength(0);
  });

  test("an unanswered threads_publish is outcome_unknown (the fake holds the post)", async () => {
    fake = await startThreadsFake();
    const adapter = adapterFor(fake, { timeoutMs: 300 });
    const destination = destinationOf(fake);
    fake.hangAfterReceive = true;
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { text: "lost" })),
      "outcome_unknown",
    );
    expect(error.errorCode).toBe("timeout");
    expect(fake.posts.map((p) => p.text)).toEqual(["lost"]);
  });

  test("text the network refuses (over 500 characters) is rejected with Meta's message", async () => {
    const { adapter, destination } = await start();
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { text: "👍".repeat(126) })),
      "rejected",
    );
    expect(error.message).toContain("Param text must be at most 500 characters long.");
    expect(error.errorCode).toBe("100");
    expect(fake.containers).toHaveLength(0);
  });

  test("the fake publishes a container once: a second threads_publish is refused", async () => {
    const { adapter, destination } = await start();
    expectPublished(await adapter.publishItem(publishInput(destination, { text: "once" })));
    const again = await fetch(`${fake.origin}/v1.0/${fake.account.id}/threads_publish`, {
      method: "POST",
      body: new URLSearchParams({
        creation_id: fake.containers[0]!.id,
        access_token: String(destination.credentials.accessToken),
      }),
    });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: { message: string } }).error.message).toContain(
      "already been published",
    );
    expect(fake.posts).toHaveLength(1);
  });

  test("a revoked token (code 190) is auth_revoked", async () => {
    const { adapter, destination } = await start();
    fake.revokeTokens();
    const error = await expectProviderError(adapter.publishItem(publishInput(destination)), "auth_revoked");
    expect(error.errorCode).toBe("190");
    expect(error.subcode).toBe("463");
  });

  test.each([4, 17, 32, 613, 80000, 80001, 80009, 80014])(
    "throttling code %d is transient with retryAt from X-Business-Use-Case-Usage",
    async (code) => {
      const { adapter, destination } = await start();
      const body = graphErrorBody({ message: "Rate limited", code });
      fake.failNext(1, { status: 400, path: "/threads", body, headers: bucHeader(7) });
      const before = Date.now();
      const error = await expectProviderError(adapter.publishItem(publishInput(destination)), "transient");
      expect(error.retryAt).toBeGreaterThanOrEqual(before + 7 * 60_000);
      expect(error.retryAt).toBeLessThan(Date.now() + 7 * 60_000 + 1000);
    },
  );

  test("throttling without an estimate waits 10 minutes", async () => {
    const { adapter, destination } = await start();
    fake.failNext(1, {
      status: 403,
      path: "/threads",
      body: graphErrorBody({ message: "User request limit reached", code: 17 }),
    });
    const before = Date.now();
    const error = await expectProviderError(adapter.publishItem(publishInput(destination)), "transient");
    expect(error.retryAt! - before).toBeGreaterThanOrEqual(10 * 60_000);
  });

  test("the 250-posts-a-day limit (here 2) is transient with a retry time, and publishes nothing more", async () => {
    const { adapter, destination } = await start({ dailyCap: 2 });
    for (const text of ["one", "two"])
      expectPublished(await adapter.publishItem(publishInput(destination, { text })));
    const before = Date.now();
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { text: "three" })),
      "transient",
    );
    expect(error.subcode).toBe("2207042");
    expect(error.retryAt).toBeGreaterThanOrEqual(before + HOUR);
    expect(fake.posts.map((p) => p.text)).toEqual(["one", "two"]);
  });

  test("a public URL that cannot be made is not_sent: no container was created", async () => {
    const { adapter, destination } = await start();
    const broken = {
      ...served("/square.png"),
      publicUrl: () => {
        throw new Error("signing key missing");
      },
    };
    const error = await expectProviderError(
      runTyped({
        operation: "publish",
        work: () => adapter.publishItem(publishInput(destination, { media: [broken] })),
      }),
      "not_sent",
    );
    expect(error.message).toContain("signing key missing");
    expect(fake.containers).toHaveLength(0);
  });

  test("media still processing 24 hours after it went pending is given up (rejected)", async () => {
    const clock = new ManualClock(Date.now());
    fake = await startThreadsFake({ mediaProcessingPolls: 100 });
    const adapter = adapterFor(fake, { clock, maxPolls: 1 });
    const destination = destinationOf(fake);
    const input = publishInput(destination, { media: [served("/clip.mp4")] });
    const pending = expectPendingItem(await adapter.publishItem(input));
    const since = clock.now();
    clock.advance(DAY + HOUR);
    await expectProviderError(
      adapter.checkPending({ destination, item: input, data: pending.data, since }),
      "rejected",
    );
    expect(fake.posts).toHaveLength(0);
  });
});

describe("Meta's error classes at threads_publish (meta/errors.ts)", () => {
  test("9007/2207027 after FINISHED: Herald waits and publishes the same container, exactly once", async () => {
    const { adapter, destination } = await start({ notReadyAfterFinished: 2 });
    const item = expectPublished(
      await adapter.publishItem(publishInput(destination, { text: "wait for it" })),
    );
    expect(fake.containers).toHaveLength(1);
    expect(fake.posts.map((p) => [p.containerId, p.text])).toEqual([[fake.containers[0]!.id, "wait for it"]]);
    expect(item.providerObjectId).toBe(fake.posts[0]!.id);
    expect(fake.publishCalls).toBe(3);
  });

  test("still not ready after the waits: pending with its container; a check failing transient keeps it", async () => {
    const waits = META_NOT_READY_WAITS + 1;
    const { adapter, destination } = await start({ notReadyAfterFinished: 2 * waits });
    const input = publishInput(destination, { text: "patience" });
    const since = Date.now();
    const pending = expectPendingItem(await adapter.publishItem(input));
    expect(pending.data.container).toBe(fake.containers[0]!.id);
    const error = await expectProviderError(
      adapter.checkPending({ destination, item: input, data: pending.data, since }),
      "transient",
    );
    expect([error.errorCode, error.subcode]).toEqual(["9007", "2207027"]);
    const status = await adapter.checkPending({ destination, item: input, data: pending.data, since });
    expect(status).toMatchObject({ state: "published", item: { providerObjectId: fake.posts[0]!.id } });
    expect(fake.containers).toHaveLength(1);
    expect(fake.posts).toHaveLength(1);
    expect(fake.publishCalls).toBe(2 * waits + 1);
  });

  test("4/2207051 (suspected spam) is rejected with Meta's message: check the account, no retry time", async () => {
    const { adapter, destination } = await start();
    fake.restrictedForSpam = true;
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { text: "buy now" })),
      "rejected",
    );
    expect(error.message).toContain("We restrict certain activity to protect our community");
    expect([error.errorCode, error.subcode, error.userAction, error.retryAt]).toEqual([
      "4",
      "2207051",
      "check_account",
      null,
    ]);
    expect(fake.publishCalls).toBe(1);
    expect(fake.posts).toHaveLength(0);
  });
});

describe("checkItem and options", () => {
  const check = (text: string, media: MediaItem[] = [], publicMediaUrls = true) =>
    THREADS_RULES.checkItem!({
      text,
      media,
      options: {},
      limits: THREADS_LIMITS,
      publicMediaUrls,
      externalId: "1",
    });
  const pointers = (problems: { pointer: string }[]) => problems.map((p) => p.pointer);

  test.each([
    [500, true, "a".repeat(500)],
    [501, false, "a".repeat(501)],
    [500, true, "é".repeat(500)],
    [500, true, "語".repeat(500)],
    [500, true, "👍".repeat(125)],
    [504, false, "👍".repeat(126)],
    [500, true, `${"a".repeat(492)}👍🏽`],
    [501, false, `${"a".repeat(493)}👍🏽`],
  ])("case %#: counts %d characters (emojis by their UTF-8 bytes), fits: %p", (length, fits, text) => {
    expect(threadsLength(text)).toBe(length);
    expect(check(text)).toEqual(fits ? [] : [expect.objectContaining({ pointer: "" })]);
  });

  test.each([
    ["image/jpeg", 8_000_000, []],
    ["image/png", 8_000_001, ["/media/0"]],
    ["image/gif", 10, ["/media/0"]],
    ["image/webp", 10, ["/media/0"]],
    ["video/mp4", 1_000_000_000, []],
    ["video/quicktime", 1_000_000_001, ["/media/0"]],
  ])("%s of %d bytes → %p", (contentType, byteSize, expected) => {
    expect(pointers(check("x", [mediaItem({ contentType, byteSize })]))).toEqual(expected);
  });

  test("20 media pass; the 21st is refused", () => {
    const twenty = Array.from({ length: 20 }, (_, i) => mediaItem({ assetId: `a${i}` }));
    expect(check("x", twenty)).toEqual([]);
    expect(pointers(check("x", [...twenty, mediaItem({ assetId: "a20" })]))).toEqual(["/media/20"]);
  });

  test("media is refused when Herald has no public URL for Meta to download it from", () => {
    const problems = check("x", [mediaItem({}), mediaItem({ assetId: "b" })], false);
    expect(pointers(problems)).toEqual(["/media/0", "/media/1"]);
    expect(problems[0]!.detail).toContain("HERALD_BASE_URL");
    expect(check("text alone needs no URL", [], false)).toEqual([]);
  });

  test("options: alt text only for attached assets; reply_control from Threads' list", () => {
    expect(
      THREADS_RULES.checkOptions!({
        options: { alt_text_by_asset_id: { ast_1: "ok", ast_9: "no" } },
        assetIds: ["ast_1"],
      }),
    ).toEqual([
      { pointer: "/alt_text_by_asset_id/ast_9", detail: "names an asset that is not attached to the post" },
    ]);
    const schema = THREADS_RULES.optionsSchema!;
    for (const value of ["everyone", "accounts_you_follow", "mentioned_only"])
      expect(Value.Check(schema, { reply_control: value })).toBe(true);
    expect(Value.Check(schema, { reply_control: "nobody" })).toBe(false);
    expect(Value.Check(schema, { alt_text_by_asset_id: { a: "x".repeat(1001) } })).toBe(false);
    expect(Value.Check(schema, { languages: ["en"] })).toBe(false);
  });
});

describe("metrics (GET /{media-id}/insights)", () => {
  const target = (p: PublishedItem): MetricsTarget => ({
    providerObjectId: p.providerObjectId,
    url: p.url,
    extra: p.extra,
    publishedAt: Date.now(),
  });
  const publish = async (adapter: ThreadsAdapter, destination: DestinationRef, text: string) =>
    expectPublished(await adapter.publishItem(publishInput(destination, { text })));
  const insightCalls = () => fake.requests.filter((r) => r.method === "GET" && r.path.endsWith("/insights"));

  test("views, replies, likes, and reposts + quotes + shares; no impressions, saves or link clicks", async () => {
    const { adapter, destination } = await start();
    expect(adapter.metricsBatchSize).toBe(25);
    const post = await publish(adapter, destination, "counted");
    fake.posts[0]!.counts = { views: 4523, likes: 12, replies: 3, reposts: 2, quotes: 1, shares: 4 };
    const results = await adapter.fetchMetrics!({ destination, targets: [target(post)] });
    expect(results).toEqual([
      {
        providerObjectId: post.providerObjectId,
        kind: "metrics",
        values: { views: 4523, comments: 3, reactions: 12, shares: 7 },
        providerAsOf: null,
      },
    ]);
    expect(insightCalls().map((r) => r.path)).toEqual([`/v1.0/${post.providerObjectId}/insights`]);
  });

  test("one insights call per post: Threads reads posts one at a time", async () => {
    const { adapter, destination } = await start();
    const posts = [];
    for (const text of ["a", "b", "c"]) posts.push(await publish(adapter, destination, text));
    fake.posts.forEach((p, i) => (p.counts = { likes: i + 1 }));
    const results = await adapter.fetchMetrics!({ destination, targets: posts.map(target) });
    expect(
      results.map((r) => [r.providerObjectId, r.kind === "metrics" ? r.values.reactions : null]),
    ).toEqual(posts.map((p, i) => [p.providerObjectId, i + 1]));
    expect(insightCalls().map((r) => r.path)).toEqual(
      posts.map((p) => `/v1.0/${p.providerObjectId}/insights`),
    );
  });

  test("a deleted post is missing (Graph code 100 for that post alone); the others are read", async () => {
    const { adapter, destination } = await start();
    const kept = await publish(adapter, destination, "kept");
    const gone = await publish(adapter, destination, "deleted later");
    fake.posts = fake.posts.filter((p) => p.id !== gone.providerObjectId);
    const results = await adapter.fetchMetrics!({ destination, targets: [target(gone), target(kept)] });
    expect(results[0]).toMatchObject({ providerObjectId: gone.providerObjectId, kind: "missing" });
    expect((results[0] as { reason: string }).reason).toContain("does not exist");
    expect(results[1]).toMatchObject({ providerObjectId: kept.providerObjectId, kind: "metrics" });
  });

  test("a 429 (throttled app) fails the call: transient with retryAt from X-Business-Use-Case-Usage", async () => {
    const { adapter, destination } = await start();
    const post = await publish(adapter, destination, "limited");
    fake.failNext(1, { status: 429, path: "/insights", headers: bucHeader(7) });
    const before = Date.now();
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination, targets: [target(post), target(post)] }),
      "transient",
    );
    expect(error.statusCode).toBe(429);
    expect(error.retryAt).toBeGreaterThanOrEqual(before + 7 * 60_000);
    expect(insightCalls()).toHaveLength(1); // the batch stops at the throttled call
  });

  test("throttling in Meta's envelope (code 4, HTTP 400) is transient with a retry time too", async () => {
    const { adapter, destination } = await start();
    const post = await publish(adapter, destination, "throttled");
    const body = graphErrorBody({ message: "Application request limit reached", code: 4 });
    fake.failNext(1, { status: 400, path: "/insights", body });
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination, targets: [target(post)] }),
      "transient",
    );
    expect(error.retryAt! - Date.now()).toBeGreaterThan(9 * 60_000);
  });

  test("an expired token (code 190) is auth_revoked: Meta cannot renew a dead long-lived token", async () => {
    const { adapter, destination } = await start();
    const post = await publish(adapter, destination, "expired");
    const expired: DestinationRef = {
      ...destination,
      credentials: { ...destination.credentials, accessToken: fake.issueToken({ ageMs: 61 * DAY }) },
    };
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination: expired, targets: [target(post)] }),
      "auth_revoked",
    );
    expect([error.errorCode, error.subcode]).toEqual(["190", "463"]);
  });
});

adapterScenarios("threads", async () => {
  const f = await startThreadsFake();
  const destination = destinationOf(f);
  return {
    adapter: adapterFor(f),
    destination,
    fake: f,
    // The publish call: the container call is idempotent (a container publishes nothing), so a 500
    // there is transient; the scenarios that expect outcome_unknown are about the publish.
    createPath: "/threads_publish",
    stored: () => f.posts.map((p) => ({ id: p.id, text: p.text, replyTo: p.replyToId })),
    stop: () => f.stop(),
  };
});

registeredAs("threads", {
  connection: "fixed-app",
  idempotentCreate: false,
  pendingChecksRepeatable: true,
});
