// The Instagram adapter (through Facebook Login) against the graph.facebook.com fake: connecting the
// professional accounts linked to the person's Pages, containers for a single image, a carousel and a
// reel (media really downloaded from a small file server), the publishing limit, every container
// state (IN_PROGRESS → pending, ERROR, EXPIRED, PUBLISHED by an earlier run), and the refusals.
// Metrics: each media's insights, its like and comment counts when the insights have nothing ("Not
// enough viewers", an empty answer), a deleted media, throttling and a dead token.
import { afterEach, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { ManualClock, systemClock, type Clock } from "../../src/lib/clock.ts";
import { runTyped } from "../../src/providers/http.ts";
import {
  createInstagramAdapter,
  INSTAGRAM_LIMITS,
  INSTAGRAM_RULES,
  INSTAGRAM_SCOPES,
  type InstagramAdapter,
} from "../../src/providers/instagram/adapter.ts";
import {
  INSTAGRAM_INSIGHT_METRICS,
  INSTAGRAM_METRICS_BATCH_SIZE,
} from "../../src/providers/instagram/metrics.ts";
import { INSTAGRAM_PENDING_CHECK_MS } from "../../src/providers/instagram/publish.ts";
import { META_NOT_READY_WAITS } from "../../src/providers/meta/containers.ts";
import {
  type DestinationRef,
  type MediaItem,
  type MetricsTarget,
  type PublishedItem,
  type PublishItemInput,
} from "../../src/providers/types.ts";
import { jpeg, mp4 } from "../assets/samples.ts";
import { startFacebookFake, type FacebookFake, type FacebookFakeOptions } from "../fakes/facebook.ts";
import { bucHeader, graphErrorBody } from "../fakes/meta.ts";
import { onNth } from "../posts/engine-helpers.ts";
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
const CAFE_PAGE = "101000000000001";
const CAFE_IG = "17841400000000001";
const REDIRECT = "https://herald.example/oauth/callback/instagram";

// The files Meta "downloads": a small server standing in for Herald's signed download URLs.
const files: ServedFiles = new Map([
  ["/photo.jpg", { type: "image/jpeg", bytes: new Uint8Array(jpeg(8, 6)) }],
  ["/square.jpg", { type: "image/jpeg", bytes: new Uint8Array(jpeg(6, 6)) }],
  ["/square.png", { type: "image/png", bytes: makePng({ width: 6, height: 6 }) }],
  ["/clip.mp4", { type: "video/mp4", bytes: new Uint8Array(mp4(1080, 1920, 5)) }],
]);
const { served, origin: fileOrigin } = servedFiles(files, "image/jpeg");

let fake: FacebookFake;
afterEach(async () => fake?.stop());

function adapterFor(
  f: FacebookFake,
  over: { clock?: Clock; maxPolls?: number; timeoutMs?: number; scopes?: string } = {},
): InstagramAdapter {
  return createInstagramAdapter({
    fetch,
    clock: over.clock ?? systemClock,
    timeoutMs: over.timeoutMs ?? 2000,
    pollIntervalMs: 2,
    maxPolls: over.maxPolls ?? 3,
    apps: {
      instagram: fakeApp({ ...f.app, origin: f.origin }, { scopes: over.scopes ?? null }),
    },
  });
}

function destinationOf(f: FacebookFake): DestinationRef {
  return {
    origin: f.origin,
    externalId: CAFE_IG,
    handle: "herald.cafe",
    credentials: { accessToken: f.issuePageToken(CAFE_PAGE), pageId: CAFE_PAGE },
    limits: INSTAGRAM_LIMITS,
  };
}

async function start(
  options: FacebookFakeOptions = {},
  over: Parameters<typeof adapterFor>[1] = {},
): Promise<{ adapter: InstagramAdapter; destination: DestinationRef }> {
  fake = await startFacebookFake(options);
  return { adapter: adapterFor(fake, over), destination: destinationOf(fake) };
}

/** An image post to the café's account. */
function imagePost(destination: DestinationRef, over: Partial<PublishItemInput> = {}): PublishItemInput {
  return publishInput(destination, { text: "a photo", media: [served("/photo.jpg")], ...over });
}

/** Publishes a container the way another Herald run would have (straight to the fake). */
async function publishBehindHerald(
  f: FacebookFake,
  creationId: string,
  accessToken: string,
): Promise<string> {
  const response = await fetch(`${f.origin}/v25.0/${CAFE_IG}/media_publish`, {
    method: "POST",
    body: new URLSearchParams({ creation_id: creationId, access_token: accessToken }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

const requestLine = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

describe("connecting through Facebook Login", () => {
  test("the dialog URL asks for the Instagram and Pages scopes", async () => {
    const { adapter } = await start();
    const url = new URL(
      adapter.authorizationUrl({
        origin: fake.origin,
        clientId: fake.app.clientId,
        redirectUri: REDIRECT,
        state: "st_1",
        codeChallenge: "unused",
      }),
    );
    expect(url.origin + url.pathname).toBe(`${fake.origin}/v25.0/dialog/oauth`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: fake.app.clientId,
      redirect_uri: REDIRECT,
      state: "st_1",
      scope:
        "instagram_basic,instagram_content_publish,instagram_manage_insights,pages_show_list," +
        "pages_read_engagement,business_management,instagram_manage_comments",
      response_type: "code",
    });
    expect(INSTAGRAM_SCOPES).toHaveLength(7);
  });

  test("one destination per linked professional account; a Page without one is skipped", async () => {
    const { adapter } = await start();
    const consent = await fetch(
      adapter.authorizationUrl({
        origin: fake.origin,
        clientId: fake.app.clientId,
        redirectUri: REDIRECT,
        state: "st_2",
        codeChallenge: "unused",
      }),
      { redirect: "manual" },
    );
    const code = new URL(consent.headers.get("location")!).searchParams.get("code")!;
    const accounts = await adapter.completeAuthorization({
      origin: fake.origin,
      clientId: fake.app.clientId,
      clientSecret: fake.app.clientSecret,
      redirectUri: REDIRECT,
      code,
      codeVerifier: "unused",
    });
    expect(accounts.map((a) => [a.externalId, a.handle, a.displayName, a.profileImageUrl])).toEqual([
      [CAFE_IG, "herald.cafe", "Herald Café", `${fake.origin}/pictures/herald.cafe.jpg`],
      ["17841400000000003", "heraldbooks", "Herald Books", `${fake.origin}/pictures/heraldbooks.jpg`],
    ]);
    const credentials = accounts.map((a) => a.credentials as { accessToken: string; pageId: string });
    expect(credentials.map((c) => c.pageId)).toEqual([CAFE_PAGE, "101000000000003"]);
    for (const c of credentials)
      expect(fake.tokens.get(c.accessToken)).toMatchObject({
        kind: "page",
        pageId: c.pageId,
        expiresAt: Infinity,
      });
    expect(accounts[0]!.limits).toEqual(INSTAGRAM_LIMITS);
    expect(fake.requests.slice(1).map(requestLine)).toEqual([
      "GET /v25.0/oauth/access_token",
      "GET /v25.0/oauth/access_token",
      "GET /v25.0/me/accounts",
      `GET /v25.0/${CAFE_IG}`,
      "GET /v25.0/17841400000000003",
    ]);
  });

  test("no Page with a linked Instagram account: refused, saying so", async () => {
    fake = await startFacebookFake({
      pages: [{ id: "101000000000009", name: "Plain Page", username: null, instagram: null }],
    });
    const adapter = adapterFor(fake);
    const consent = await fetch(
      adapter.authorizationUrl({
        origin: fake.origin,
        clientId: fake.app.clientId,
        redirectUri: REDIRECT,
        state: "s",
        codeChallenge: "",
      }),
      { redirect: "manual" },
    );
    const error = await expectProviderError(
      adapter.completeAuthorization({
        origin: fake.origin,
        clientId: fake.app.clientId,
        clientSecret: fake.app.clientSecret,
        redirectUri: REDIRECT,
        code: new URL(consent.headers.get("location")!).searchParams.get("code")!,
        codeVerifier: "",
      }),
      "rejected",
    );
    expect(error.message).toContain("Instagram professional account");
  });

  test("Page tokens do not expire: nothing to renew, a dead one needs a new connection", async () => {
    const { adapter, destination } = await start();
    expect(adapter.refreshAheadMs).toBeNull();
    await expectProviderError(adapter.refreshCredentials({ destination }), "auth_revoked");
  });
});

describe("publishing", () => {
  test("a single image: the publishing limit is read, the image pulled, published once, permalink receipt", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 1 });
    const image = served("/photo.jpg");
    const published = expectPublished(
      await adapter.publishItem(
        publishInput(destination, {
          text: "Fresh bread #bakery",
          media: [image],
          options: { alt_text_by_asset_id: { [image.assetId]: "a loaf on a board" } },
        }),
      ),
    );
    const [container] = fake.containers;
    expect(container).toMatchObject({
      mediaType: "IMAGE",
      mediaUrl: `${fileOrigin()}/photo.jpg`,
      caption: "Fresh bread #bakery",
      altText: "a loaf on a board",
      isCarouselItem: false,
      statusCode: "PUBLISHED",
      download: { status: 200, contentType: "image/jpeg", bytes: files.get("/photo.jpg")!.bytes.length },
    });
    const post = fake.igPosts[0]!;
    expect(post).toMatchObject({
      mediaType: "IMAGE",
      caption: "Fresh bread #bakery",
      containerId: container!.id,
    });
    expect(published).toMatchObject({
      providerObjectId: post.id,
      url: post.permalink,
      provider: { operation: "POST /{ig-user-id}/media_publish", statusCode: 200 },
    });
    expect(published.url).toMatch(/^https:\/\/www\.instagram\.com\/p\/\w+\/$/);
    expect(fake.requests.map(requestLine)).toEqual([
      `GET /v25.0/${CAFE_IG}/content_publishing_limit`,
      `POST /v25.0/${CAFE_IG}/media`,
      `GET /v25.0/${container!.id}`,
      `GET /v25.0/${container!.id}`,
      `POST /v25.0/${CAFE_IG}/media_publish`,
      `GET /v25.0/${post.id}`,
    ]);
  });

  test("an Instagram carousel: item containers (videos as VIDEO, no caption), then CAROUSEL with the caption", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 1 });
    const media = [served("/photo.jpg"), served("/clip.mp4"), served("/square.jpg", { altText: "own alt" })];
    const published = expectPublished(
      await adapter.publishItem(publishInput(destination, { text: "three things", media })),
    );
    const children = fake.containers.filter((c) => c.isCarouselItem);
    expect(children.map((c) => [c.mediaType, c.mediaUrl, c.caption, c.altText, c.download?.status])).toEqual([
      ["IMAGE", `${fileOrigin()}/photo.jpg`, null, null, 200],
      ["VIDEO", `${fileOrigin()}/clip.mp4`, null, null, 200],
      ["IMAGE", `${fileOrigin()}/square.jpg`, null, "own alt", 200],
    ]);
    const carousel = fake.containers.find((c) => c.mediaType === "CAROUSEL")!;
    expect(carousel).toMatchObject({ caption: "three things", children: children.map((c) => c.id) });
    expect(fake.containers.every((c) => c.statusCode === "PUBLISHED")).toBe(true);
    expect(fake.igPosts).toEqual([
      expect.objectContaining({
        id: published.providerObjectId,
        mediaType: "CAROUSEL_ALBUM",
        caption: "three things",
      }),
    ]);
  });

  test("a single video is a reel (REELS); pending while processing, published by checkPending once FINISHED", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 6 }, { maxPolls: 3 });
    const input = publishInput(destination, { text: "a clip", media: [served("/clip.mp4")] });
    const before = Date.now();
    const pending = expectPendingItem(await adapter.publishItem(input));
    const container = fake.containers[0]!;
    expect(pending.data).toEqual({ children: [], container: container.id });
    expect(pending.checkAgainAt).toBeGreaterThanOrEqual(before + INSTAGRAM_PENDING_CHECK_MS);
    expect(container).toMatchObject({ mediaType: "REELS", statusCode: "IN_PROGRESS", caption: "a clip" });
    expect(fake.igPosts).toHaveLength(0);

    const still = await adapter.checkPending({ destination, item: input, data: pending.data, since: before });
    expect(still.state).toBe("pending");
    const done = await adapter.checkPending({ destination, item: input, data: pending.data, since: before });
    expect(done.state).toBe("published");
    const item = (done as { item: PublishedItem }).item;
    expect(fake.igPosts).toEqual([
      expect.objectContaining({ id: item.providerObjectId, mediaType: "VIDEO" }),
    ]);
    expect(item.url).toMatch(/^https:\/\/www\.instagram\.com\/reel\/\w+\/$/);
    expect(fake.requests.filter((r) => r.path.endsWith("/media_publish"))).toHaveLength(1);
  });

  test("a carousel whose items are still processing stays pending, then gets its CAROUSEL container", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 50 }, { maxPolls: 2 });
    const input = publishInput(destination, { media: [served("/photo.jpg"), served("/clip.mp4")] });
    const pending = expectPendingItem(await adapter.publishItem(input));
    expect(pending.data).toEqual({ children: fake.containers.map((c) => c.id), container: null });
    fake.finishProcessing();
    const done = await adapter.checkPending({
      destination,
      item: input,
      data: pending.data,
      since: Date.now(),
    });
    expect(done.state).toBe("published");
    expect(fake.containers.map((c) => c.mediaType)).toEqual(["IMAGE", "VIDEO", "CAROUSEL"]);
  });
});

describe("refusals and failures", () => {
  test("text alone is refused before anything is sent", async () => {
    const { adapter, destination } = await start();
    expect(
      INSTAGRAM_RULES.checkItem!({
        text: "just words",
        media: [],
        options: {},
        limits: INSTAGRAM_LIMITS,
        publicMediaUrls: true,
        externalId: "1",
      }),
    ).toEqual([{ pointer: "", detail: expect.stringContaining("needs an image or a video") }]);
    await expectProviderError(
      adapter.publishItem(publishInput(destination, { text: "just words" })),
      "rejected",
    );
    expect(fake.containers).toHaveLength(0);
  });

  test("at the publishing limit (here 2) nothing is created: transient, retried in an hour", async () => {
    const { adapter, destination } = await start({ quotaTotal: 2, mediaProcessingPolls: 0 });
    for (const text of ["one", "two"])
      expectPublished(await adapter.publishItem(imagePost(destination, { text })));
    const before = Date.now();
    const containers = fake.containers.length;
    const error = await expectProviderError(
      adapter.publishItem(imagePost(destination, { text: "three" })),
      "transient",
    );
    expect(error.errorCode).toBe("content_publishing_limit");
    expect(error.retryAt).toBeGreaterThanOrEqual(before + HOUR);
    expect(fake.containers).toHaveLength(containers);
    expect(fake.igPosts.map((p) => p.caption)).toEqual(["one", "two"]);
  });

  test("media_publish refused with subcode 2207042 is transient with a retry time", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    fake.failNext(1, {
      status: 400,
      path: "/media_publish",
      body: graphErrorBody({ message: "Application request limit reached", code: 9, subcode: 2207042 }),
    });
    const before = Date.now();
    const error = await expectProviderError(adapter.publishItem(imagePost(destination)), "transient");
    expect(error.subcode).toBe("2207042");
    expect(error.retryAt).toBeGreaterThanOrEqual(before + HOUR);
    expect(fake.igPosts).toHaveLength(0);
  });

  test("a container in ERROR is rejected with Meta's reason, and nothing is published", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 1 });
    fake.nextContainerEnds({ code: "ERROR", status: "Error: The video's duration is too short (2207026)" });
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { media: [served("/clip.mp4")] })),
      "rejected",
    );
    expect(error.message).toContain("duration is too short");
    expect(fake.igPosts).toHaveLength(0);
  });

  test("media whose URL does not answer 200 fails its container: rejected, pointing at the public URL", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { media: [served("/missing.jpg")] })),
      "rejected",
    );
    expect(fake.containers[0]!.download).toMatchObject({ status: 404 });
    expect(error.message).toContain("2207052");
    expect(error.message).toContain("public URL");
  });

  test("a carousel item in ERROR is rejected naming the media; no CAROUSEL container is made", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    const media = [
      served("/photo.jpg"),
      served("/square.png", { contentType: "image/jpeg", assetId: "ast_png" }),
    ];
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { media })),
      "rejected",
    );
    expect(error.message).toContain("media 1 (ast_png)");
    expect(error.message).toContain("only JPEG");
    expect(fake.containers.some((c) => c.mediaType === "CAROUSEL")).toBe(false);
  });

  test("an EXPIRED container is gone when checked (nothing published), transient when found inline", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 10 }, { maxPolls: 2 });
    fake.nextContainerEnds({ code: "EXPIRED" });
    const input = imagePost(destination);
    const pending = expectPendingItem(await adapter.publishItem(input));
    fake.finishProcessing();
    const status = await adapter.checkPending({
      destination,
      item: input,
      data: pending.data,
      since: Date.now(),
    });
    expect(status).toMatchObject({ state: "gone" });
    fake.mediaProcessingPolls = 0;
    fake.nextContainerEnds({ code: "EXPIRED" });
    await expectProviderError(adapter.publishItem(imagePost(destination)), "transient");
    expect(fake.igPosts).toHaveLength(0);
  });

  test("a container already PUBLISHED is never published again: its post is found on the account", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 10 }, { maxPolls: 1 });
    const since = Date.now();
    const input = imagePost(destination, { text: "published by a run that died" });
    const pending = expectPendingItem(await adapter.publishItem(input));
    fake.finishProcessing();
    const token = String(destination.credentials.accessToken);
    const mediaId = await publishBehindHerald(fake, String(pending.data.container), token);
    const status = await adapter.checkPending({ destination, item: input, data: pending.data, since });
    expect(status).toMatchObject({
      state: "published",
      item: { providerObjectId: mediaId, url: fake.igPosts[0]!.permalink },
    });
    expect(fake.igPosts).toHaveLength(1);
    expect(fake.requests.filter((r) => r.path.endsWith("/media_publish"))).toHaveLength(1);
  });

  test("a carousel published by a run that died before storing its container is found, not re-sent", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    const since = Date.now();
    const input = publishInput(destination, {
      text: "pair",
      media: [served("/photo.jpg"), served("/square.jpg")],
    });
    // The earlier run: children, the CAROUSEL container, its publish; only the children were stored.
    const token = String(destination.credentials.accessToken);
    const create = async (params: Record<string, string>) => {
      const r = await fetch(`${fake.origin}/v25.0/${CAFE_IG}/media`, {
        method: "POST",
        body: new URLSearchParams({ ...params, access_token: token }),
      });
      return ((await r.json()) as { id: string }).id;
    };
    const children = [
      await create({ image_url: `${fileOrigin()}/photo.jpg`, is_carousel_item: "true" }),
      await create({ image_url: `${fileOrigin()}/square.jpg`, is_carousel_item: "true" }),
    ];
    const carousel = await create({ media_type: "CAROUSEL", children: children.join(","), caption: "pair" });
    const mediaId = await publishBehindHerald(fake, carousel, token);
    const status = await adapter.checkPending({
      destination,
      item: input,
      data: { children, container: null },
      since,
    });
    expect(status).toMatchObject({ state: "published", item: { providerObjectId: mediaId } });
    expect(fake.containers.filter((c) => c.mediaType === "CAROUSEL")).toHaveLength(1);
    expect(fake.igPosts).toHaveLength(1);
  });

  test("a PUBLISHED container whose post cannot be told apart is outcome_unknown, and not published again", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 10 }, { maxPolls: 1 });
    const since = Date.now();
    fake.mediaProcessingPolls = 0;
    expectPublished(await adapter.publishItem(imagePost(destination, { text: "gm" })));
    fake.mediaProcessingPolls = 10;
    const input = imagePost(destination, { text: "gm" });
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
    expect(error.message).toContain("2 of the account's latest posts match it");
    expect(fake.igPosts).toHaveLength(2);
  });

  test("a publish refused because another run just published the container reports that post", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    onNth(fake, "/media_publish", 1, () => {
      const container = fake.containers.at(-1)!;
      container.statusCode = "PUBLISHED";
      fake.igPosts.push({
        id: "99",
        igId: CAFE_IG,
        containerId: container.id,
        mediaType: "IMAGE",
        caption: "raced",
        children: [],
        shortcode: "RACED",
        permalink: "https://www.instagram.com/p/RACED/",
        timestamp: Date.now(),
      });
      fake.failNext(1, {
        status: 400,
        path: "/media_publish",
        body: graphErrorBody({
          message: "The media has already been published",
          code: 100,
          subcode: 2207008,
        }),
      });
    });
    const published = expectPublished(await adapter.publishItem(imagePost(destination, { text: "raced" })));
    expect(published).toMatchObject({ providerObjectId: "99", url: "https://www.instagram.com/p/RACED/" });
    expect(fake.igPosts).toHaveLength(1);
  });

  test("after a successful publish an unreadable permalink falls back to the account's URL", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    // Media ids start with 18: the next read of one after the publish is the permalink's.
    onNth(fake, "/media_publish", 1, () => fake.failNext(1, { status: 500, path: "/v25.0/18" }));
    const item = expectPublished(await adapter.publishItem(imagePost(destination)));
    expect(item.url).toBe("https://www.instagram.com/herald.cafe/");
    expect(item.providerObjectId).toBe(fake.igPosts[0]!.id);
  });

  test("code 2 on media_publish that still published is outcome_unknown; the fake holds the post", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    fake.createThenFail(1);
    await expectProviderError(
      adapter.publishItem(imagePost(destination, { text: "maybe" })),
      "outcome_unknown",
    );
    expect(fake.igPosts.map((p) => p.caption)).toEqual(["maybe"]);
  });

  test("an unanswered media_publish is outcome_unknown", async () => {
    fake = await startFacebookFake({ mediaProcessingPolls: 0 });
    const adapter = adapterFor(fake, { timeoutMs: 300 });
    fake.hangAfterReceive = true;
    const error = await expectProviderError(
      adapter.publishItem(imagePost(destinationOf(fake))),
      "outcome_unknown",
    );
    expect(error.errorCode).toBe("timeout");
    expect(fake.igPosts).toHaveLength(1);
  });

  test("a revoked token (code 190) is auth_revoked", async () => {
    const { adapter, destination } = await start();
    fake.revokeTokens();
    const error = await expectProviderError(adapter.publishItem(imagePost(destination)), "auth_revoked");
    expect(error.errorCode).toBe("190");
  });

  test.each([4, 17, 32, 613, 80002])("throttling code %d is transient with retryAt", async (code) => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    fake.failNext(1, {
      status: 400,
      path: "/media",
      body: graphErrorBody({ message: "Rate limited", code }),
      headers: bucHeader(3),
    });
    const before = Date.now();
    const error = await expectProviderError(adapter.publishItem(imagePost(destination)), "transient");
    expect(error.retryAt).toBeGreaterThanOrEqual(before + 3 * 60_000);
  });

  test("a public URL that cannot be made is not_sent: no container was created", async () => {
    const { adapter, destination } = await start();
    const broken = {
      ...served("/photo.jpg"),
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
    fake = await startFacebookFake({ mediaProcessingPolls: 100 });
    const adapter = adapterFor(fake, { clock, maxPolls: 1 });
    const destination = destinationOf(fake);
    const input = imagePost(destination);
    const pending = expectPendingItem(await adapter.publishItem(input));
    const since = clock.now();
    clock.advance(DAY + HOUR);
    await expectProviderError(
      adapter.checkPending({ destination, item: input, data: pending.data, since }),
      "rejected",
    );
    expect(fake.igPosts).toHaveLength(0);
  });
});

describe("Meta's error classes at media_publish (meta/errors.ts)", () => {
  test("9007/2207027 after FINISHED: Herald waits and publishes the same container, exactly once", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0, notReadyAfterFinished: 2 });
    const item = expectPublished(await adapter.publishItem(imagePost(destination, { text: "wait for it" })));
    expect(fake.containers).toHaveLength(1);
    expect(fake.igPosts.map((p) => [p.containerId, p.caption])).toEqual([
      [fake.containers[0]!.id, "wait for it"],
    ]);
    expect(item.providerObjectId).toBe(fake.igPosts[0]!.id);
    expect(fake.publishCalls).toBe(3); // two "please wait" answers, then the one publish
  });

  test("still not ready after the waits: pending with its container, then one publish from the check", async () => {
    const waits = META_NOT_READY_WAITS + 1;
    const { adapter, destination } = await start({
      mediaProcessingPolls: 0,
      notReadyAfterFinished: 2 * waits,
    });
    const input = imagePost(destination);
    const since = Date.now();
    const pending = expectPendingItem(await adapter.publishItem(input));
    expect(pending.data.container).toBe(fake.containers[0]!.id);
    expect(fake.publishCalls).toBe(waits);
    // A check that still hears "please wait" fails transient for the engine to retry: same container.
    const error = await expectProviderError(
      adapter.checkPending({ destination, item: input, data: pending.data, since }),
      "transient",
    );
    expect([error.errorCode, error.subcode]).toEqual(["9007", "2207027"]);
    expect(error.message).toContain("not ready for publishing");
    expect(error.retryAt).toBeNull();
    const status = await adapter.checkPending({ destination, item: input, data: pending.data, since });
    expect(status).toMatchObject({ state: "published", item: { providerObjectId: fake.igPosts[0]!.id } });
    expect(fake.containers).toHaveLength(1);
    expect(fake.igPosts).toHaveLength(1);
  });

  test("4/2207051 (suspected spam) is rejected with Meta's message: check the account, no retry time", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    fake.restrictedForSpam.add(CAFE_IG);
    const error = await expectProviderError(adapter.publishItem(imagePost(destination)), "rejected");
    expect(error.message).toContain("We restrict certain activity to protect our community");
    expect([error.errorCode, error.subcode, error.userAction, error.retryAt]).toEqual([
      "4",
      "2207051",
      "check_account",
      null,
    ]);
    expect(fake.publishCalls).toBe(1);
    expect(fake.igPosts).toHaveLength(0);
  });
});

describe("checkItem and options", () => {
  const check = (
    text: string,
    media: MediaItem[] = [mediaItem({ contentType: "image/jpeg" })],
    publicMediaUrls = true,
  ) =>
    INSTAGRAM_RULES.checkItem!({
      text,
      media,
      options: {},
      limits: INSTAGRAM_LIMITS,
      publicMediaUrls,
      externalId: "1",
    });
  const pointers = (problems: { pointer: string }[]) => problems.map((p) => p.pointer);
  const video = (over: Partial<MediaItem> = {}): MediaItem => ({
    ...mediaItem({ contentType: "video/mp4", byteSize: 1000 }),
    durationSec: 10,
    ...over,
  });

  test.each([
    ["a".repeat(2200), []],
    ["a".repeat(2201), [""]],
    ["👍".repeat(2200), []],
    ["👍🏽".repeat(1100), []],
    ["👍🏽".repeat(1101), [""]],
    [Array.from({ length: 30 }, (_, i) => `#tag${i}`).join(" "), []],
    [Array.from({ length: 31 }, (_, i) => `#tag${i}`).join(" "), [""]],
    ["issue #1 and C# and &#35; are not 31 hashtags", []],
  ])("caption case %#", (text, expected) => {
    expect(pointers(check(text))).toEqual(expected);
  });

  test.each([
    ["image/jpeg", 8_000_000, 4, 3, []],
    ["image/jpeg", 8_000_001, 4, 3, ["/media/0"]],
    ["image/jpeg", 10, 4, 5, []],
    ["image/jpeg", 10, 3, 4, ["/media/0"]],
    ["image/jpeg", 10, 191, 100, []],
    ["image/jpeg", 10, 192, 100, ["/media/0"]],
    ["image/png", 10, 4, 3, ["/media/0"]],
    ["image/gif", 10, 4, 3, ["/media/0"]],
  ])("%s of %d bytes, %d×%d → %p", (contentType, byteSize, width, height, expected) => {
    expect(pointers(check("x", [mediaItem({ contentType, byteSize, width, height })]))).toEqual(expected);
  });

  test.each([
    [{ byteSize: 300_000_000 }, []],
    [{ byteSize: 300_000_001 }, ["/media/0"]],
    [{ durationSec: 2 }, ["/media/0"]],
    [{ durationSec: 3 }, []],
    [{ durationSec: 900 }, []],
    [{ durationSec: 901 }, ["/media/0"]],
    [{ contentType: "video/quicktime" }, []],
    [{ contentType: "video/webm" }, ["/media/0"]],
  ])("video %p → %p", (over, expected) => {
    expect(pointers(check("x", [video(over)]))).toEqual(expected);
  });

  test("ten media pass; the eleventh is refused", () => {
    const ten = Array.from({ length: 10 }, (_, i) =>
      mediaItem({ assetId: `a${i}`, contentType: "image/jpeg" }),
    );
    expect(check("x", ten)).toEqual([]);
    expect(pointers(check("x", [...ten, mediaItem({ assetId: "a10", contentType: "image/jpeg" })]))).toEqual([
      "/media/10",
    ]);
  });

  test("media is refused when Herald has no public URL for Meta to download it from", () => {
    const media = [mediaItem({ contentType: "image/jpeg" }), video()];
    const problems = check("x", media, false);
    expect(pointers(problems)).toEqual(["/media/0", "/media/1"]);
    expect(problems[0]!.detail).toContain("HERALD_BASE_URL");
  });

  test("options: alt text only for attached assets, nothing else", () => {
    expect(
      INSTAGRAM_RULES.checkOptions!({
        options: { alt_text_by_asset_id: { ast_1: "ok", ast_9: "no" } },
        assetIds: ["ast_1"],
      }),
    ).toEqual([
      { pointer: "/alt_text_by_asset_id/ast_9", detail: "names an asset that is not attached to the post" },
    ]);
    const schema = INSTAGRAM_RULES.optionsSchema!;
    expect(Value.Check(schema, { alt_text_by_asset_id: { a: "x".repeat(1000) } })).toBe(true);
    expect(Value.Check(schema, { alt_text_by_asset_id: { a: "x".repeat(1001) } })).toBe(false);
    expect(Value.Check(schema, { link: "https://herald.example" })).toBe(false);
  });
});

// The shared scenarios publish text-only items; Instagram refuses those, so this world gives every
// item without media one served image (the scenarios' own media items are left as they are).
describe("metrics (GET /{ig-media-id}/insights)", () => {
  const target = (p: PublishedItem): MetricsTarget => ({
    providerObjectId: p.providerObjectId,
    url: p.url,
    extra: p.extra,
    publishedAt: Date.now(),
  });
  const publish = async (adapter: InstagramAdapter, destination: DestinationRef, text: string) =>
    expectPublished(await adapter.publishItem(imagePost(destination, { text })));
  const mediaOf = (p: PublishedItem) => fake.igPosts.find((m) => m.id === p.providerObjectId)!;
  const metricCalls = (since: number) => fake.requests.slice(since).map(requestLine);

  test(
    "insights: views, reach as impressions, comments, likes as reactions, shares, saved as saves; no " +
      "link clicks",
    async () => {
      const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
      expect(adapter.metricsBatchSize).toBe(INSTAGRAM_METRICS_BATCH_SIZE);
      expect([...INSTAGRAM_INSIGHT_METRICS]).toEqual([
        "views",
        "reach",
        "likes",
        "comments",
        "shares",
        "saved",
      ]);
      const post = await publish(adapter, destination, "counted");
      mediaOf(post).counts = { views: 1200, reach: 800, likes: 90, comments: 6, shares: 4, saved: 11 };
      const before = fake.requests.length;
      const results = await adapter.fetchMetrics!({ destination, targets: [target(post)] });
      expect(results).toEqual([
        {
          providerObjectId: post.providerObjectId,
          kind: "metrics",
          values: { views: 1200, impressions: 800, comments: 6, reactions: 90, shares: 4, saves: 11 },
          providerAsOf: null,
        },
      ]);
      expect(metricCalls(before)).toEqual([`GET /v25.0/${post.providerObjectId}/insights`]);
    },
  );

  test("one insights call per media: Instagram reads media one at a time", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    const posts = [];
    for (const text of ["a", "b", "c"]) posts.push(await publish(adapter, destination, text));
    posts.forEach((p, i) => (mediaOf(p).counts = { likes: i + 1 }));
    const before = fake.requests.length;
    const results = await adapter.fetchMetrics!({ destination, targets: posts.map(target) });
    expect(
      results.map((r) => [r.providerObjectId, r.kind === "metrics" ? r.values.reactions : null]),
    ).toEqual(posts.map((p, i) => [p.providerObjectId, i + 1]));
    expect(metricCalls(before)).toEqual(posts.map((p) => `GET /v25.0/${p.providerObjectId}/insights`));
  });

  test('"Not enough viewers" (code 10) is not a dead token: the media\'s like and comment counts are reported', async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    const post = await publish(adapter, destination, "few viewers");
    Object.assign(mediaOf(post), {
      insights: "not_enough_viewers",
      counts: { views: 12, reach: 9, likes: 3, comments: 1, shares: 2, saved: 1 },
    });
    const before = fake.requests.length;
    const [result] = await adapter.fetchMetrics!({ destination, targets: [target(post)] });
    expect(result).toEqual({
      providerObjectId: post.providerObjectId,
      kind: "metrics",
      values: { comments: 1, reactions: 3 },
      providerAsOf: null,
    });
    expect(metricCalls(before)).toEqual([
      `GET /v25.0/${post.providerObjectId}/insights`,
      `GET /v25.0/${post.providerObjectId}`,
    ]);
  });

  test("an empty insights answer (Meta has nothing yet) reports the counts that exist, not zeros", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    const post = await publish(adapter, destination, "too early");
    Object.assign(mediaOf(post), { insights: "empty", counts: { likes: 2 } });
    const [result] = await adapter.fetchMetrics!({ destination, targets: [target(post)] });
    expect(result).toMatchObject({ kind: "metrics", values: { comments: 0, reactions: 2 } });
    expect(Object.keys((result as { values: object }).values).sort()).toEqual(["comments", "reactions"]);
  });

  test("a deleted media is missing (insights and counts both refused, code 100); the others are read", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    const kept = await publish(adapter, destination, "kept");
    const gone = await publish(adapter, destination, "deleted later");
    fake.igPosts = fake.igPosts.filter((p) => p.id !== gone.providerObjectId);
    const results = await adapter.fetchMetrics!({ destination, targets: [target(gone), target(kept)] });
    expect(results[0]).toMatchObject({ providerObjectId: gone.providerObjectId, kind: "missing" });
    expect((results[0] as { reason: string }).reason).toContain("does not exist");
    expect(results[1]).toMatchObject({ providerObjectId: kept.providerObjectId, kind: "metrics" });
  });

  test("a 429 (throttled app) fails the call: transient with retryAt from X-Business-Use-Case-Usage", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    const post = await publish(adapter, destination, "limited");
    fake.failNext(1, { status: 429, path: "/insights", headers: bucHeader(7) });
    const before = Date.now();
    const since = fake.requests.length;
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination, targets: [target(post), target(post)] }),
      "transient",
    );
    expect(error.statusCode).toBe(429);
    expect(error.retryAt).toBeGreaterThanOrEqual(before + 7 * 60_000);
    expect(metricCalls(since)).toHaveLength(1); // the batch stops at the throttled call
  });

  test("a dead token (code 190) is auth_revoked: the linked Page's token cannot be renewed", async () => {
    const { adapter, destination } = await start({ mediaProcessingPolls: 0 });
    const post = await publish(adapter, destination, "expired");
    fake.revokeTokens();
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination, targets: [target(post)] }),
      "auth_revoked",
    );
    expect([error.errorCode, error.subcode]).toEqual(["190", "463"]);
  });
});

adapterScenarios("instagram", async () => {
  const f = await startFacebookFake({ mediaProcessingPolls: 0 });
  const adapter = adapterFor(f);
  const withImage = (item: PublishItemInput): PublishItemInput =>
    item.media.length > 0 ? item : { ...item, media: [served("/photo.jpg")] };
  return {
    adapter: {
      ...adapter,
      publishItem: (input) => adapter.publishItem(withImage(input)),
      checkPending: (input) => adapter.checkPending({ ...input, item: withImage(input.item) }),
    },
    destination: destinationOf(f),
    fake: f,
    createPath: "/media_publish",
    stored: () => f.igPosts.map((p) => ({ id: p.id, text: p.caption, replyTo: null })),
    stop: () => f.stop(),
  };
});

registeredAs("instagram", {
  connection: "fixed-app",
  idempotentCreate: false,
  pendingChecksRepeatable: true,
});
