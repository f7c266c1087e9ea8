// The Facebook Pages adapter against the graph.facebook.com fake: Facebook Login (code → long-lived
// user token → one destination per Page with its Page token), text, link, one photo, several photos
// (unpublished, then attached_media), a video that becomes a reel (pending while processing), and
// every refusal and failure path: 190, duplicates (368/506), code 1/2 on a create, throttling,
// reel errors and expiry, an unanswered create, an upload URL Herald will not send the token to.
// Metrics: counts for a batch in one multi-id read, each post's insights, reels read as video nodes,
// a Page without insights (under 100 likes, or refused), the unverified post_media_view refused, a
// deleted post, throttling and a dead token.
import { afterEach, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { ManualClock, systemClock, type Clock } from "../../src/lib/clock.ts";
import {
  createFacebookAdapter,
  FACEBOOK_LIMITS,
  FACEBOOK_RULES,
  FACEBOOK_SCOPES,
  type FacebookAdapter,
} from "../../src/providers/facebook/adapter.ts";
import { FACEBOOK_METRICS_BATCH_SIZE, FACEBOOK_POST_INSIGHTS } from "../../src/providers/facebook/metrics.ts";
import { FACEBOOK_REEL_CHECK_MS, FACEBOOK_REEL_MAX_WAIT_MS } from "../../src/providers/facebook/publish.ts";
import {
  type DestinationRef,
  type MediaItem,
  type MetricsResult,
  type MetricsTarget,
  type PublishedItem,
} from "../../src/providers/types.ts";
import { jpeg, mp4 } from "../assets/samples.ts";
import { startFacebookFake, type FacebookFake, type FacebookFakeOptions } from "../fakes/facebook.ts";
import { bucHeader, graphErrorBody } from "../fakes/meta.ts";
import { failNth } from "../posts/engine-helpers.ts";
import { adapterScenarios, registeredAs } from "./scenarios.ts";
import {
  expectProviderError,
  makePng,
  mediaItem,
  publishFully,
  publishInput,
  expectPendingItem,
  expectPublished,
  fakeApp,
} from "./support.ts";

const CAFE = "101000000000001";
const LABS = "101000000000002";
const REDIRECT = "https://herald.example/oauth/callback/facebook";

let fake: FacebookFake;
afterEach(async () => fake?.stop());

function adapterFor(
  f: FacebookFake,
  over: { clock?: Clock; maxPolls?: number; timeoutMs?: number; scopes?: string } = {},
): FacebookAdapter {
  return createFacebookAdapter({
    fetch,
    clock: over.clock ?? systemClock,
    timeoutMs: over.timeoutMs ?? 2000,
    pollIntervalMs: 2,
    maxPolls: over.maxPolls ?? 3,
    apps: {
      facebook: fakeApp({ ...f.app, origin: f.origin }, { scopes: over.scopes ?? null }),
    },
  });
}

function destinationOf(f: FacebookFake, pageId = CAFE): DestinationRef {
  const page = f.pages.find((p) => p.id === pageId)!;
  return {
    origin: f.origin,
    externalId: page.id,
    handle: page.username ?? page.id,
    credentials: { accessToken: f.issuePageToken(page.id) },
    limits: FACEBOOK_LIMITS,
  };
}

async function start(
  options: FacebookFakeOptions = {},
  over: Parameters<typeof adapterFor>[1] = {},
): Promise<{ adapter: FacebookAdapter; destination: DestinationRef }> {
  fake = await startFacebookFake(options);
  return { adapter: adapterFor(fake, over), destination: destinationOf(fake) };
}

const photoJpeg = (assetId = "ast_photo") =>
  mediaItem({ assetId, contentType: "image/jpeg", bytes: new Uint8Array(jpeg(8, 6)) });
const photoPng = (assetId = "ast_square") =>
  mediaItem({ assetId, contentType: "image/png", bytes: makePng({ width: 6, height: 6 }) });
const clip = (): MediaItem => ({
  ...mediaItem({ assetId: "ast_clip", contentType: "video/mp4", bytes: new Uint8Array(mp4(1080, 1920, 5)) }),
  durationSec: 5,
});

/** Follows the Login dialog as a browser would and returns the code Facebook sent back. */
async function approve(adapter: FacebookAdapter, state = "st_1"): Promise<string> {
  const consent = await fetch(
    adapter.authorizationUrl({
      origin: fake.origin,
      clientId: fake.app.clientId,
      redirectUri: REDIRECT,
      state,
      codeChallenge: "unused",
    }),
    { redirect: "manual" },
  );
  expect(consent.status).toBe(302);
  const back = new URL(consent.headers.get("location")!);
  expect(back.origin + back.pathname).toBe(REDIRECT);
  expect(back.searchParams.get("state")).toBe(state);
  return back.searchParams.get("code")!;
}

function connect(adapter: FacebookAdapter, code: string) {
  return adapter.completeAuthorization({
    origin: fake.origin,
    clientId: fake.app.clientId,
    clientSecret: fake.app.clientSecret,
    redirectUri: REDIRECT,
    code,
    codeVerifier: "unused",
  });
}

const requestLine = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

describe("connecting with Facebook Login", () => {
  test("the dialog URL: versioned dialog path, the app, the Pages scopes, the state, no PKCE", async () => {
    const { adapter } = await start();
    const url = new URL(
      adapter.authorizationUrl({
        origin: fake.origin,
        clientId: fake.app.clientId,
        redirectUri: REDIRECT,
        state: "st_1",
        codeChallenge: "challenge-not-sent",
      }),
    );
    expect(url.origin + url.pathname).toBe(`${fake.origin}/v25.0/dialog/oauth`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: fake.app.clientId,
      redirect_uri: REDIRECT,
      state: "st_1",
      scope: "pages_show_list,pages_manage_posts,pages_read_engagement,read_insights,pages_manage_engagement",
      response_type: "code",
    });
    expect(FACEBOOK_SCOPES).toHaveLength(5);
    const narrowed = adapterFor(fake, { scopes: "pages_show_list,pages_manage_posts" });
    const params = new URL(
      narrowed.authorizationUrl({
        origin: fake.origin,
        clientId: "c",
        redirectUri: REDIRECT,
        state: "s",
        codeChallenge: "x",
      }),
    ).searchParams;
    expect(params.get("scope")).toBe("pages_show_list,pages_manage_posts");
  });

  test("code → user token → long-lived token → one destination per Page, each with its non-expiring Page token", async () => {
    const { adapter } = await start({ pageSize: 2, redirectUris: [REDIRECT] });
    const code = await approve(adapter);
    const accounts = await connect(adapter, code);
    expect(accounts.map((a) => [a.externalId, a.handle, a.displayName])).toEqual([
      [CAFE, "heraldcafe", "Herald Café"],
      [LABS, LABS, "Herald Labs"],
      ["101000000000003", "heraldbooks", "Herald Books"],
    ]);
    for (const account of accounts) {
      const credentials = account.credentials as { accessToken: string };
      expect(Object.keys(credentials)).toEqual(["accessToken"]);
      const issued = fake.tokens.get(credentials.accessToken)!;
      // A Page token read with the long-lived user token does not expire.
      expect(issued).toMatchObject({ kind: "page", pageId: account.externalId, expiresAt: Infinity });
      expect(account.limits).toEqual(FACEBOOK_LIMITS);
      expect(account.profileImageUrl).toBe(`${fake.origin}/pictures/${account.externalId}.jpg`);
    }
    // Three Pages at two a call: /me/accounts is followed by its cursor.
    expect(fake.requests.slice(1).map(requestLine)).toEqual([
      "GET /v25.0/oauth/access_token",
      "GET /v25.0/oauth/access_token",
      "GET /v25.0/me/accounts",
      "GET /v25.0/me/accounts",
    ]);
    const userTokens = [...fake.tokens.values()].filter((t) => t.kind !== "page");
    expect(userTokens.map((t) => t.kind)).toEqual(["short", "long"]);
  });

  test("a code that was already used is refused", async () => {
    const { adapter } = await start();
    const code = await approve(adapter);
    await connect(adapter, code);
    const error = await expectProviderError(connect(adapter, code), "rejected");
    expect(error.errorCode).toBe("100");
    expect(error.message).toContain("This authorization code has been used.");
  });

  test("a person who chose no Page is refused with a message saying so", async () => {
    fake = await startFacebookFake({ pages: [] });
    const adapter = adapterFor(fake);
    const error = await expectProviderError(connect(adapter, await approve(adapter)), "rejected");
    expect(error.message).toContain("no Page");
  });

  test("Page tokens do not expire: nothing to renew ahead, and a dead one needs a new connection", async () => {
    const { adapter, destination } = await start();
    expect(adapter.refreshAheadMs).toBeNull();
    await expectProviderError(adapter.refreshCredentials({ destination }), "auth_revoked");
    expect(fake.requests).toHaveLength(0);
  });
});

describe("publishing", () => {
  test("text goes to /{page}/feed; the receipt is the post id and its permalink_url", async () => {
    const { adapter, destination } = await start();
    const published = expectPublished(
      await adapter.publishItem(publishInput(destination, { text: "Open from 8 today" })),
    );
    expect(fake.posts).toEqual([
      expect.objectContaining({ pageId: CAFE, kind: "status", message: "Open from 8 today", link: null }),
    ]);
    expect(published).toMatchObject({
      providerObjectId: fake.posts[0]!.id,
      url: fake.posts[0]!.permalink,
      provider: { operation: "POST /{page-id}/feed", statusCode: 200 },
    });
    expect(published.url).toMatch(/^https:\/\/www\.facebook\.com\/heraldcafe\/posts\/\d+$/);
    expect(fake.requests.map(requestLine)).toEqual([
      `POST /v25.0/${CAFE}/feed`,
      `GET /v25.0/${fake.posts[0]!.id}`,
    ]);
  });

  test("a link post carries the link option", async () => {
    const { adapter, destination } = await start();
    expectPublished(
      await adapter.publishItem(
        publishInput(destination, { text: "Our menu", options: { link: "https://herald.example/menu" } }),
      ),
    );
    expect(fake.posts[0]).toMatchObject({
      kind: "link",
      message: "Our menu",
      link: "https://herald.example/menu",
    });
  });

  test("one photo goes straight to /photos with its caption; the receipt is the post, not the photo", async () => {
    const { adapter, destination } = await start();
    const image = photoJpeg();
    const published = expectPublished(
      await adapter.publishItem(publishInput(destination, { text: "Fresh bread", media: [image] })),
    );
    expect(fake.photos).toEqual([
      expect.objectContaining({ published: true, contentType: "image/jpeg", bytes: image.byteSize }),
    ]);
    const post = fake.posts[0]!;
    expect(post).toMatchObject({ kind: "photo", message: "Fresh bread", photoIds: [fake.photos[0]!.id] });
    expect(published).toMatchObject({ providerObjectId: post.id, url: post.permalink });
    expect(published.extra).toEqual({ postId: post.id, photoIds: [fake.photos[0]!.id] });
  });

  test("several photos: each uploaded unpublished, then one feed post with attached_media in order", async () => {
    const { adapter, destination } = await start();
    const media = [photoJpeg("a"), photoPng("b"), photoJpeg("c")];
    const published = expectPublished(
      await adapter.publishItem(publishInput(destination, { text: "Three loaves", media })),
    );
    expect(fake.photos.map((p) => [p.published, p.contentType])).toEqual([
      [false, "image/jpeg"],
      [false, "image/png"],
      [false, "image/jpeg"],
    ]);
    const post = fake.posts[0]!;
    expect(fake.posts).toHaveLength(1);
    expect(post).toMatchObject({
      kind: "photos",
      message: "Three loaves",
      photoIds: fake.photos.map((p) => p.id),
    });
    expect(fake.photos.every((p) => p.postId === post.id)).toBe(true);
    expect(published.providerObjectId).toBe(post.id);
    expect(fake.requests.map(requestLine).slice(0, 4)).toEqual([
      `POST /v25.0/${CAFE}/photos`,
      `POST /v25.0/${CAFE}/photos`,
      `POST /v25.0/${CAFE}/photos`,
      `POST /v25.0/${CAFE}/feed`,
    ]);
  });

  test("a video becomes a reel: start, bytes to the upload URL, finish PUBLISHED; pending while processing", async () => {
    const { adapter, destination } = await start({ reelProcessingPolls: 7 }, { maxPolls: 3 });
    const video = clip();
    const input = publishInput(destination, { text: "Behind the counter", media: [video] });
    const before = Date.now();
    const pending = expectPendingItem(await adapter.publishItem(input));
    const reel = fake.reels[0]!;
    expect(pending.data).toEqual({ videoId: reel.id });
    expect(pending.checkAgainAt).toBeGreaterThanOrEqual(before + FACEBOOK_REEL_CHECK_MS);
    expect(reel).toMatchObject({
      pageId: CAFE,
      received: video.byteSize,
      uploadHeaders: {
        authorization: `OAuth ${destination.credentials.accessToken}`,
        offset: "0",
        fileSize: String(video.byteSize),
      },
      finished: true,
      videoState: "PUBLISHED",
      description: "Behind the counter",
      phase: "processing",
    });
    expect(fake.posts).toHaveLength(0);

    const still = await adapter.checkPending({ destination, item: input, data: pending.data, since: before });
    expect(still.state).toBe("pending");
    const done = await adapter.checkPending({ destination, item: input, data: pending.data, since: before });
    expect(done).toMatchObject({
      state: "published",
      item: { providerObjectId: reel.id, url: `https://www.facebook.com/reel/${reel.id}` },
    });
    expect(fake.posts).toEqual([expect.objectContaining({ kind: "reel", videoId: reel.id })]);
    // The checks only read the status: one start and one finish, whatever the number of checks.
    expect(fake.requests.filter((r) => r.method === "POST" && r.path.endsWith("/video_reels"))).toHaveLength(
      2,
    );
    expect(adapter.pendingChecksRepeatable).toBe(true);
  });

  test(
    "a reel upload whose connection is reset mid-body resumes from the bytes_transferred " +
      "Meta reports, on a connection of its own; every byte once after that, one reel",
    async () => {
      const { adapter, destination } = await start({ reelProcessingPolls: 0, cuttable: true });
      const bytes = new Uint8Array(mp4(1080, 1920, 5, { mdatBytes: 400_000 }));
      const video = {
        ...mediaItem({ assetId: "ast_clip", contentType: "video/mp4", bytes }),
        durationSec: 5,
      };
      // 150,000 bytes arrive, then the connection is reset; Meta keeps them.
      fake.resetNextReelUpload({ keepBytes: 150_000 });
      const published = await publishFully(
        adapter,
        publishInput(destination, { text: "cut", media: [video] }),
      );
      const reel = fake.reels[0]!;
      expect(reel.uploads).toEqual([
        { offset: 0, length: 150_000, cut: true, fresh: true },
        { offset: 150_000, length: bytes.length - 150_000, cut: false, fresh: true },
      ]);
      expect(Buffer.from(reel.bytes!).equals(Buffer.from(bytes))).toBe(true);
      expect(fake.reels).toHaveLength(1);
      expect(fake.posts).toEqual([expect.objectContaining({ kind: "reel", videoId: reel.id })]);
      expect(published.providerObjectId).toBe(reel.id);
    },
  );

  test("a reel processed within the inline polls is published at once", async () => {
    const { adapter, destination } = await start({ reelProcessingPolls: 1 });
    const published = expectPublished(
      await adapter.publishItem(publishInput(destination, { text: "quick", media: [clip()] })),
    );
    expect(published.url).toBe(`https://www.facebook.com/reel/${fake.reels[0]!.id}`);
  });
});

describe("refusals and failures", () => {
  test("a revoked Page token (code 190) is auth_revoked", async () => {
    const { adapter, destination } = await start();
    fake.revokeTokens();
    const error = await expectProviderError(adapter.publishItem(publishInput(destination)), "auth_revoked");
    expect([error.errorCode, error.subcode]).toEqual(["190", "463"]);
  });

  test("the same text twice on a Page is refused as a duplicate (368): rejected", async () => {
    const { adapter, destination } = await start();
    expectPublished(await adapter.publishItem(publishInput(destination, { text: "same" })));
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { text: "same" })),
      "rejected",
    );
    expect(error.errorCode).toBe("368");
    expect(error.message).toContain("already posted this");
    expect(fake.posts).toHaveLength(1);
  });

  test("(#506) Duplicate status message is rejected", async () => {
    const { adapter, destination } = await start();
    fake.failNext(1, {
      status: 400,
      path: "/feed",
      body: graphErrorBody({ message: "(#506) Duplicate status message", code: 506 }),
    });
    const error = await expectProviderError(adapter.publishItem(publishInput(destination)), "rejected");
    expect(error.errorCode).toBe("506");
  });

  test("code 2 on a create that still published is outcome_unknown, and the fake holds the post", async () => {
    const { adapter, destination } = await start();
    fake.createThenFail(1);
    await expectProviderError(
      adapter.publishItem(publishInput(destination, { text: "maybe" })),
      "outcome_unknown",
    );
    expect(fake.posts.map((p) => p.message)).toEqual(["maybe"]);
  });

  test.each([
    [1, "/feed", 1],
    [2, "/feed", 1],
    [2, "/photos", 1],
    // The reel's start is idempotent; its finish (the second video_reels call) is the create.
    [2, "/video_reels", 2],
  ])("Graph code %d (HTTP 400) on the create call (%s) is outcome_unknown", async (code, edge, nth) => {
    const { adapter, destination } = await start({ reelProcessingPolls: 0 });
    const media = edge === "/photos" ? [photoJpeg()] : edge === "/video_reels" ? [clip()] : [];
    // No is_transient flag: the code alone says Meta may have acted.
    const body = graphErrorBody({ message: "An unexpected error has occurred.", code });
    failNth(fake, edge, nth, { status: 400, body });
    await expectProviderError(adapter.publishItem(publishInput(destination, { media })), "outcome_unknown");
  });

  test("an unpublished photo's upload failing is transient (nothing was posted)", async () => {
    const { adapter, destination } = await start();
    fake.failNext(1, { status: 500, path: "/photos" });
    await expectProviderError(
      adapter.publishItem(publishInput(destination, { media: [photoJpeg("a"), photoJpeg("b")] })),
      "transient",
    );
    expect(fake.posts).toHaveLength(0);
  });

  test("an unanswered feed post is outcome_unknown (the fake holds the post)", async () => {
    fake = await startFacebookFake();
    const adapter = adapterFor(fake, { timeoutMs: 300 });
    fake.hangAfterReceive = true;
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destinationOf(fake), { text: "lost" })),
      "outcome_unknown",
    );
    expect(error.errorCode).toBe("timeout");
    expect(fake.posts.map((p) => p.message)).toEqual(["lost"]);
  });

  test("after a successful post an unreadable permalink falls back to facebook.com/<post id>", async () => {
    const { adapter, destination } = await start();
    fake.failNext(1, { status: 500, path: `/v25.0/${CAFE}_` });
    const published = expectPublished(await adapter.publishItem(publishInput(destination, { text: "ok" })));
    expect(published.url).toBe(`https://www.facebook.com/${fake.posts[0]!.id}`);
  });

  test.each([4, 17, 32, 613, 80001])(
    "throttling code %d is transient with retryAt from X-Business-Use-Case-Usage",
    async (code) => {
      const { adapter, destination } = await start();
      fake.failNext(1, {
        status: 400,
        path: "/feed",
        body: graphErrorBody({ message: "Rate limited", code }),
        headers: bucHeader(7),
      });
      const before = Date.now();
      const error = await expectProviderError(adapter.publishItem(publishInput(destination)), "transient");
      expect(error.retryAt).toBeGreaterThanOrEqual(before + 7 * 60_000);
      expect(fake.posts).toHaveLength(0);
    },
  );

  test("a reel Meta fails to process is rejected with Meta's reason; nothing is posted", async () => {
    const { adapter, destination } = await start({ reelProcessingPolls: 0 });
    fake.nextReelEnds({ state: "error", message: "The video's aspect ratio is not supported" });
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { media: [clip()] })),
      "rejected",
    );
    expect(error.message).toContain("aspect ratio is not supported");
    expect(fake.posts).toHaveLength(0);
  });

  test("an expired reel is gone when checked (nothing published), transient when found inline", async () => {
    const { adapter, destination } = await start({ reelProcessingPolls: 10 }, { maxPolls: 1 });
    fake.nextReelEnds({ state: "expired" });
    const input = publishInput(destination, { media: [clip()] });
    const pending = expectPendingItem(await adapter.publishItem(input));
    fake.finishProcessing();
    const status = await adapter.checkPending({
      destination,
      item: input,
      data: pending.data,
      since: Date.now(),
    });
    expect(status).toMatchObject({ state: "gone" });
    fake.reelProcessingPolls = 0;
    fake.nextReelEnds({ state: "expired" });
    await expectProviderError(
      adapter.publishItem(publishInput(destination, { media: [clip()] })),
      "transient",
    );
    expect(fake.posts).toHaveLength(0);
  });

  test("a reel still processing 24 hours after it was sent is outcome_unknown (it may yet appear)", async () => {
    const clock = new ManualClock(Date.now());
    fake = await startFacebookFake({ reelProcessingPolls: 100 });
    const adapter = adapterFor(fake, { clock, maxPolls: 1 });
    const destination = destinationOf(fake);
    const input = publishInput(destination, { media: [clip()] });
    const pending = expectPendingItem(await adapter.publishItem(input));
    const since = clock.now();
    clock.advance(FACEBOOK_REEL_MAX_WAIT_MS + 60_000);
    await expectProviderError(
      adapter.checkPending({ destination, item: input, data: pending.data, since }),
      "outcome_unknown",
    );
  });

  test("the Page token is never sent to an upload URL that is neither https nor the API origin", async () => {
    const { adapter, destination } = await start();
    fake.failNext(1, {
      status: 200,
      path: "/video_reels",
      body: { video_id: "777", upload_url: "http://uploads.example/video-upload/v25.0/777" },
    });
    const error = await expectProviderError(
      adapter.publishItem(publishInput(destination, { media: [clip()] })),
      "rejected",
    );
    expect(error.message).toContain("only over https");
    expect(fake.requests.filter((r) => r.path.endsWith("/video_reels"))).toHaveLength(1);
  });

  test("a token without pages_manage_posts is refused (code 200): auth_revoked", async () => {
    const { adapter } = await start();
    const destination = {
      ...destinationOf(fake),
      credentials: { accessToken: fake.issuePageToken(CAFE, ["pages_show_list"]) },
    };
    const error = await expectProviderError(adapter.publishItem(publishInput(destination)), "auth_revoked");
    expect(error.errorCode).toBe("200");
  });
});

describe("checkItem and options", () => {
  const check = (text: string, media: MediaItem[] = [], options: Record<string, unknown> = {}) =>
    FACEBOOK_RULES.checkItem!({
      text,
      media,
      options,
      limits: FACEBOOK_LIMITS,
      publicMediaUrls: false,
      externalId: "1",
    });
  const pointers = (problems: { pointer: string }[]) => problems.map((p) => p.pointer);
  const video = (over: Partial<MediaItem> = {}): MediaItem => ({ ...clip(), ...over });

  test.each([
    ["a".repeat(63_206), []],
    ["a".repeat(63_207), [""]],
    ["👍".repeat(63_206), []],
    ["", [""]],
    ["   ", [""]],
  ])("text case %#", (text, expected) => {
    expect(pointers(check(text))).toEqual(expected);
  });

  test("media needs no public URL (Herald uploads the bytes), and a link option alone is a post", () => {
    expect(check("", [photoJpeg()])).toEqual([]);
    expect(check("", [], { link: "https://herald.example" })).toEqual([]);
  });

  test.each([
    ["image/jpeg", 4_000_000, []],
    ["image/png", 4_000_001, ["/media/0"]],
    ["image/gif", 10, ["/media/0"]],
    ["image/webp", 10, ["/media/0"]],
    ["video/mp4", 1_000_000_000, []],
    ["video/quicktime", 1_000_000_001, ["/media/0"]],
  ])("%s of %d bytes → %p", (contentType, byteSize, expected) => {
    expect(pointers(check("x", [{ ...mediaItem({ contentType, byteSize }), durationSec: 10 }]))).toEqual(
      expected,
    );
  });

  test.each([
    [2, ["/media/0"]],
    [3, []],
    [90, []],
    [91, ["/media/0"]],
    [null, []],
  ])("a reel of %p seconds → %p", (durationSec, expected) => {
    expect(pointers(check("x", [video({ durationSec })]))).toEqual(expected);
  });

  test("ten photos pass, the eleventh is refused; a video goes alone", () => {
    const ten = Array.from({ length: 10 }, (_, i) => photoJpeg(`p${i}`));
    expect(check("x", ten)).toEqual([]);
    expect(pointers(check("x", [...ten, photoJpeg("p10")]))).toEqual(["/media/10"]);
    expect(pointers(check("x", [photoJpeg(), video()]))).toEqual(["/media/1"]);
  });

  test("options: link must be an http(s) URL, and a link post carries no media", () => {
    const schema = FACEBOOK_RULES.optionsSchema!;
    expect(Value.Check(schema, { link: "https://herald.example/a" })).toBe(true);
    expect(Value.Check(schema, { link: "ftp://herald.example" })).toBe(false);
    expect(Value.Check(schema, { link: "https://a b" })).toBe(false);
    expect(Value.Check(schema, { alt_text_by_asset_id: {} })).toBe(false);
    expect(
      FACEBOOK_RULES.checkOptions!({ options: { link: "https://herald.example" }, assetIds: ["ast_1"] }),
    ).toEqual([{ pointer: "/link", detail: "a link post carries no media; remove the media or the link" }]);
    expect(
      FACEBOOK_RULES.checkOptions!({ options: { link: "https://herald.example" }, assetIds: [] }),
    ).toEqual([]);
  });
});

describe("metrics (counts by multi-id read, post insights)", () => {
  const target = (p: PublishedItem): MetricsTarget => ({
    providerObjectId: p.providerObjectId,
    url: p.url,
    extra: p.extra,
    publishedAt: Date.now(),
  });
  const publish = async (adapter: FacebookAdapter, destination: DestinationRef, text: string) =>
    expectPublished(await adapter.publishItem(publishInput(destination, { text })));
  const postOf = (p: PublishedItem) => fake.posts.find((post) => post.id === p.providerObjectId)!;
  const insightCalls = () =>
    fake.requests.filter((r) => r.method === "GET" && r.path.endsWith("/insights")).map((r) => r.path);
  const byId = (results: MetricsResult[]) => Object.fromEntries(results.map((r) => [r.providerObjectId, r]));

  test(
    "counts and insights: views, reach as impressions, comments, Σ reactions by type, shares, link " +
      "clicks; no saves",
    async () => {
      const { adapter, destination } = await start();
      expect(adapter.metricsBatchSize).toBe(FACEBOOK_METRICS_BATCH_SIZE);
      const post = await publish(adapter, destination, "counted");
      postOf(post).counts = {
        comments: 4,
        shares: 3,
        reactions: { like: 10, love: 2, wow: 1 },
        mediaViews: 900,
        uniqueMediaViews: 640,
        clicks: { "link clicks": 12, "other clicks": 30 },
      };
      const before = fake.requests.length;
      const results = await adapter.fetchMetrics!({ destination, targets: [target(post)] });
      expect(results).toEqual([
        {
          providerObjectId: post.providerObjectId,
          kind: "metrics",
          values: { views: 900, impressions: 640, comments: 4, reactions: 13, shares: 3, link_clicks: 12 },
          providerAsOf: null,
        },
      ]);
      expect(fake.requests.slice(before).map(requestLine)).toEqual([
        "GET /v25.0/",
        `GET /v25.0/${post.providerObjectId}/insights`,
      ]);
      expect(fake.multiReads).toEqual([
        {
          ids: [post.providerObjectId],
          fields: "shares,comments.summary(true).limit(0),reactions.summary(true).limit(0)",
        },
      ]);
      expect(FACEBOOK_POST_INSIGHTS).toContain("post_media_view");
    },
  );

  test("nobody shared and no link clicked: Graph leaves both out, so neither is reported (not a made-up 0)", async () => {
    const { adapter, destination } = await start();
    const post = await publish(adapter, destination, "quiet");
    postOf(post).counts = { comments: 1, clicks: { "other clicks": 2 } };
    const [result] = await adapter.fetchMetrics!({ destination, targets: [target(post)] });
    // No reaction by type either: the live count (0) stands.
    expect(result).toMatchObject({
      kind: "metrics",
      values: { views: 0, impressions: 0, comments: 1, reactions: 0 },
    });
    expect(Object.keys((result as { values: object }).values).sort()).toEqual([
      "comments",
      "impressions",
      "reactions",
      "views",
    ]);
  });

  test("a batch's counts are one multi-id read; a reel is read as a video node (no shares, no insights)", async () => {
    const { adapter, destination } = await start({ reelProcessingPolls: 0 });
    const posts = [];
    for (const text of ["one", "two", "three"]) posts.push(await publish(adapter, destination, text));
    const reel = expectPublished(
      await adapter.publishItem(publishInput(destination, { text: "a reel", media: [clip()] })),
    );
    expect(reel.extra).toMatchObject({ reel: true });
    posts.forEach((p, i) => (postOf(p).counts = { reactions: { like: i + 1 }, shares: 1 }));
    fake.posts.find((p) => p.videoId === reel.providerObjectId)!.counts = {
      comments: 7,
      reactions: { haha: 5 },
      shares: 9,
      mediaViews: 100,
    };
    fake.multiReads.length = 0;
    const results = byId(await adapter.fetchMetrics!({ destination, targets: [...posts, reel].map(target) }));
    expect(fake.multiReads).toEqual([
      {
        ids: posts.map((p) => p.providerObjectId),
        fields: "shares,comments.summary(true).limit(0),reactions.summary(true).limit(0)",
      },
      {
        ids: [reel.providerObjectId],
        fields: "comments.summary(true).limit(0),reactions.summary(true).limit(0)",
      },
    ]);
    expect(insightCalls()).toEqual(posts.map((p) => `/v25.0/${p.providerObjectId}/insights`));
    posts.forEach((p, i) =>
      expect(results[p.providerObjectId]).toMatchObject({
        kind: "metrics",
        values: { reactions: i + 1, shares: 1 },
      }),
    );
    expect(results[reel.providerObjectId]).toEqual({
      providerObjectId: reel.providerObjectId,
      kind: "metrics",
      values: { comments: 7, reactions: 5 },
      providerAsOf: null,
    });
  });

  test("more than 50 posts (a caller not splitting by metricsBatchSize) are read 50 ids at a time", async () => {
    const { adapter, destination } = await start();
    const posts = [];
    for (let i = 0; i < 60; i++) posts.push(await publish(adapter, destination, `post ${i}`));
    fake.multiReads.length = 0;
    const results = await adapter.fetchMetrics!({ destination, targets: posts.map(target) });
    expect(fake.multiReads.map((r) => r.ids.length)).toEqual([50, 10]);
    expect(results.filter((r) => r.kind === "metrics")).toHaveLength(60);
  });

  test("a Page under 100 likes has no insights (an empty answer): its posts report their counts only", async () => {
    const { adapter, destination } = await start();
    fake.pages.find((p) => p.id === CAFE)!.likes = 40;
    const post = await publish(adapter, destination, "small page");
    postOf(post).counts = { comments: 2, shares: 1, reactions: { like: 3 }, mediaViews: 50 };
    const [result] = await adapter.fetchMetrics!({ destination, targets: [target(post)] });
    expect(result).toEqual({
      providerObjectId: post.providerObjectId,
      kind: "metrics",
      values: { comments: 2, reactions: 3, shares: 1 },
      providerAsOf: null,
    });
  });

  test("insights refused for the Page (no read_insights: code 200) are counts only, asked once per batch", async () => {
    const { adapter, destination } = await start();
    const noInsights: DestinationRef = {
      ...destination,
      credentials: {
        accessToken: fake.issuePageToken(CAFE, [
          "pages_show_list",
          "pages_manage_posts",
          "pages_read_engagement",
        ]),
      },
    };
    const posts = [await publish(adapter, destination, "a"), await publish(adapter, destination, "b")];
    postOf(posts[0]!).counts = { comments: 5, mediaViews: 10 };
    const results = await adapter.fetchMetrics!({ destination: noInsights, targets: posts.map(target) });
    expect(results.map((r) => (r.kind === "metrics" ? r.values : r.kind))).toEqual([
      { comments: 5, reactions: 0 },
      { comments: 0, reactions: 0 },
    ]);
    expect(insightCalls()).toHaveLength(1);
  });

  test("post_media_view (unverified) refused as an invalid metric: asked again without it, and no views reported", async () => {
    const { adapter, destination } = await start();
    fake.unknownInsightMetrics.add("post_media_view");
    const posts = [await publish(adapter, destination, "a"), await publish(adapter, destination, "b")];
    for (const p of posts) postOf(p).counts = { mediaViews: 100, uniqueMediaViews: 80, comments: 1 };
    const results = await adapter.fetchMetrics!({ destination, targets: posts.map(target) });
    for (const r of results)
      expect(r).toMatchObject({ kind: "metrics", values: { impressions: 80, comments: 1, reactions: 0 } });
    expect(results.some((r) => r.kind === "metrics" && "views" in r.values)).toBe(false);
    // The first post's insights twice (refused, then without the metric); the second's once.
    expect(insightCalls()).toEqual([
      `/v25.0/${posts[0]!.providerObjectId}/insights`,
      `/v25.0/${posts[0]!.providerObjectId}/insights`,
      `/v25.0/${posts[1]!.providerObjectId}/insights`,
    ]);
  });

  test("a deleted post is missing: Graph refuses the whole multi-id read (#803), so each id is asked alone", async () => {
    const { adapter, destination } = await start();
    const kept = await publish(adapter, destination, "kept");
    const gone = await publish(adapter, destination, "deleted later");
    postOf(kept).counts = { comments: 2 };
    fake.posts = fake.posts.filter((p) => p.id !== gone.providerObjectId);
    fake.multiReads.length = 0;
    const results = byId(await adapter.fetchMetrics!({ destination, targets: [target(gone), target(kept)] }));
    expect(results[gone.providerObjectId]).toMatchObject({ kind: "missing" });
    expect((results[gone.providerObjectId] as { reason: string }).reason).toContain("do not exist");
    expect(results[kept.providerObjectId]).toMatchObject({ kind: "metrics", values: { comments: 2 } });
    expect(fake.multiReads.map((r) => r.ids)).toEqual([
      [gone.providerObjectId, kept.providerObjectId],
      [gone.providerObjectId],
      [kept.providerObjectId],
    ]);
    expect(insightCalls()).toEqual([`/v25.0/${kept.providerObjectId}/insights`]);
  });

  test("a 429 fails the call: transient with retryAt from X-Business-Use-Case-Usage", async () => {
    const { adapter, destination } = await start();
    const post = await publish(adapter, destination, "limited");
    fake.failNext(1, { status: 429, headers: bucHeader(7) });
    const before = Date.now();
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination, targets: [target(post)] }),
      "transient",
    );
    expect(error.statusCode).toBe(429);
    expect(error.retryAt).toBeGreaterThanOrEqual(before + 7 * 60_000);
    expect(insightCalls()).toHaveLength(0);
  });

  test("throttled insights (code 4 in Meta's envelope) fail the call too, with a retry time", async () => {
    const { adapter, destination } = await start();
    const posts = [await publish(adapter, destination, "a"), await publish(adapter, destination, "b")];
    const body = graphErrorBody({ message: "Application request limit reached", code: 4 });
    fake.failNext(1, { status: 400, path: "/insights", body });
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination, targets: posts.map(target) }),
      "transient",
    );
    expect(error.retryAt! - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(insightCalls()).toHaveLength(1); // the batch stops at the throttled call
  });

  test("a dead Page token (code 190) is auth_revoked: Page tokens cannot be renewed, only reconnected", async () => {
    const { adapter, destination } = await start();
    const post = await publish(adapter, destination, "expired");
    fake.revokeTokens();
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination, targets: [target(post)] }),
      "auth_revoked",
    );
    expect([error.errorCode, error.subcode]).toEqual(["190", "463"]);
  });
});

adapterScenarios("facebook", async () => {
  const f = await startFacebookFake();
  return {
    adapter: adapterFor(f),
    destination: destinationOf(f),
    fake: f,
    createPath: "/feed",
    stored: () => f.posts.map((p) => ({ id: p.id, text: p.message, replyTo: null })),
    stop: () => f.stop(),
  };
});

registeredAs("facebook", {
  connection: "fixed-app",
  idempotentCreate: false,
  pendingChecksRepeatable: true,
});
