import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { ManualClock } from "../../src/lib/clock.ts";
import {
  createTikTokAdapter,
  TIKTOK_RENEW_BEFORE_REFRESH_EXPIRY_MS,
  TIKTOK_SCOPES,
  type TikTokCredentials,
} from "../../src/providers/tiktok/adapter.ts";
import { publicPostIds, TIKTOK_DAILY_CAP_RETRY_MS } from "../../src/providers/tiktok/api.ts";
import {
  TIKTOK_FIRST_RECHECK_MS,
  TIKTOK_MAX_PROCESSING_MS,
  TIKTOK_POST_ID_WAIT_MS,
  type TikTokDeps,
} from "../../src/providers/tiktok/publish.ts";
import { checkTikTokItem, TIKTOK_LIMITS, TIKTOK_RULES } from "../../src/providers/tiktok/rules.ts";
import { chunkPlan } from "../../src/providers/tiktok/upload.ts";
import {
  isPending,
  type DestinationRef,
  type MediaFacts,
  type MediaItem,
  type MetricsResult,
  type MetricsTarget,
  type PendingItem,
  type ProviderAdapter,
  type PublishedItem,
  type PublishItemInput,
} from "../../src/providers/types.ts";
import { jpeg, mp4, png, webp } from "../assets/samples.ts";
import {
  startTikTokFake,
  type FakePublish,
  type TikTokFake,
  type TikTokFakeOptions,
} from "../fakes/tiktok.ts";
import { adapterScenarios, registeredAs } from "./scenarios.ts";
import {
  expectProviderError,
  mediaItem,
  publishFully,
  publishInput,
  servedFiles,
  type ServedFiles,
} from "./support.ts";

const MiB = 1024 * 1024;
const DAY = 24 * 60 * 60 * 1000;
const REDIRECT = "https://herald.example/oauth/callback/tiktok";
const clock = new ManualClock();
beforeEach(() => clock.set(Date.now()));
let fake: TikTokFake;
afterEach(async () => fake?.stop());

// The files TikTok pulls for photo posts: a small server standing in for Herald's signed download URLs.
const files: ServedFiles = new Map([
  ["/photo.jpg", { type: "image/jpeg", bytes: new Uint8Array(jpeg(8, 6)) }],
  ["/photo.webp", { type: "image/webp", bytes: new Uint8Array(webp(6, 6)) }],
  ["/sneaky.jpg", { type: "image/png", bytes: new Uint8Array(png(4, 4)) }],
]);
const { origin: mediaOrigin } = servedFiles(files, "image/jpeg");

/** An adapter pointed at the fake (API, sign-in and token endpoints all on its origin). */
function adapterFor(f: TikTokFake, over: { scopes?: string; deps?: Partial<TikTokDeps> } = {}) {
  return createTikTokAdapter({
    fetch,
    clock,
    timeoutMs: 2000,
    pollIntervalMs: 5,
    maxPolls: 3,
    apps: {
      tiktok: {
        clientId: f.clientKey,
        clientSecret: f.clientSecret,
        apiBase: f.origin,
        authBase: f.origin,
        tokenBase: f.origin,
        scopes: over.scopes ?? null,
      },
    },
    ...over.deps,
  });
}

function destinationOf(f: TikTokFake, scopes?: string[]): DestinationRef {
  const { accessToken, refreshToken } = f.issueTokens(scopes);
  const credentials: TikTokCredentials = {
    accessToken,
    refreshToken,
    expiresAt: clock.now() + DAY,
    refreshExpiresAt: clock.now() + 180 * DAY,
    renewBy: clock.now() + 173 * DAY,
    openId: f.user.openId,
    scope: TIKTOK_SCOPES,
  };
  return {
    origin: f.origin,
    externalId: f.user.openId,
    handle: f.user.username,
    credentials,
    limits: TIKTOK_LIMITS,
  };
}

async function start(options: TikTokFakeOptions = {}, deps: Partial<TikTokDeps> = {}) {
  fake = await startTikTokFake(options);
  return { adapter: adapterFor(fake, { deps }), destination: destinationOf(fake) };
}

/** An MP4 of about `megabytes` MiB lasting `seconds`, with the duration Herald read from it. */
function video(
  over: { megabytes?: number; bytes?: number; seconds?: number; known?: boolean } = {},
): MediaItem {
  const seconds = over.seconds ?? 12;
  const payload = over.bytes ?? Math.round((over.megabytes ?? 0.01) * MiB);
  const bytes = new Uint8Array(mp4(720, 1280, seconds, { mdatBytes: payload }));
  return {
    ...mediaItem({
      assetId: "ast_clip",
      contentType: "video/mp4",
      bytes,
      width: 720,
      height: 1280,
      altText: null,
    }),
    durationSec: over.known === false ? null : seconds,
  };
}

/** A photo whose public URL is a file of the media server. */
function photo(path: string, type = files.get(path)?.type ?? "image/jpeg"): MediaItem {
  return mediaItem({
    assetId: `ast_${path.slice(1).replace(".", "_")}`,
    contentType: type,
    bytes: files.get(path)?.bytes,
    altText: null,
    publicUrl: `${mediaOrigin()}${path}`,
  });
}

const PUBLIC = { privacy_level: "PUBLIC_TO_EVERYONE" };

function item(destination: DestinationRef, over: Partial<PublishItemInput> = {}): PublishItemInput {
  return publishInput(destination, {
    text: "Watch this #herald",
    media: [video()],
    options: PUBLIC,
    ...over,
  });
}

const calls = (f: TikTokFake) => f.requests.map((r) => `${r.method} ${r.path}`);

/** Follows the authorization URL on the fake like a browser: the redirect back to Herald. */
async function consent(url: string): Promise<URL> {
  const response = await fetch(url, { redirect: "manual" });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!);
}

async function connect(adapter: ReturnType<typeof adapterFor>, f: TikTokFake) {
  const back = await consent(
    adapter.authorizationUrl({
      origin: f.origin,
      clientId: f.clientKey,
      redirectUri: REDIRECT,
      state: "st_1",
      codeChallenge: "challenge",
    }),
  );
  return adapter.completeAuthorization({
    origin: f.origin,
    clientId: f.clientKey,
    clientSecret: f.clientSecret,
    redirectUri: REDIRECT,
    code: back.searchParams.get("code") ?? "",
    codeVerifier: "verifier",
  });
}

describe("connecting through OAuth", () => {
  test("sends client_key and the scopes without PKCE, exchanges the code, reads the profile and the creator", async () => {
    fake = await startTikTokFake();
    const adapter = adapterFor(fake);
    const url = new URL(
      adapter.authorizationUrl({
        origin: fake.origin,
        clientId: fake.clientKey,
        redirectUri: REDIRECT,
        state: "st_1",
        codeChallenge: "challenge",
      }),
    );
    expect(url.origin + url.pathname).toBe(`${fake.origin}/v2/auth/authorize/`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_key: fake.clientKey,
      scope: "user.info.basic,video.publish,video.upload,video.list",
      response_type: "code",
      redirect_uri: REDIRECT,
      state: "st_1",
    });
    const [account] = await connect(adapter, fake);
    expect(fake.tokenRequests).toEqual([
      {
        client_key: fake.clientKey,
        client_secret: fake.clientSecret,
        code: expect.any(String),
        grant_type: "authorization_code",
        redirect_uri: REDIRECT,
      },
    ]);
    // Without user.info.profile the username is not asked of user/info: creator_info gives it.
    expect(fake.userInfoFields).toEqual([["open_id", "union_id", "avatar_url", "display_name"]]);
    expect(calls(fake).slice(-3)).toEqual([
      "POST /v2/oauth/token/",
      "GET /v2/user/info/",
      "POST /v2/post/publish/creator_info/query/",
    ]);
    expect(account).toMatchObject({
      externalId: fake.user.openId,
      handle: "alice.tt",
      displayName: "Alice TikTok",
      profileImageUrl: fake.user.avatarUrl,
      limits: TIKTOK_LIMITS,
    });
    expect(account!.credentials).toEqual({
      accessToken: expect.stringMatching(/^act\./),
      expiresAt: clock.now() + 86_400_000,
      refreshToken: expect.stringMatching(/^rft\./),
      refreshExpiresAt: clock.now() + 180 * DAY,
      renewBy: clock.now() + 173 * DAY,
      openId: fake.user.openId,
      scope: "user.info.basic,video.publish,video.upload,video.list",
    });
  });

  test("HERALD_TIKTOK_SCOPES replaces the scopes; with user.info.profile the username comes from user/info", async () => {
    fake = await startTikTokFake();
    const adapter = adapterFor(fake, { scopes: "user.info.basic,user.info.profile,video.publish" });
    const [account] = await connect(adapter, fake);
    expect(fake.authorizations[0]!.scope).toBe("user.info.basic,user.info.profile,video.publish");
    expect(fake.userInfoFields[0]).toContain("username");
    expect(account!.handle).toBe("alice.tt");
  });

  test("a grant without video.publish cannot post and is refused", async () => {
    fake = await startTikTokFake({ grantScopes: ["user.info.basic"] });
    const error = await expectProviderError(connect(adapterFor(fake), fake), "auth_revoked");
    expect(error.message).toContain("video.publish");
    expect(calls(fake)).not.toContain("GET /v2/user/info/");
  });

  test.each([
    ["a code TikTok does not know", { code: "forged" }, "invalid_grant"],
    ["a wrong client secret", { clientSecret: "wrong" }, "invalid_client"],
  ])("%s is auth_revoked with TikTok's OAuth error", async (_, over, code) => {
    fake = await startTikTokFake();
    const error = await expectProviderError(
      adapterFor(fake).completeAuthorization({
        origin: fake.origin,
        clientId: fake.clientKey,
        clientSecret: fake.clientSecret,
        redirectUri: REDIRECT,
        code: "forged",
        codeVerifier: "",
        ...over,
      }),
      "auth_revoked",
    );
    expect(error.errorCode).toBe(code);
  });
});

describe("refreshing credentials", () => {
  test("refresh tokens rotate: the newest is stored, the used one is dead, lifetimes come from the answer", async () => {
    fake = await startTikTokFake({ accessTtlS: 7200, refreshTtlS: 100 * 86_400 });
    const adapter = adapterFor(fake);
    const [account] = await connect(adapter, fake);
    const first = account!.credentials as TikTokCredentials;
    expect(first.expiresAt).toBe(clock.now() + 2 * 60 * 60_000);
    clock.advance(3 * 60 * 60_000);
    const destination: DestinationRef = {
      origin: fake.origin,
      externalId: account!.externalId,
      handle: account!.handle,
      credentials: first,
      limits: TIKTOK_LIMITS,
    };
    const second = (await adapter.refreshCredentials({ destination })) as TikTokCredentials;
    expect(fake.tokenRequests.at(-1)).toEqual({
      client_key: fake.clientKey,
      client_secret: fake.clientSecret,
      grant_type: "refresh_token",
      refresh_token: first.refreshToken,
    });
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(second).toMatchObject({
      expiresAt: clock.now() + 2 * 60 * 60_000,
      refreshExpiresAt: clock.now() + 100 * DAY,
      renewBy: clock.now() + 93 * DAY,
      openId: fake.user.openId,
    });
    expect(fake.refreshTokenValid(first.refreshToken)).toBe(false);
    // The rotated token works; the used one is refused.
    const third = await adapter.refreshCredentials({ destination: { ...destination, credentials: second } });
    expect(third.refreshToken).not.toBe(second.refreshToken);
    const stale = await expectProviderError(adapter.refreshCredentials({ destination }), "auth_revoked");
    expect(stale.errorCode).toBe("invalid_grant");
  });

  test("a revoked grant, an expired or missing refresh token, and a missing app are refused", async () => {
    const { adapter, destination } = await start();
    const expired = { ...destination.credentials, refreshExpiresAt: clock.now() - 1 };
    await expectProviderError(
      adapter.refreshCredentials({ destination: { ...destination, credentials: expired } }),
      "auth_revoked",
    );
    const none = { ...destination.credentials, refreshToken: "" };
    await expectProviderError(
      adapter.refreshCredentials({ destination: { ...destination, credentials: none } }),
      "auth_revoked",
    );
    expect(fake.tokenRequests).toEqual([]); // nothing was sent for either
    const unconfigured = createTikTokAdapter({ fetch, clock, timeoutMs: 1000, apps: {} });
    await expectProviderError(unconfigured.refreshCredentials({ destination }), "not_sent");
    fake.revokeGrant();
    await expectProviderError(adapter.refreshCredentials({ destination }), "auth_revoked");
  });

  test("the credentials job renews the grant a week before its rotating refresh token dies, not before", () => {
    expect(TIKTOK_RENEW_BEFORE_REFRESH_EXPIRY_MS).toBe(7 * 24 * 60 * 60_000);
    expect(createTikTokAdapter({ fetch, clock, timeoutMs: 1, apps: {} }).refreshAheadMs).toBeNull();
  });
});

describe("publishing a video", () => {
  test(
    "creator info, one init, pending at once; the check uploads the one chunk and follows the status " +
      "to the receipt",
    async () => {
      const { adapter, destination } = await start({ processingFetches: 1 });
      const clip = video();
      const outcome = await adapter.publishItem(item(destination, { media: [clip] }));
      expect(isPending(outcome)).toBe(true);
      const pending = outcome as PendingItem;
      expect(pending.checkAgainAt).toBe(clock.now());
      expect(pending.data).toMatchObject({
        media_type: "video",
        publish_id: fake.publishes[0]!.publishId,
        video_size: clip.byteSize,
        chunk_size: clip.byteSize,
        total_chunk_count: 1,
        uploaded: false,
        username: "alice.tt",
      });
      // (Checked apart: Bun's toMatchObject writes asymmetric matchers into the object it is given.)
      expect(String(pending.data.upload_url)).toMatch(
        new RegExp(`^${fake.uploadOrigin}/upload/\\?upload_id=\\d+&upload_token=utok`),
      );
      expect(calls(fake)).toEqual([
        "POST /v2/post/publish/creator_info/query/",
        "POST /v2/post/publish/video/init/",
      ]);
      expect(fake.uploadRequests).toEqual([]);
      expect(fake.initBodies[0]).toEqual({
        post_info: {
          title: "Watch this #herald",
          privacy_level: "PUBLIC_TO_EVERYONE",
          // Interactions stay off unless the post turns them on.
          disable_comment: true,
          disable_duet: true,
          disable_stitch: true,
          brand_content_toggle: false,
          brand_organic_toggle: false,
          is_aigc: false,
        },
        source_info: {
          source: "FILE_UPLOAD",
          video_size: clip.byteSize,
          chunk_size: clip.byteSize,
          total_chunk_count: 1,
        },
      });

      const status = await adapter.checkPending({
        destination,
        item: item(destination, { media: [clip] }),
        data: pending.data,
        since: clock.now(),
      });
      expect(status.state).toBe("published");
      const published = (status as { item: PublishedItem }).item;
      // The int64 id, exactly (a JS number would have rounded it).
      expect(published).toMatchObject({
        providerObjectId: "7312345678901234567",
        url: "https://www.tiktok.com/@alice.tt/video/7312345678901234567",
        extra: {
          publish_id: fake.publishes[0]!.publishId,
          post_id: "7312345678901234567",
          media_type: "video",
        },
      });
      expect(fake.uploadRequests).toMatchObject([
        {
          path: "/upload/",
          range: `bytes 0-${clip.byteSize - 1}/${clip.byteSize}`,
          contentType: "video/mp4",
          length: clip.byteSize,
        },
      ]);
      expect(Buffer.from(fake.publishes[0]!.bytes).equals(Buffer.from(await clip.read()))).toBe(true);
      expect(fake.posts().map((p) => p.postId)).toEqual(["7312345678901234567"]);
    },
  );

  test("a video in several chunks: TikTok's chunk rules, sent in order with Content-Range, the last one larger", async () => {
    const { adapter, destination } = await start({}, { tiktokChunkBytes: 5 * MiB });
    const clip = video({ megabytes: 17.5 });
    const size = clip.byteSize;
    const published = await publishFully(adapter, item(destination, { media: [clip] }));
    expect(published.providerObjectId).toBe(fake.posts()[0]!.postId!);
    expect(fake.initBodies[0]!.source_info).toEqual({
      source: "FILE_UPLOAD",
      video_size: size,
      chunk_size: 5 * MiB,
      total_chunk_count: 3,
    });
    expect(fake.uploadRequests.map((u) => [u.range, u.length])).toEqual([
      [`bytes 0-${5 * MiB - 1}/${size}`, 5 * MiB],
      [`bytes ${5 * MiB}-${10 * MiB - 1}/${size}`, 5 * MiB],
      [`bytes ${10 * MiB}-${size - 1}/${size}`, size - 10 * MiB],
    ]);
    expect(Buffer.from(fake.publishes[0]!.bytes).equals(Buffer.from(await clip.read()))).toBe(true);
  });

  test.each([
    ["the connection drops before TikTok keeps chunk 2", "cut-before" as const, [0, 1, 1, 2]],
    ["the answer to chunk 2 is lost after TikTok kept it", "cut-after" as const, [0, 1, 2]],
    ["the upload host answers 503 to chunk 2", "503" as const, [0, 1, 1, 2]],
  ])("an upload cut in the middle is resumed from what TikTok has: %s", async (_, mode, sent) => {
    const { adapter, destination } = await start({}, { tiktokChunkBytes: 5 * MiB });
    fake.failUpload({ chunk: 1, mode });
    const clip = video({ megabytes: 16 });
    const published = await publishFully(adapter, item(destination, { media: [clip] }));
    const chunkOf = (range: string | null) =>
      Math.floor(Number(/bytes (\d+)-/.exec(range ?? "")![1]) / (5 * MiB));
    expect(fake.uploadRequests.map((u) => chunkOf(u.range))).toEqual(sent);
    // One post: the resume asked TikTok where it stood, and never initialised again.
    expect(fake.publishes).toHaveLength(1);
    expect(fake.initBodies).toHaveLength(1);
    expect(Buffer.from(fake.publishes[0]!.bytes).equals(Buffer.from(await clip.read()))).toBe(true);
    expect(published.providerObjectId).toBe(fake.publishes[0]!.postId!);
  });

  test(
    "a chunk whose kept-alive connection is reset mid-body is re-sent once by Herald, after asking " +
      "TikTok what it holds, each on a connection of its own",
    async () => {
      const { adapter, destination } = await start({}, { tiktokChunkBytes: 5 * MiB });
      // 1 MiB of chunk 2 arrives, then the connection is reset; TikTok keeps none of that chunk.
      fake.failUpload({ chunk: 1, mode: "reset-partway", keepBytes: MiB });
      const clip = video({ megabytes: 16 });
      const published = await publishFully(adapter, item(destination, { media: [clip] }));
      const chunkOf = (range: string | null) =>
        Math.floor(Number(/bytes (\d+)-/.exec(range ?? "")![1]) / (5 * MiB));
      const sent = fake.uploadRequests;
      expect(sent.map((u) => [chunkOf(u.range), u.reset])).toEqual([
        [0, false],
        [1, true],
        [1, false],
        [2, false],
      ]);
      // The runtime re-sent nothing: every chunk went on a new connection, and the second chunk 2
      // followed a status fetch (TikTok's uploaded_bytes said where to resume).
      expect(sent.every((u) => u.fresh)).toBe(true);
      expect(sent[2]!.statusFetchesBefore).toBeGreaterThan(sent[1]!.statusFetchesBefore);
      expect(fake.publishes).toHaveLength(1);
      expect(fake.initBodies).toHaveLength(1);
      expect(Buffer.from(fake.publishes[0]!.bytes).equals(Buffer.from(await clip.read()))).toBe(true);
      expect(published.providerObjectId).toBe(fake.publishes[0]!.postId!);
    },
  );

  test(
    "an upload failing past the resumes of one check is transient; the next check resumes, without a " +
      "second init",
    async () => {
      const { adapter, destination } = await start({}, { tiktokChunkBytes: 5 * MiB });
      for (let i = 0; i < 4; i++) fake.failUpload({ chunk: 1, mode: "503" });
      const input = item(destination, { media: [video({ megabytes: 11 })] });
      const pending = (await adapter.publishItem(input)) as PendingItem;
      await expectProviderError(
        adapter.checkPending({ destination, item: input, data: pending.data, since: clock.now() }),
        "transient",
      );
      expect(fake.publishes[0]!.receivedBytes).toBe(5 * MiB); // chunk 1 is still missing
      // A later check (another process after a crash, too) goes on from TikTok's uploaded_bytes.
      const status = await adapter.checkPending({
        destination,
        item: input,
        data: pending.data,
        since: clock.now(),
      });
      expect(status.state).toBe("published");
      const sentChunks = fake.uploadRequests.map((u) => u.range!.split("-")[0]);
      expect(sentChunks.filter((r) => r === "bytes 0")).toHaveLength(1); // chunk 0 went once
      expect(fake.initBodies).toHaveLength(1);
    },
  );

  test("status progression: PROCESSING_UPLOAD checks back off, then PUBLISH_COMPLETE is the receipt", async () => {
    const { adapter, destination } = await start({ processingFetches: 7 });
    const input = item(destination);
    let data = ((await adapter.publishItem(input)) as PendingItem).data;
    const waits: number[] = [];
    for (;;) {
      const status = await adapter.checkPending({ destination, item: input, data, since: clock.now() });
      if (status.state === "published") break;
      expect(status.state).toBe("pending");
      if (status.state !== "pending") return;
      waits.push(status.checkAgainAt - clock.now());
      data = status.data!;
      expect(data.uploaded).toBe(true);
    }
    expect(waits).toEqual([TIKTOK_FIRST_RECHECK_MS, 2 * TIKTOK_FIRST_RECHECK_MS]);
    expect(fake.uploadRequests).toHaveLength(1);
    expect(fake.posts()).toHaveLength(1);
  });

  test(
    "a public post completes before moderation gives its id: checked again, and without an id after " +
      "10 minutes the receipt is the publish id",
    async () => {
      const { adapter, destination } = await start({ processingFetches: 0, moderationFetches: 4 });
      const input = item(destination);
      let data = ((await adapter.publishItem(input)) as PendingItem).data;
      const first = await adapter.checkPending({ destination, item: input, data, since: clock.now() });
      expect(first.state).toBe("pending");
      data = (first as { data: Record<string, unknown> }).data;
      expect(data.complete_since).toBe(clock.now());
      // The id comes with a later fetch: the receipt has it.
      const second = await adapter.checkPending({ destination, item: input, data, since: clock.now() });
      expect(second).toMatchObject({
        state: "published",
        item: { providerObjectId: fake.publishes[0]!.postId },
      });

      fake.options.moderationFetches = 1000;
      const other = item(destination);
      let next = ((await adapter.publishItem(other)) as PendingItem).data;
      next = (
        (await adapter.checkPending({ destination, item: other, data: next, since: clock.now() })) as {
          data: Record<string, unknown>;
        }
      ).data;
      clock.advance(TIKTOK_POST_ID_WAIT_MS);
      const late = await adapter.checkPending({ destination, item: other, data: next, since: clock.now() });
      expect(late).toMatchObject({
        state: "published",
        item: {
          providerObjectId: fake.publishes[1]!.publishId,
          url: "https://www.tiktok.com/@alice.tt",
          extra: { post_id: null },
        },
      });
    },
  );

  test("a post still processing a day after its init is outcome_unknown (never initialised again)", async () => {
    const { adapter, destination } = await start({ processingFetches: 1000 });
    const input = item(destination);
    const data = ((await adapter.publishItem(input)) as PendingItem).data;
    const since = clock.now();
    clock.advance(TIKTOK_MAX_PROCESSING_MS + 1);
    await expectProviderError(
      adapter.checkPending({ destination, item: input, data, since }),
      "outcome_unknown",
    );
  });

  const notMp4: MediaItem = { ...video(), read: async () => new Uint8Array(4096).fill(7), byteSize: 4096 };
  test.each([
    [
      "a video longer than TikTok allows the creator",
      video({ seconds: 700, known: false }),
      "duration_check_failed",
    ],
    ["bytes that are not an MP4", notMp4, "file_format_check_failed"],
  ])("FAILED after the upload (%s) is rejected with TikTok's fail_reason", async (_, clip, reason) => {
    const { adapter, destination } = await start();
    const input = item(destination, { media: [clip] });
    const data = ((await adapter.publishItem(input)) as PendingItem).data;
    const error = await expectProviderError(
      adapter.checkPending({ destination, item: input, data, since: clock.now() }),
      "rejected",
    );
    expect(error.errorCode).toBe(reason);
    expect(fake.posts()).toEqual([]);
  });

  test("options reach post_info; what the creator turned off stays off", async () => {
    const { adapter, destination } = await start({ commentDisabled: true });
    const options = {
      privacy_level: "FOLLOWER_OF_CREATOR",
      disable_comment: false,
      disable_duet: false,
      disable_stitch: false,
      brand_organic_toggle: true,
      is_aigc: true,
      video_cover_timestamp_ms: 1500,
    };
    await adapter.publishItem(item(destination, { options }));
    expect(fake.initBodies[0]!.post_info).toEqual({
      title: "Watch this #herald",
      privacy_level: "FOLLOWER_OF_CREATOR",
      disable_comment: true,
      disable_duet: false,
      disable_stitch: false,
      brand_content_toggle: false,
      brand_organic_toggle: true,
      is_aigc: true,
      video_cover_timestamp_ms: 1500,
    });
  });
});

describe("refusals and failures", () => {
  test(
    "creator info refusals: a privacy level TikTok does not offer, a video longer than allowed; " +
      "nothing is initialised",
    async () => {
      const { adapter, destination } = await start({
        privacyLevelOptions: ["FOLLOWER_OF_CREATOR", "SELF_ONLY"],
        maxVideoSeconds: 60,
      });
      const privacy = await expectProviderError(adapter.publishItem(item(destination)), "rejected");
      expect(privacy.message).toContain("FOLLOWER_OF_CREATOR, SELF_ONLY");
      const long = await expectProviderError(
        adapter.publishItem(
          item(destination, { media: [video({ seconds: 61 })], options: { privacy_level: "SELF_ONLY" } }),
        ),
        "rejected",
      );
      expect(long.message).toContain("up to 60 s");
      expect(calls(fake)).toEqual([
        "POST /v2/post/publish/creator_info/query/",
        "POST /v2/post/publish/creator_info/query/",
      ]);
    },
  );

  test(
    "an unaudited app may post only SELF_ONLY: other levels are refused; a private post's receipt is " +
      "the publish id",
    async () => {
      const { adapter, destination } = await start({ audited: false });
      const error = await expectProviderError(adapter.publishItem(item(destination)), "rejected");
      expect(error.errorCode).toBe("unaudited_client_can_only_post_to_private_accounts");
      expect(error.message).toContain("SELF_ONLY");
      const published = await publishFully(
        adapter,
        item(destination, { options: { privacy_level: "SELF_ONLY" } }),
      );
      const post = fake.posts()[0]!;
      expect(post.postId).toBeNull();
      expect(published).toMatchObject({
        providerObjectId: post.publishId,
        url: "https://www.tiktok.com/@alice.tt",
        extra: { post_id: null },
      });
    },
  );

  test("validation refusals before anything is sent: text alone, no privacy level", async () => {
    const { adapter, destination } = await start();
    await expectProviderError(adapter.publishItem(item(destination, { media: [] })), "rejected");
    await expectProviderError(adapter.publishItem(item(destination, { options: {} })), "rejected");
    expect(fake.requests).toEqual([]);
  });

  const envelope = (code: string) => ({
    data: {},
    error: { code, message: `TikTok says ${code}`, log_id: "log-1" },
  });
  test.each([
    ["access_token_invalid (401)", 401, undefined, "auth_expired", null],
    ["scope_not_authorized (401)", 401, envelope("scope_not_authorized"), "auth_revoked", null],
    ["rate_limit_exceeded (429)", 429, undefined, "transient", 60_000],
    [
      "spam_risk_too_many_posts",
      403,
      envelope("spam_risk_too_many_posts"),
      "transient",
      TIKTOK_DAILY_CAP_RETRY_MS,
    ],
    [
      "spam_risk_user_banned_from_posting",
      403,
      envelope("spam_risk_user_banned_from_posting"),
      "rejected",
      null,
    ],
    ["privacy_level_option_mismatch", 400, envelope("privacy_level_option_mismatch"), "rejected", null],
    ["invalid_params", 400, envelope("invalid_params"), "rejected", null],
    ["internal_error (500)", 500, undefined, "outcome_unknown", null],
    ["internal_error in a 200", 200, envelope("internal_error"), "outcome_unknown", null],
  ] as const)("the init answering %s", async (_, status, body, kind, retryIn) => {
    const { adapter, destination } = await start();
    fake.failNext(1, { status, body, path: "/video/init/" });
    const error = await expectProviderError(adapter.publishItem(item(destination)), kind);
    expect(error.retryAt).toBe(retryIn === null ? null : clock.now() + retryIn);
    if (body) {
      expect(error.errorCode).toBe(body.error.code);
      expect(error.message).toContain(`TikTok says ${body.error.code}`);
      expect(error.requestId).toBe("log-1");
    }
  });

  test("the real throttle (6 inits a minute) and the daily cap answer like TikTok and are mapped", async () => {
    const { adapter, destination } = await start({ initsPerMinute: 2 });
    await adapter.publishItem(item(destination));
    await adapter.publishItem(item(destination));
    const limited = await expectProviderError(adapter.publishItem(item(destination)), "transient");
    expect([limited.statusCode, limited.errorCode, limited.retryAt]).toEqual([
      429,
      "rate_limit_exceeded",
      clock.now() + 60_000,
    ]);
    fake.options.initsPerMinute = 100;
    fake.options.dailyPostCap = 2;
    const capped = await expectProviderError(adapter.publishItem(item(destination)), "transient");
    expect([capped.errorCode, capped.retryAt]).toEqual(["spam_risk_too_many_posts", clock.now() + DAY]);
  });

  test("an init that is received but never answered is outcome_unknown", async () => {
    fake = await startTikTokFake();
    const adapter = adapterFor(fake, { deps: { timeoutMs: 300 } });
    fake.hangAfterReceive = true;
    await expectProviderError(adapter.publishItem(item(destinationOf(fake))), "outcome_unknown");
    expect(fake.publishes).toHaveLength(1);
  });

  test(
    "reads that fail are safe to repeat: creator info 500 is transient; a status read refused is " +
      "outcome_unknown",
    async () => {
      const { adapter, destination } = await start();
      fake.failNext(1, { status: 500, path: "/creator_info/" });
      await expectProviderError(adapter.publishItem(item(destination)), "transient");
      expect(fake.publishes).toEqual([]);
      const input = item(destination);
      const data = ((await adapter.publishItem(input)) as PendingItem).data;
      fake.failNext(1, { status: 429, path: "/status/fetch/" });
      await expectProviderError(
        adapter.checkPending({ destination, item: input, data, since: clock.now() }),
        "transient",
      );
      fake.failNext(1, { status: 400, path: "/status/fetch/" });
      await expectProviderError(
        adapter.checkPending({ destination, item: input, data, since: clock.now() }),
        "outcome_unknown",
      );
      fake.failNext(1, { status: 401, path: "/status/fetch/" });
      await expectProviderError(
        adapter.checkPending({ destination, item: input, data, since: clock.now() }),
        "auth_expired",
      );
      expect(fake.initBodies).toHaveLength(1);
    },
  );

  test("pending data that lost its publish id is outcome_unknown, never a new post", async () => {
    const { adapter, destination } = await start();
    await expectProviderError(
      adapter.checkPending({ destination, item: item(destination), data: {}, since: clock.now() }),
      "outcome_unknown",
    );
    expect(fake.requests).toEqual([]);
  });
});

describe("publishing photos", () => {
  test(
    "photos are pulled from Herald's URLs: PHOTO, DIRECT_POST, title from the headline, description " +
      "from the text",
    async () => {
      const { adapter, destination } = await start({ processingFetches: 1 });
      const headline = "A very long headline ".repeat(6).trim();
      const published = (await adapter.publishItem(
        item(destination, {
          text: `${headline}\nand the rest`,
          headline,
          media: [photo("/photo.jpg"), photo("/photo.webp")],
          options: { privacy_level: "MUTUAL_FOLLOW_FRIENDS", disable_comment: false },
        }),
      )) as PublishedItem;
      expect(fake.initBodies[0]).toEqual({
        post_info: {
          title: headline.slice(0, 90),
          description: `${headline}\nand the rest`,
          privacy_level: "MUTUAL_FOLLOW_FRIENDS",
          disable_comment: false,
          brand_content_toggle: false,
          brand_organic_toggle: false,
        },
        source_info: {
          source: "PULL_FROM_URL",
          photo_cover_index: 0,
          photo_images: [`${mediaOrigin()}/photo.jpg`, `${mediaOrigin()}/photo.webp`],
        },
        post_mode: "DIRECT_POST",
        media_type: "PHOTO",
      });
      expect(fake.publishes[0]!.downloads.map((d) => [d.status, d.contentType])).toEqual([
        [200, "image/jpeg"],
        [200, "image/webp"],
      ]);
      expect(published).toMatchObject({
        providerObjectId: fake.posts()[0]!.postId,
        // TikTok documents no photo post URL: the receipt links the profile.
        url: "https://www.tiktok.com/@alice.tt",
        extra: { media_type: "photo" },
      });
    },
  );

  test.each([
    ["a URL TikTok cannot download", "/missing.jpg", "photo_pull_failed"],
    ["a file that is not JPEG or WebP", "/sneaky.jpg", "file_format_check_failed"],
  ])("FAILED pulls are rejected with the reason (%s)", async (_, path, reason) => {
    const { adapter, destination } = await start({ processingFetches: 0 });
    const error = await expectProviderError(
      adapter.publishItem(item(destination, { media: [photo(path, "image/jpeg")] })),
      "rejected",
    );
    expect(error.errorCode).toBe(reason);
  });

  test("an unverified URL prefix is refused by the init, with what the operator must do", async () => {
    const { adapter, destination } = await start({ verifiedUrlPrefixes: ["https://media.herald.example/"] });
    const error = await expectProviderError(
      adapter.publishItem(item(destination, { media: [photo("/photo.jpg")] })),
      "rejected",
    );
    expect(error.errorCode).toBe("url_ownership_unverified");
    expect(error.message).toContain("verify the domain of HERALD_BASE_URL");
  });

  test("a status read failing right after the photo init leaves the post pending, never re-initialised", async () => {
    const { adapter, destination } = await start({ processingFetches: 0 });
    fake.failNext(1, { status: 503, path: "/status/fetch/" });
    const input = item(destination, { media: [photo("/photo.jpg")] });
    const outcome = await adapter.publishItem(input);
    expect(isPending(outcome)).toBe(true);
    const status = await adapter.checkPending({
      destination,
      item: input,
      data: (outcome as PendingItem).data,
      since: clock.now(),
    });
    expect(status.state).toBe("published");
    expect(fake.initBodies).toHaveLength(1);
  });
});

describe("rules", () => {
  const facts = (over: Partial<MediaFacts> = {}): MediaFacts => ({
    assetId: "ast_1",
    contentType: "video/mp4",
    byteSize: 1000,
    width: 720,
    height: 1280,
    durationSec: 10,
    altText: null,
    ...over,
  });
  const jpg = (over: Partial<MediaFacts> = {}) =>
    facts({ contentType: "image/jpeg", durationSec: 0, ...over });
  const check = (over: {
    text?: string;
    media?: MediaFacts[];
    options?: Record<string, unknown>;
    publicMediaUrls?: boolean;
  }) =>
    checkTikTokItem({
      text: over.text ?? "caption",
      media: over.media ?? [facts()],
      options: over.options ?? PUBLIC,
      limits: TIKTOK_LIMITS,
      publicMediaUrls: over.publicMediaUrls ?? true,
      externalId: "open-id",
    }).map((p) => (p.option === undefined ? p.pointer : `#options${p.option}`));

  test.each([
    ["a video with a caption", {}, []],
    ["35 photos", { media: Array.from({ length: 35 }, () => jpg()) }, []],
    ["text alone", { media: [] }, [""]],
    ["no privacy level", { options: {} }, ["#options/privacy_level"]],
    ["a video and a photo", { media: [facts(), jpg()] }, ["/media"]],
    ["two videos", { media: [facts(), facts()] }, ["/media/1"]],
    ["a GIF", { media: [jpg({ contentType: "image/gif" })] }, ["/media/0"]],
    ["a PNG photo", { media: [jpg({ contentType: "image/png" })] }, ["/media/0"]],
    ["36 photos", { media: Array.from({ length: 36 }, () => jpg()) }, ["/media/35"]],
    ["a photo over 20 MB", { media: [jpg({ byteSize: 20_000_001 })] }, ["/media/0"]],
    ["a video over 4 GB", { media: [facts({ byteSize: 4_000_000_001 })] }, ["/media/0"]],
    ["an AVI video", { media: [facts({ contentType: "video/x-msvideo" })] }, ["/media/0"]],
    ["a 2,201-unit caption", { text: "a".repeat(2201) }, [""]],
    ["a 2,200-unit caption of emoji halves", { text: "😀".repeat(1100) }, []],
    ["a 4,001-unit photo description", { text: "a".repeat(4001), media: [jpg()] }, [""]],
    ["duets on photos", { media: [jpg()], options: { ...PUBLIC, disable_duet: true } }, ["/media/0"]],
    [
      "photos without public URLs",
      { media: [jpg(), jpg()], publicMediaUrls: false },
      ["/media/0", "/media/1"],
    ],
    ["a video without public URLs (uploaded, not pulled)", { publicMediaUrls: false }, []],
    [
      "a cover frame past the end",
      { options: { ...PUBLIC, video_cover_timestamp_ms: 10_001 } },
      ["/media/0"],
    ],
    [
      "branded content kept private",
      { options: { privacy_level: "SELF_ONLY", brand_content_toggle: true } },
      ["#options/privacy_level"],
    ],
  ])("%s", (_, over, pointers) => {
    expect(check(over)).toEqual(pointers);
  });

  test("options: the schema takes TikTok's fields only; branded content cannot be SELF_ONLY", () => {
    const schema = TIKTOK_RULES.optionsSchema!;
    expect(
      Value.Check(schema, { privacy_level: "SELF_ONLY", disable_comment: true, video_cover_timestamp_ms: 0 }),
    ).toBe(true);
    expect(Value.Check(schema, { privacy_level: "FRIENDS" })).toBe(false);
    expect(Value.Check(schema, { auto_add_music: true })).toBe(false);
    expect(Value.Check(schema, { video_cover_timestamp_ms: -1 })).toBe(false);
    expect(
      TIKTOK_RULES.checkOptions!({
        options: { privacy_level: "SELF_ONLY", brand_content_toggle: true },
        assetIds: [],
      }),
    ).toEqual([{ pointer: "/privacy_level", detail: expect.stringContaining("cannot be private") }]);
    expect(TIKTOK_RULES.checkOptions!({ options: { brand_content_toggle: true }, assetIds: [] })).toEqual([]);
  });

  test.each([
    [1000, { chunkSize: 1000, count: 1 }],
    [5 * MiB - 1, { chunkSize: 5 * MiB - 1, count: 1 }],
    [10 * MiB, { chunkSize: 10 * MiB, count: 1 }],
    [19.9 * MiB, { chunkSize: 10 * MiB, count: 1 }],
    [20 * MiB, { chunkSize: 10 * MiB, count: 2 }],
    [4_000_000_000, { chunkSize: 10 * MiB, count: 381 }],
  ])("chunk plan for %d bytes", (size, plan) => {
    expect(chunkPlan(Math.round(size))).toEqual(plan);
  });

  test("post ids are read from the raw answer, exactly", () => {
    expect(publicPostIds('{"data":{"publicaly_available_post_id":[7312345678901234567, 9]}}')).toEqual([
      "7312345678901234567",
      "9",
    ]);
    expect(publicPostIds('{"data":{"publicaly_available_post_id":[]}}')).toEqual([]);
  });
});

describe("metrics (POST /v2/video/query/)", () => {
  const FIELDS = ["id", "view_count", "like_count", "comment_count", "share_count"];
  let nextId = 7_400_000_000_000_000_000n;
  /** A post TikTok holds, put straight into the fake (as if Herald published it earlier). */
  function stored(over: Partial<FakePublish> = {}): FakePublish {
    const id = nextId++;
    const publish: FakePublish = {
      publishId: `v_pub_file~v2-1.${id}`,
      openId: fake.user.openId,
      kind: "VIDEO",
      postInfo: { title: `post ${id}`, privacy_level: "PUBLIC_TO_EVERYONE" },
      sourceInfo: {},
      state: "complete",
      failReason: null,
      postId: String(id),
      uploadToken: "utok",
      bytes: new Uint8Array(0),
      receivedBytes: 0,
      chunks: [],
      downloads: [],
      statusFetches: 0,
      processingLeft: 0,
      moderationLeft: 0,
      pulled: null,
      createdAt: Date.now(),
      ...over,
    };
    fake.publishes.push(publish);
    return publish;
  }
  /** The target the analytics job builds from the post's receipt (the public id, else the publish id). */
  const asTarget = (p: FakePublish, publishedAt = clock.now()): MetricsTarget => ({
    providerObjectId: p.postId ?? p.publishId,
    url: "https://www.tiktok.com/@alice.tt",
    extra: {
      publish_id: p.publishId,
      post_id: p.postId,
      media_type: p.kind === "VIDEO" ? "video" : "photo",
      privacy_level: p.postInfo.privacy_level,
    },
    publishedAt,
  });
  const byId = (results: MetricsResult[]) => Object.fromEntries(results.map((r) => [r.providerObjectId, r]));

  test("one query reads views, likes, comments and shares of a published video; nothing else is reported", async () => {
    const { adapter, destination } = await start({ processingFetches: 0 });
    expect(adapter.metricsBatchSize).toBe(20);
    const published = await publishFully(adapter, item(destination));
    expect(published.extra).toMatchObject({ privacy_level: "PUBLIC_TO_EVERYONE", media_type: "video" });
    fake.posts()[0]!.counts = { views: 1200, likes: 80, comments: 7, shares: 3 };
    const before = fake.requests.length;
    const results = await adapter.fetchMetrics!({
      destination,
      targets: [
        {
          providerObjectId: published.providerObjectId,
          url: published.url,
          extra: published.extra,
          publishedAt: clock.now(),
        },
      ],
    });
    expect(results).toEqual([
      {
        providerObjectId: published.providerObjectId,
        kind: "metrics",
        values: { views: 1200, reactions: 80, comments: 7, shares: 3 },
        providerAsOf: null,
      },
    ]);
    expect(fake.videoQueries).toEqual([{ ids: [published.providerObjectId], fields: FIELDS }]);
    const query = fake.requests.slice(before);
    expect(query.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v2/video/query/"]);
    expect(query[0]!.headers.authorization).toBe(`Bearer ${destination.credentials.accessToken}`);
  });

  test("one call per batch: 30 posts read as the job batches them (20, then 10) are two queries", async () => {
    const { adapter, destination } = await start();
    const posts = Array.from({ length: 30 }, (_, i) => stored({ counts: { views: i } }));
    const targets = posts.map((p) => asTarget(p));
    const size = adapter.metricsBatchSize!;
    const results: MetricsResult[] = [];
    for (let i = 0; i < targets.length; i += size)
      results.push(...(await adapter.fetchMetrics!({ destination, targets: targets.slice(i, i + size) })));
    expect(fake.videoQueries.map((q) => q.ids.length)).toEqual([20, 10]);
    expect(results).toHaveLength(30);
    expect(byId(results)[posts[29]!.postId!]).toMatchObject({ kind: "metrics", values: { views: 29 } });
  });

  test("a deleted video is missing; the others of the batch are read in the same query", async () => {
    const { adapter, destination } = await start();
    const kept = stored({ counts: { likes: 2 } });
    const gone = stored({ deleted: true });
    const results = byId(
      await adapter.fetchMetrics!({ destination, targets: [asTarget(kept), asTarget(gone)] }),
    );
    expect(results[kept.postId!]).toMatchObject({ kind: "metrics", values: { reactions: 2 } });
    expect(results[gone.postId!]).toEqual({
      providerObjectId: gone.postId!,
      kind: "missing",
      reason: `TikTok did not return video ${gone.postId} (deleted, or no longer public)`,
    });
    expect(fake.videoQueries).toHaveLength(1);
  });

  test("a receipt holding only the publish id: the public id TikTok gave since is found in the publish status", async () => {
    const { adapter, destination } = await start();
    // Moderation gave no id while Herald waited; the id comes with the next status fetch.
    const late = stored({ postId: null });
    const target = asTarget(late);
    expect(target.providerObjectId).toBe(late.publishId);
    const [result] = await adapter.fetchMetrics!({ destination, targets: [target] });
    expect(late.postId).not.toBeNull();
    expect(result).toEqual({
      providerObjectId: late.publishId,
      kind: "metrics",
      values: { views: 0, reactions: 0, comments: 0, shares: 0 },
      providerAsOf: null,
    });
    expect(calls(fake)).toEqual(["POST /v2/post/publish/status/fetch/", "POST /v2/video/query/"]);
    expect(fake.videoQueries[0]!.ids).toEqual([late.postId!]);
  });

  test("no public id yet is missing (read again later); a day after publication it is unsupported", async () => {
    const { adapter, destination } = await start();
    const waiting = stored({ postId: null, moderationLeft: 1000 });
    const [first] = await adapter.fetchMetrics!({ destination, targets: [asTarget(waiting)] });
    expect(first).toMatchObject({ providerObjectId: waiting.publishId, kind: "missing" });
    expect((first as { reason: string }).reason).toContain("has not given post");
    const [later] = await adapter.fetchMetrics!({
      destination,
      targets: [asTarget(waiting, clock.now() - DAY)],
    });
    expect(later).toMatchObject({ providerObjectId: waiting.publishId, kind: "unsupported" });
    expect(fake.videoQueries).toEqual([]);
  });

  test("a private (SELF_ONLY) post is unsupported without a call: it never gets a public id", async () => {
    const { adapter, destination } = await start({ processingFetches: 0 });
    const published = await publishFully(
      adapter,
      item(destination, { options: { privacy_level: "SELF_ONLY" } }),
    );
    expect(published.extra).toMatchObject({ post_id: null, privacy_level: "SELF_ONLY" });
    const before = fake.requests.length;
    const [result] = await adapter.fetchMetrics!({
      destination,
      targets: [{ ...published, publishedAt: clock.now() }],
    });
    expect(result).toMatchObject({ providerObjectId: published.providerObjectId, kind: "unsupported" });
    expect(fake.requests.length).toBe(before);
  });

  test("status reads are limited per call; a throttled one stops the others, and the query still runs", async () => {
    const { adapter, destination } = await start();
    const known = stored({ counts: { views: 5 } });
    const late = Array.from({ length: 7 }, () => stored({ postId: null, moderationLeft: 1000 }));
    const results = await adapter.fetchMetrics!({
      destination,
      targets: [asTarget(known), ...late.map((p) => asTarget(p))],
    });
    expect(late.map((p) => p.statusFetches)).toEqual([1, 1, 1, 1, 1, 0, 0]);
    expect(results.filter((r) => r.kind === "missing")).toHaveLength(7);
    expect(byId(results)[known.postId!]).toMatchObject({ kind: "metrics", values: { views: 5 } });

    fake.failNext(1, { status: 429, path: "/status/fetch/" });
    const again = byId(
      await adapter.fetchMetrics!({
        destination,
        targets: [asTarget(known), ...late.map((p) => asTarget(p))],
      }),
    );
    // The throttled read was the first: no other status read in this call.
    expect(late.map((p) => p.statusFetches)).toEqual([1, 1, 1, 1, 1, 0, 0]);
    expect(again[late[0]!.publishId]).toMatchObject({ kind: "missing" });
    expect((again[late[1]!.publishId] as { reason: string }).reason).toContain("rate limit");
    expect(again[known.postId!]).toMatchObject({ kind: "metrics" });
  });

  test("photo posts: read when video.query returns them, else unsupported (it is documented for videos)", async () => {
    const { adapter, destination } = await start();
    const photoPost = stored({ kind: "PHOTO", counts: { views: 40, likes: 4 } });
    const [unread] = await adapter.fetchMetrics!({ destination, targets: [asTarget(photoPost)] });
    expect(unread).toMatchObject({ providerObjectId: photoPost.postId, kind: "unsupported" });
    fake.options.queryReturnsPhotos = true;
    const [read] = await adapter.fetchMetrics!({ destination, targets: [asTarget(photoPost)] });
    expect(read).toMatchObject({
      kind: "metrics",
      values: { views: 40, reactions: 4, comments: 0, shares: 0 },
    });
  });

  test("a 429 fails the whole call: transient, a minute later", async () => {
    const { adapter, destination } = await start();
    const post = stored();
    fake.failNext(1, { status: 429, path: "/v2/video/query/" });
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination, targets: [asTarget(post)] }),
      "transient",
    );
    expect([error.statusCode, error.errorCode, error.operation]).toEqual([
      429,
      "rate_limit_exceeded",
      "POST /v2/video/query/",
    ]);
    expect(error.retryAt).toBe(clock.now() + 60_000);
  });

  test(
    "an expired token is auth_expired (the job refreshes it and reads again); a grant without " +
      "video.list is auth_revoked",
    async () => {
      const { adapter, destination } = await start();
      const post = stored({ counts: { shares: 9 } });
      fake.expireTokens();
      const error = await expectProviderError(
        adapter.fetchMetrics!({ destination, targets: [asTarget(post)] }),
        "auth_expired",
      );
      expect([error.statusCode, error.errorCode]).toEqual([401, "access_token_invalid"]);
      const fresh = await adapter.refreshCredentials({ destination });
      const [result] = await adapter.fetchMetrics!({
        destination: { ...destination, credentials: fresh },
        targets: [asTarget(post)],
      });
      expect(result).toMatchObject({ kind: "metrics", values: { shares: 9 } });

      const unlisted = destinationOf(fake, ["user.info.basic", "video.publish"]);
      const refused = await expectProviderError(
        adapter.fetchMetrics!({ destination: unlisted, targets: [asTarget(post)] }),
        "auth_revoked",
      );
      expect(refused.errorCode).toBe("scope_not_authorized");
    },
  );
});

adapterScenarios("tiktok", async () => {
  const f = await startTikTokFake();
  const base = adapterFor(f);
  // TikTok posts media only: the shared scenarios' items (text alone) carry a short video here.
  const clip = video();
  const withVideo = (input: PublishItemInput): PublishItemInput => ({
    ...input,
    media: input.media.length > 0 ? input.media : [clip],
    options: { ...PUBLIC, ...input.options },
  });
  const adapter: ProviderAdapter = {
    ...base,
    publishItem: (input) => base.publishItem(withVideo(input)),
    checkPending: (input) => base.checkPending({ ...input, item: withVideo(input.item) }),
  };
  return {
    adapter,
    destination: destinationOf(f),
    fake: f,
    createPath: "/v2/post/publish/video/init/",
    stored: () =>
      f.posts().map((p) => ({
        id: p.postId ?? p.publishId,
        text: String(p.kind === "VIDEO" ? p.postInfo.title : p.postInfo.description),
        replyTo: null,
      })),
    stop: () => f.stop(),
  };
});

registeredAs("tiktok", {
  connection: "fixed-app",
  idempotentCreate: false,
  pendingChecksRepeatable: true,
});
