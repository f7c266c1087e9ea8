// The YouTube adapter against the YouTube fake: Google OAuth with PKCE and offline access (an account
// without a channel refused), refresh that keeps the refresh token, the resumable upload run inside
// status checks (chunks, an interrupted chunk probed and resumed from YouTube's offset, a lost final
// answer, an expired session, a check cut short and run again), processing until processed or refused,
// quota errors deferred to midnight Pacific, every failure path, and the rules checked before sending.
// The shared scenarios are run here as they apply to a network that publishes only videos.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type { NetworkApp } from "../../src/providers/types.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { runTyped } from "../../src/providers/http.ts";
import { NETWORK_RULES } from "../../src/providers/registry.ts";
import {
  isPending,
  type DestinationRef,
  type MetricsResult,
  type MetricsTarget,
  type PendingItem,
  type PendingStatus,
  type PublishItemInput,
} from "../../src/providers/types.ts";
import { nextPacificMidnight } from "../../src/providers/youtube/api.ts";
import {
  checkYouTubeItem,
  checkYouTubeOptions,
  tagsLength,
  titleOf,
  YOUTUBE_LIMITS,
  YOUTUBE_RULES,
} from "../../src/providers/youtube/rules.ts";
import {
  createYouTubeAdapter,
  YOUTUBE_MAX_PROCESSING_MS,
  YOUTUBE_SCOPES,
  type YouTubeAdapter,
  type YouTubeDeps,
} from "../../src/providers/youtube/adapter.ts";
import {
  startYouTubeFake,
  googleErrorBody,
  type FakeVideo,
  type YouTubeFake,
  type YouTubeFakeOptions,
} from "../fakes/youtube.ts";
import { onFreshConnection } from "../fakes/shared.ts";
import {
  closedOrigin,
  expectProviderError,
  mediaItem,
  publishFully,
  publishInput,
  fakeApp,
} from "./support.ts";
import { registeredAs } from "./scenarios.ts";

const REDIRECT = "https://herald.example/oauth/callback/youtube";
const KIB256 = 256 * 1024;
const clock = new ManualClock();
beforeEach(() => clock.set("2026-03-01T12:00:00.000Z"));
let fake: YouTubeFake;
afterEach(async () => fake?.stop());

function adapterFor(f: YouTubeFake, deps: Partial<YouTubeDeps> = {}, app: Partial<NetworkApp> = {}) {
  return createYouTubeAdapter({
    fetch,
    clock,
    timeoutMs: 1000,
    pollIntervalMs: 1,
    maxPolls: 2,
    youtubeChunkBytes: KIB256,
    apps: { youtube: fakeApp(f, app) },
    ...deps,
  });
}

/** A fake, an adapter on it and a connected destination (tokens issued without the OAuth dance). */
async function start(options: YouTubeFakeOptions = {}, deps: Partial<YouTubeDeps> = {}) {
  fake = await startYouTubeFake({ now: () => clock.now(), ...options });
  const adapter = adapterFor(fake, deps);
  const destination: DestinationRef = {
    origin: fake.origin,
    externalId: fake.channel!.id,
    handle: "heraldstudio",
    credentials: {
      accessToken: fake.issueToken(),
      refreshToken: "unused",
      expiresAt: clock.now() + 3_599_000,
    },
    limits: YOUTUBE_LIMITS,
  };
  return { adapter, destination };
}

/** Deterministic video bytes of `size` (not all equal, so a misplaced chunk shows). */
function videoBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + (i >> 8)) & 0xff;
  return bytes;
}

function video(size = 700_000, over: Parameters<typeof mediaItem>[0] = {}) {
  return mediaItem({ assetId: "ast_video", contentType: "video/mp4", bytes: videoBytes(size), ...over });
}

function item(destination: DestinationRef, over: Partial<PublishItemInput> = {}): PublishItemInput {
  const text = over.text ?? "Launch day\nEverything we shipped this week.";
  return publishInput(destination, { text, headline: text.split("\n")[0]!, media: [video()], ...over });
}

/** Runs one status check of a pending item. */
function check(adapter: YouTubeAdapter, input: PublishItemInput, pending: PendingItem, since = clock.now()) {
  return adapter.checkPending({ destination: input.destination, item: input, data: pending.data, since });
}

async function pendingOf(adapter: YouTubeAdapter, input: PublishItemInput): Promise<PendingItem> {
  const outcome = await adapter.publishItem(input);
  if (!isPending(outcome)) throw new Error("expected a pending item");
  return outcome;
}

/** A fresh access token on the destination (the engine's refresh, after the clock moved past an hour). */
function renew(destination: DestinationRef): void {
  destination.credentials.accessToken = fake.issueToken();
}

/** The bytes the fake holds for its only video. */
function onlyVideo() {
  expect(fake.videos.length).toBe(1);
  return fake.videos[0]!;
}

/** Follows the authorization URL on the fake like a browser: the redirect back to Herald. */
async function consent(url: string): Promise<URL> {
  const response = await fetch(url, { redirect: "manual" });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!);
}

async function connect(adapter: YouTubeAdapter, f: YouTubeFake, verifier = "v".repeat(43)) {
  const { createHash } = await import("node:crypto");
  const challenge = createHash("sha256").update("v".repeat(43)).digest("base64url");
  const back = await consent(
    adapter.authorizationUrl({
      origin: f.origin,
      clientId: f.clientId,
      redirectUri: REDIRECT,
      state: "st_1",
      codeChallenge: challenge,
    }),
  );
  return adapter.completeAuthorization({
    origin: f.origin,
    clientId: f.clientId,
    clientSecret: f.clientSecret,
    redirectUri: REDIRECT,
    code: back.searchParams.get("code")!,
    codeVerifier: verifier,
  });
}

describe("connecting through Google OAuth", () => {
  test("asks for offline access with PKCE S256, exchanges the code with the verifier, and connects the channel", async () => {
    fake = await startYouTubeFake({ now: () => clock.now() });
    const adapter = adapterFor(fake);
    const url = new URL(
      adapter.authorizationUrl({
        origin: fake.origin,
        clientId: fake.clientId,
        redirectUri: REDIRECT,
        state: "st_1",
        codeChallenge: "c".repeat(43),
      }),
    );
    expect(url.origin + url.pathname).toBe(`${fake.origin}/o/oauth2/v2/auth`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: fake.clientId,
      redirect_uri: REDIRECT,
      response_type: "code",
      scope: YOUTUBE_SCOPES,
      state: "st_1",
      access_type: "offline",
      prompt: "consent",
      code_challenge: "c".repeat(43),
      code_challenge_method: "S256",
    });
    const [account, ...others] = await connect(adapter, fake);
    expect(others).toEqual([]);
    expect(fake.tokenRequests).toEqual([
      {
        grant_type: "authorization_code",
        code: expect.any(String),
        client_id: fake.clientId,
        client_secret: fake.clientSecret,
        redirect_uri: REDIRECT,
        code_verifier: "v".repeat(43),
      },
    ]);
    expect(account).toMatchObject({
      externalId: "UCherald0000000000000001",
      handle: "heraldstudio",
      displayName: "Herald Studio",
      profileImageUrl: fake.channel!.thumbnail,
      limits: YOUTUBE_LIMITS,
    });
    expect(account!.credentials).toEqual({
      accessToken: expect.stringMatching(/^ya29\./),
      refreshToken: expect.stringMatching(/^1\/\/0g/),
      expiresAt: clock.now() + 3599 * 1000,
      scope: YOUTUBE_SCOPES,
    });
    expect(fake.requests.filter((r) => r.path === "/youtube/v3/channels")).toHaveLength(1);
  });

  test("HERALD_YOUTUBE_SCOPES replaces the scopes asked for", async () => {
    fake = await startYouTubeFake();
    const full = "https://www.googleapis.com/auth/youtube";
    const adapter = adapterFor(fake, {}, { scopes: full });
    const [account] = await connect(adapter, fake);
    expect(fake.authorizations[0]!.scope).toBe(full);
    expect(account!.credentials.scope).toBe(full);
  });

  test("a Google account without a YouTube channel is refused with a clear message", async () => {
    fake = await startYouTubeFake();
    fake.channel = null;
    const error = await expectProviderError(connect(adapterFor(fake), fake), "rejected");
    expect(error.message).toContain("has no YouTube channel");
    expect(error.errorCode).toBe("no_channel");
  });

  test("a grant without the upload permission (unticked on the consent page) is refused", async () => {
    fake = await startYouTubeFake();
    fake.consentScopes = ["https://www.googleapis.com/auth/youtube.readonly"];
    const error = await expectProviderError(connect(adapterFor(fake), fake), "rejected");
    expect(error.message).toContain("permission to upload videos was not granted");
    expect(fake.requests.some((r) => r.path === "/youtube/v3/channels")).toBe(false);
  });

  test("a verifier that does not match the challenge is auth_revoked (invalid_grant)", async () => {
    fake = await startYouTubeFake();
    const error = await expectProviderError(connect(adapterFor(fake), fake, "w".repeat(43)), "auth_revoked");
    expect([error.statusCode, error.errorCode]).toEqual([400, "invalid_grant"]);
  });
});

describe("refreshing credentials", () => {
  test("a new access token; the refresh token Google did not send again is kept", async () => {
    fake = await startYouTubeFake({ now: () => clock.now() });
    const adapter = adapterFor(fake);
    const [account] = await connect(adapter, fake);
    clock.advance(2 * 3600_000);
    const destination = { ...destinationOf(account!), credentials: account!.credentials };
    const renewed = await adapter.refreshCredentials({ destination });
    expect(fake.tokenRequests.at(-1)).toEqual({
      grant_type: "refresh_token",
      refresh_token: account!.credentials.refreshToken as string,
      client_id: fake.clientId,
      client_secret: fake.clientSecret,
    });
    expect(renewed).toEqual({
      accessToken: expect.stringMatching(/^ya29\./),
      refreshToken: account!.credentials.refreshToken,
      expiresAt: clock.now() + 3599 * 1000,
      scope: YOUTUBE_SCOPES,
    });
    expect(renewed.accessToken).not.toBe(account!.credentials.accessToken);
  });

  test("a refresh token Google re-issues replaces the old one", async () => {
    fake = await startYouTubeFake({ reissueRefreshTokens: true });
    const adapter = adapterFor(fake);
    const [account] = await connect(adapter, fake);
    const renewed = await adapter.refreshCredentials({ destination: destinationOf(account!) });
    expect(renewed.refreshToken).not.toBe(account!.credentials.refreshToken);
    const again = await adapter.refreshCredentials({
      destination: { ...destinationOf(account!), credentials: renewed },
    });
    expect(again.accessToken).toEqual(expect.any(String));
  });

  test("a revoked grant is auth_revoked (invalid_grant: Token has been expired or revoked)", async () => {
    fake = await startYouTubeFake();
    const adapter = adapterFor(fake);
    const [account] = await connect(adapter, fake);
    fake.revokeGrants();
    const error = await expectProviderError(
      adapter.refreshCredentials({ destination: destinationOf(account!) }),
      "auth_revoked",
    );
    expect(error.errorCode).toBe("invalid_grant");
    expect(error.message).toContain("Token has been expired or revoked.");
  });

  test.each([
    ["no refresh token stored", { refreshToken: "" }, {}, "auth_revoked"],
    ["the app's client id not set", {}, { clientId: null }, "not_sent"],
  ] as const)("%s is refused without a token request", async (_name, credentials, app, kind) => {
    fake = await startYouTubeFake();
    const adapter = adapterFor(fake, {}, app);
    const destination = { ...destinationOf(null), credentials: { refreshToken: "1//x", ...credentials } };
    await expectProviderError(adapter.refreshCredentials({ destination }), kind);
    expect(fake.tokenRequests).toEqual([]);
  });
});

function destinationOf(
  account: { externalId: string; handle: string; credentials: any } | null,
): DestinationRef {
  return {
    origin: fake.origin,
    externalId: account?.externalId ?? "UCherald0000000000000001",
    handle: account?.handle ?? "heraldstudio",
    credentials: account?.credentials ?? {},
    limits: YOUTUBE_LIMITS,
  };
}

describe("publishing a video", () => {
  test(
    "publishItem opens the session and hands back a pending item with nothing secret; the check " +
      "uploads in 256 KiB chunks, waits for processing, and publishes",
    async () => {
      const { adapter, destination } = await start({ processingPolls: 1 });
      const input = item(destination);
      const pending = await pendingOf(adapter, input);
      expect(pending.checkAgainAt).toBe(clock.now());
      const session = fake.sessions[0]!;
      expect(pending.data).toEqual({ session_uri: session.uri, total: 700_000, content_type: "video/mp4" });
      const stored = JSON.stringify(pending.data);
      expect(stored).not.toContain(String(destination.credentials.accessToken));
      expect(stored).not.toContain(fake.clientSecret);
      expect(session).toMatchObject({
        total: 700_000,
        contentType: "video/mp4",
        snippet: { title: "Launch day", description: input.text },
        status: { privacyStatus: "public" },
        notifySubscribers: true,
        held: 0,
      });
      expect(fake.videos).toEqual([]); // nothing on YouTube before the bytes

      const status = await check(adapter, input, pending);
      expect(status.state).toBe("published");
      const published = (status as Extract<PendingStatus, { state: "published" }>).item;
      const stored1 = onlyVideo();
      expect(Buffer.from(stored1.bytes).equals(Buffer.from(videoBytes(700_000)))).toBe(true);
      expect(session.chunks).toEqual([
        { start: 0, length: KIB256, answered: 308 },
        { start: KIB256, length: KIB256, answered: 308 },
        { start: 2 * KIB256, length: 700_000 - 2 * KIB256, answered: 201 },
      ]);
      expect(published).toMatchObject({
        providerObjectId: stored1.id,
        url: `https://www.youtube.com/watch?v=${stored1.id}`,
        extra: { video_id: stored1.id, privacy_status: "public" },
      });
      // Every request to the session carries the bearer token.
      const puts = fake.requests.filter((r) => r.method === "PUT");
      expect(
        puts.every((r) => r.headers.authorization === `Bearer ${destination.credentials.accessToken}`),
      ).toBe(true);
    },
  );

  test("options: privacy, audience, category, tags and no subscriber notification reach YouTube", async () => {
    const { adapter, destination } = await start({ processingPolls: 0 });
    const options = {
      privacy_status: "unlisted",
      made_for_kids: false,
      category_id: "27",
      tags: ["herald", "open source"],
      notify_subscribers: false,
    };
    const published = await publishFully(adapter, item(destination, { options }));
    const session = fake.sessions[0]!;
    expect(session).toMatchObject({
      snippet: { categoryId: "27", tags: ["herald", "open source"] },
      status: { privacyStatus: "unlisted", selfDeclaredMadeForKids: false },
      notifySubscribers: false,
    });
    expect(onlyVideo()).toMatchObject({ privacyStatus: "unlisted", madeForKids: false, categoryId: "27" });
    expect(published.extra.privacy_status).toBe("unlisted");
  });

  test("an unaudited project's upload is locked private by YouTube: the receipt says so", async () => {
    const { adapter, destination } = await start({ processingPolls: 0, unverifiedProject: true });
    const published = await publishFully(adapter, item(destination));
    expect(published.extra.privacy_status).toBe("private");
  });

  test("a video still processing after the inline polls stays pending on its id, and is published once processed", async () => {
    const { adapter, destination } = await start({ processingPolls: 50 });
    const input = item(destination);
    const status = await check(adapter, input, await pendingOf(adapter, input));
    const video1 = onlyVideo();
    expect(status).toEqual({
      state: "pending",
      checkAgainAt: clock.now() + 30_000,
      data: { video_id: video1.id, uploaded_at: clock.now() },
    });
    const since = clock.now();
    clock.advance(30_000);
    const waiting = { pending: true, data: status.state === "pending" ? status.data! : {} } as PendingItem;
    expect((await check(adapter, input, waiting, since)).state).toBe("pending");
    video1.pollsLeft = 0;
    const done = await check(adapter, input, waiting, since);
    expect(done).toMatchObject({ state: "published", item: { providerObjectId: video1.id } });
    expect(fake.sessions).toHaveLength(1);
  });

  test("checks while processing wait longer as the wait grows, at most 10 minutes", async () => {
    const { adapter, destination } = await start({ processingPolls: 1000 });
    const input = item(destination);
    const status = await check(adapter, input, await pendingOf(adapter, input));
    const waiting = { data: (status as { data: Record<string, unknown> }).data } as PendingItem;
    const since = clock.now();
    const waits: number[] = [];
    for (const elapsed of [60_000, 20 * 60_000, 5 * 3600_000]) {
      clock.set(since + elapsed);
      renew(destination);
      const next = await check(adapter, input, waiting, since);
      waits.push((next as { checkAgainAt: number }).checkAgainAt - clock.now());
    }
    expect(waits).toEqual([30_000, 120_000, 600_000]);
  });

  test.each([
    ["failed", "upload failed (codec)"],
    ["rejected", "YouTube rejected the video (duplicate)"],
  ] as const)("processing that ends %s fails the item with YouTube's reason", async (end, reason) => {
    const { adapter, destination } = await start({ processingPolls: 0 });
    fake.nextVideoEnds(end);
    const input = item(destination);
    const error = await expectProviderError(
      check(adapter, input, await pendingOf(adapter, input)),
      "rejected",
    );
    expect(error.message).toContain(reason);
    expect(error.message).toContain(`https://www.youtube.com/watch?v=${onlyVideo().id}`);
  });

  test("a video still processing after 24 hours fails, naming the video", async () => {
    const { adapter, destination } = await start({ processingPolls: 1000 });
    const input = item(destination);
    const since = clock.now();
    const status = await check(adapter, input, await pendingOf(adapter, input), since);
    clock.advance(YOUTUBE_MAX_PROCESSING_MS + 1);
    renew(destination);
    const waiting = { data: (status as { data: Record<string, unknown> }).data } as PendingItem;
    const error = await expectProviderError(check(adapter, input, waiting, since), "rejected");
    expect(error.message).toContain("within 24 hours");
    expect(error.message).toContain(onlyVideo().id);
  });

  test("a video YouTube no longer lists (deleted) fails the item once the grace period is over", async () => {
    const { adapter, destination } = await start({ processingPolls: 1000 });
    const input = item(destination);
    const status = await check(adapter, input, await pendingOf(adapter, input));
    const waiting = { data: (status as { data: Record<string, unknown> }).data } as PendingItem;
    fake.videos.length = 0;
    expect((await check(adapter, input, waiting)).state).toBe("pending");
    clock.advance(11 * 60_000);
    const error = await expectProviderError(check(adapter, input, waiting), "rejected");
    expect(error.message).toContain("no longer lists");
  });
});

describe("interrupted uploads", () => {
  test.each([
    ["the connection is cut (no answer)", "hang"],
    ["a 503", 503],
    ["a 500", 500],
  ] as const)(
    "a chunk interrupted by %s is probed and resumed from YouTube's offset; one video with every byte",
    async (_name, then) => {
      const { adapter, destination } = await start({ processingPolls: 0 }, { timeoutMs: 300 });
      const input = item(destination);
      const pending = await pendingOf(adapter, input);
      // The first chunk: YouTube keeps 100,000 of its bytes, then the answer never comes (or is a 5xx).
      fake.cutNextChunk({ keep: 100_000, then });
      const session = fake.sessions[0]!;
      const status = await check(adapter, input, pending);
      expect(status.state).toBe("published");
      const stored = onlyVideo();
      expect(Buffer.from(stored.bytes).equals(Buffer.from(videoBytes(700_000)))).toBe(true);
      // Resumed at 100,000, where the probe said YouTube's bytes end, not at 262,144.
      expect(session.chunks).toEqual([
        { start: 0, length: KIB256, answered: "cut" },
        { start: 100_000, length: KIB256, answered: 308 },
        { start: 100_000 + KIB256, length: KIB256, answered: 308 },
        { start: 100_000 + 2 * KIB256, length: 700_000 - 100_000 - 2 * KIB256, answered: 201 },
      ]);
      const probes = fake.requests.filter(
        (r) => r.method === "PUT" && r.headers["content-range"]?.startsWith("bytes */"),
      );
      expect(probes.map((r) => r.headers["content-range"])).toEqual(["bytes */700000", "bytes */700000"]);
      expect(fake.sessions).toHaveLength(1);
    },
  );

  test(
    "a chunk whose kept-alive connection is reset mid-body is not sent again behind Herald's back: " +
      "probed, resumed after the bytes YouTube kept, each byte sent once after that",
    async () => {
      const { adapter, destination } = await start({ processingPolls: 0, cuttable: true });
      const input = item(destination);
      const pending = await pendingOf(adapter, input);
      // 100,000 bytes of the first chunk arrive, then the connection is reset (Google keeps them).
      fake.resetNextChunk({ keepBytes: 100_000 });
      const status = await check(adapter, input, pending);
      expect(status.state).toBe("published");
      expect(fake.videos).toHaveLength(1);
      expect(Buffer.from(onlyVideo().bytes).equals(Buffer.from(videoBytes(700_000)))).toBe(true);
      expect(fake.sessions[0]!.chunks).toEqual([
        { start: 0, length: KIB256, answered: "cut" },
        { start: 100_000, length: KIB256, answered: 308 },
        { start: 100_000 + KIB256, length: KIB256, answered: 308 },
        { start: 100_000 + 2 * KIB256, length: 700_000 - 100_000 - 2 * KIB256, answered: 201 },
      ]);
      const puts = fake.requests.filter((r) => r.method === "PUT");
      expect(puts.map((r) => r.headers["content-range"])).toEqual([
        "bytes */700000",
        "bytes */700000",
        `bytes 100000-${100_000 + KIB256 - 1}/700000`,
        `bytes ${100_000 + KIB256}-${100_000 + 2 * KIB256 - 1}/700000`,
        `bytes ${100_000 + 2 * KIB256}-699999/700000`,
      ]);
      // Every chunk went on a connection of its own: none could be re-sent by the runtime.
      const chunks = puts.filter((r) => !r.headers["content-range"]!.startsWith("bytes */"));
      expect(chunks.every((r) => onFreshConnection(r.headers))).toBe(true);
    },
  );

  test("the final chunk's answer is lost: the probe finds the finished video, nothing is uploaded twice", async () => {
    const { adapter, destination } = await start({ processingPolls: 0 }, { timeoutMs: 300 });
    fake.hangAfterReceive = true;
    const input = item(destination);
    const status = await check(adapter, input, await pendingOf(adapter, input));
    expect(status).toMatchObject({ state: "published", item: { providerObjectId: onlyVideo().id } });
    expect(fake.sessions).toHaveLength(1);
    expect(fake.sessions[0]!.chunks.map((c) => c.answered)).toEqual([308, 308, 201]);
  });

  test(
    "a check cut short (YouTube unreachable mid-upload) throws transient; the next check, in a new " +
      "process, resumes the same session",
    async () => {
      const { adapter, destination } = await start({ processingPolls: 0 });
      const input = item(destination);
      const pending = await pendingOf(adapter, input);
      // After the first chunk, every call to the session fails (chunk, then its probe).
      let puts = 0;
      const flaky = (async (url: Parameters<typeof fetch>[0], init?: RequestInit) => {
        if (init?.method === "PUT" && ++puts > 2)
          throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
        return fetch(url, init);
      }) as typeof fetch;
      const dying = adapterFor(fake, { fetch: flaky });
      await expectProviderError(check(dying, input, pending), "transient");
      expect(fake.sessions[0]!.held).toBe(KIB256);
      const status = await check(adapterFor(fake), input, pending);
      expect(status.state).toBe("published");
      expect(Buffer.from(onlyVideo().bytes).equals(Buffer.from(videoBytes(700_000)))).toBe(true);
      expect(fake.sessions).toHaveLength(1);
      // Running the finished check again finds the same video and publishes nothing new.
      const again = await check(adapterFor(fake), input, pending);
      expect(again).toMatchObject({ state: "published", item: { providerObjectId: onlyVideo().id } });
    },
  );

  test("a session that stops taking bytes gives up after three chunks without progress", async () => {
    const { adapter, destination } = await start({ processingPolls: 0 });
    const input = item(destination);
    const pending = await pendingOf(adapter, input);
    fake.failNext(10, { status: 503, path: "/upload/youtube/v3/videos" });
    await expectProviderError(check(adapter, input, pending), "transient");
  });

  test.each([404, 410] as const)(
    "a session that expired (%d) is gone: a new session uploads the video once",
    async (status) => {
      const { adapter, destination } = await start({ processingPolls: 0 });
      const input = item(destination);
      const pending = await pendingOf(adapter, input);
      fake.expireSessions(status);
      const result = await check(adapter, input, pending);
      expect(result).toEqual({ state: "gone", reason: expect.stringContaining(`expired (${status})`) });
      const published = await publishFully(adapter, input);
      expect(fake.sessions.map((s) => s.video !== null)).toEqual([false, true]);
      expect(published.providerObjectId).toBe(onlyVideo().id);
    },
  );

  test("pending data whose session URI is not on the API origin is gone (the token is never sent there)", async () => {
    const { adapter, destination } = await start();
    const input = item(destination);
    const data = {
      session_uri: "https://evil.example/upload?upload_id=x",
      total: 700_000,
      content_type: "video/mp4",
    };
    const result = await adapter.checkPending({ destination, item: input, data, since: clock.now() });
    expect(result.state).toBe("gone");
    expect(fake.requests).toEqual([]);
  });

  test("an access token that expired mid-upload is auth_expired; after a refresh the check resumes", async () => {
    const { adapter, destination } = await start({ processingPolls: 0 });
    const input = item(destination);
    const pending = await pendingOf(adapter, input);
    fake.expireTokens();
    await expectProviderError(check(adapter, input, pending), "auth_expired");
    const fresh = {
      ...destination,
      credentials: { ...destination.credentials, accessToken: fake.issueToken() },
    };
    const status = await adapter.checkPending({
      destination: fresh,
      item: { ...input, destination: fresh },
      data: pending.data,
      since: clock.now(),
    });
    expect(status.state).toBe("published");
    expect(fake.videos).toHaveLength(1);
  });
});

describe("quotas and failures", () => {
  test.each([
    ["2026-03-01T12:00:00.000Z", "2026-03-02T08:00:00.000Z"], // PST: midnight is 08:00 UTC
    ["2026-03-08T09:00:00.000Z", "2026-03-09T07:00:00.000Z"], // the night clocks move to PDT
    ["2026-07-01T06:59:00.000Z", "2026-07-01T07:00:00.000Z"], // a minute before midnight PDT
  ])("the quota reset after %s is %s", (now, reset) => {
    expect(new Date(nextPacificMidnight(Date.parse(now))).toISOString()).toBe(reset);
  });

  test("quotaExceeded on the session defers the item to midnight Pacific", async () => {
    const { adapter, destination } = await start();
    fake.quota.insertsLeft = 0;
    const error = await expectProviderError(adapter.publishItem(item(destination)), "transient");
    expect([error.statusCode, error.errorCode]).toEqual([403, "quotaExceeded"]);
    expect(error.retryAt).toBe(Date.parse("2026-03-02T08:00:00.000Z"));
    expect(fake.sessions).toEqual([]);
  });

  test("the channel's uploadLimitExceeded and the legacy dailyLimitExceeded defer to midnight Pacific too", async () => {
    const { adapter, destination } = await start();
    fake.channelUploadsLeft = 0;
    const limit = await expectProviderError(adapter.publishItem(item(destination)), "transient");
    expect([limit.statusCode, limit.errorCode, limit.retryAt]).toEqual([
      400,
      "uploadLimitExceeded",
      Date.parse("2026-03-02T08:00:00.000Z"),
    ]);
    fake.channelUploadsLeft = 10;
    fake.failNext(1, {
      status: 403,
      body: googleErrorBody(403, "dailyLimitExceeded", "Daily Limit Exceeded", "usageLimits"),
    });
    const daily = await expectProviderError(adapter.publishItem(item(destination)), "transient");
    expect(daily.retryAt).toBe(Date.parse("2026-03-02T08:00:00.000Z"));
  });

  test(
    "a spent quota or an unreachable YouTube while reading the processing status keeps the video " +
      "pending (it exists: never a second upload)",
    async () => {
      const { adapter, destination } = await start({ processingPolls: 1000 });
      const input = item(destination);
      const since = clock.now();
      const status = await check(adapter, input, await pendingOf(adapter, input), since);
      const waiting = { data: (status as { data: Record<string, unknown> }).data } as PendingItem;
      fake.quota.unitsLeft = 0;
      expect(await check(adapter, input, waiting, since)).toEqual({
        state: "pending",
        checkAgainAt: Date.parse("2026-03-02T08:00:00.000Z"),
      });
      fake.quota.unitsLeft = 100;
      fake.failNext(1, { status: 503, path: "/youtube/v3/videos" });
      expect(await check(adapter, input, waiting, since)).toEqual({
        state: "pending",
        checkAgainAt: clock.now() + 30_000,
      });
      // Still unreadable after 24 hours: the post fails, naming the video.
      clock.advance(YOUTUBE_MAX_PROCESSING_MS + 1);
      renew(destination);
      fake.failNext(1, { status: 503, path: "/youtube/v3/videos" });
      const error = await expectProviderError(check(adapter, input, waiting, since), "rejected");
      expect(error.message).toContain(`could not be read for 24 hours`);
      expect(error.message).toContain(onlyVideo().id);
      expect(fake.sessions).toHaveLength(1);
    },
  );

  test.each([
    [
      "403 rateLimitExceeded",
      403,
      googleErrorBody(403, "rateLimitExceeded", "Rate Limit Exceeded"),
      {},
      60_000,
    ],
    ["429 without Retry-After", 429, undefined, {}, 60_000],
    ["429 with Retry-After: 120", 429, undefined, { "retry-after": "120" }, 120_000],
  ] as const)("%s is transient, retried after a short wait", async (_name, status, body, headers, wait) => {
    const { adapter, destination } = await start();
    fake.failNext(1, { status, body, headers, path: "/upload/youtube/v3/videos" });
    const error = await expectProviderError(adapter.publishItem(item(destination)), "transient");
    expect(error.retryAt).toBe(clock.now() + wait);
  });

  test.each([
    ["401 authError", 401, undefined, "auth_expired"],
    [
      "401 youtubeSignupRequired",
      401,
      googleErrorBody(401, "youtubeSignupRequired", "no channel", "youtube.header"),
      "auth_revoked",
    ],
    [
      "403 insufficientPermissions",
      403,
      googleErrorBody(403, "insufficientPermissions", "Insufficient Permission"),
      "auth_revoked",
    ],
    ["403 forbidden", 403, undefined, "rejected"],
    ["400 invalidTitle", 400, googleErrorBody(400, "invalidTitle", "bad title", "youtube.video"), "rejected"],
    ["500 (the session is not a video)", 500, undefined, "transient"],
    ["503", 503, undefined, "transient"],
  ] as const)("%s on the session has the right kind", async (_name, status, body, kind) => {
    const { adapter, destination } = await start();
    fake.failNext(1, { status, body, path: "/upload/youtube/v3/videos" });
    const error = await expectProviderError(adapter.publishItem(item(destination)), kind);
    expect(error.statusCode).toBe(status);
    expect(fake.sessions).toEqual([]);
  });

  test("a session URI on another host is refused before any byte is sent", async () => {
    const { destination } = await start();
    const elsewhere = (async (url: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const response = await fetch(url, init);
      if (init?.method !== "POST") return response;
      return new Response(null, {
        status: 200,
        headers: { location: "https://uploads.example/session?upload_id=1" },
      });
    }) as typeof fetch;
    const error = await expectProviderError(
      adapterFor(fake, { fetch: elsewhere }).publishItem(item(destination)),
      "transient",
    );
    expect(error.message).toContain("not on the API origin");
  });

  test("an unreadable video fails before anything is sent (not_sent)", async () => {
    const { adapter, destination } = await start();
    const broken = { ...video(), read: async () => Promise.reject(new TypeError("bytes went missing")) };
    const input = item(destination, { media: [broken] });
    const error = await expectProviderError(
      runTyped({ operation: "publish", work: () => adapter.publishItem(input) }),
      "not_sent",
    );
    expect(error.message).toContain("bytes went missing");
    expect(fake.requests).toEqual([]);
  });

  test("YouTube refusing connections is transient (nothing was sent)", async () => {
    const { adapter, destination } = await start();
    const closed = { ...destination, origin: await closedOrigin() };
    await expectProviderError(adapter.publishItem(item(closed)), "transient");
  });
});

describe("metrics (GET /youtube/v3/videos?part=statistics)", () => {
  let n = 0;
  /** A processed video the channel holds, put straight into the fake (as if Herald published it earlier). */
  function stored(over: Partial<FakeVideo> = {}): FakeVideo {
    const video: FakeVideo = {
      id: `vid${String(++n).padStart(8, "0")}`,
      channelId: fake.channel!.id,
      title: `video ${n}`,
      description: "",
      tags: null,
      categoryId: null,
      privacyStatus: "public",
      madeForKids: null,
      notifySubscribers: true,
      contentType: "video/mp4",
      bytes: new Uint8Array(0),
      uploadStatus: "processed",
      pollsLeft: 0,
      end: "processed",
      ...over,
    };
    fake.videos.push(video);
    return video;
  }
  const asTarget = (v: FakeVideo): MetricsTarget => ({
    providerObjectId: v.id,
    url: `https://www.youtube.com/watch?v=${v.id}`,
    extra: { video_id: v.id, privacy_status: v.privacyStatus },
    publishedAt: clock.now(),
  });
  const byId = (results: MetricsResult[]) => Object.fromEntries(results.map((r) => [r.providerObjectId, r]));

  test(
    "one videos.list reads views, likes and comments (strings) of a published video; impressions and " +
      "shares are not reported",
    async () => {
      const { adapter, destination } = await start({ processingPolls: 0 });
      expect(adapter.metricsBatchSize).toBe(50);
      const published = await publishFully(adapter, item(destination));
      onlyVideo().counts = { views: 4321, likes: 210, favorites: 3, comments: 17 };
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
          values: { views: 4321, reactions: 210, comments: 17 },
          providerAsOf: null,
        },
      ]);
      expect(fake.statisticsReads).toEqual([[published.providerObjectId]]);
      const reads = fake.requests.slice(before);
      expect(reads.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /youtube/v3/videos"]);
      expect(reads[0]!.headers.authorization).toBe(`Bearer ${destination.credentials.accessToken}`);
    },
  );

  test("one call per batch: 120 videos read as the job batches them (50, 50, 20) are three reads of one unit each", async () => {
    const { adapter, destination } = await start();
    const videos = Array.from({ length: 120 }, (_, i) => stored({ counts: { views: i } }));
    const units = fake.quota.unitsLeft;
    const targets = videos.map(asTarget);
    const size = adapter.metricsBatchSize!;
    const results: MetricsResult[] = [];
    for (let i = 0; i < targets.length; i += size)
      results.push(...(await adapter.fetchMetrics!({ destination, targets: targets.slice(i, i + size) })));
    expect(fake.statisticsReads.map((ids) => ids.length)).toEqual([50, 50, 20]);
    expect(fake.quota.unitsLeft).toBe(units - 3);
    expect(results).toHaveLength(120);
    expect(byId(results)[videos[119]!.id]).toMatchObject({ kind: "metrics", values: { views: 119 } });
  });

  test("a deleted video is missing; hidden likes and comments turned off are not reported (not 0)", async () => {
    const { adapter, destination } = await start();
    const quiet = stored({
      counts: { views: 50, likes: 9, comments: 4 },
      likesHidden: true,
      commentsDisabled: true,
    });
    const gone = stored();
    fake.videos = fake.videos.filter((v) => v !== gone);
    const results = byId(
      await adapter.fetchMetrics!({ destination, targets: [asTarget(quiet), asTarget(gone)] }),
    );
    expect(results[quiet.id]).toEqual({
      providerObjectId: quiet.id,
      kind: "metrics",
      values: { views: 50 },
      providerAsOf: null,
    });
    expect(results[gone.id]).toEqual({
      providerObjectId: gone.id,
      kind: "missing",
      reason: `YouTube did not return video ${gone.id} (deleted, or not visible to the channel)`,
    });
    expect(fake.statisticsReads).toHaveLength(1);
  });

  test("a spent quota (quotaExceeded) fails the call until midnight Pacific", async () => {
    const { adapter, destination } = await start();
    const video = stored();
    fake.quota.unitsLeft = 0;
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination, targets: [asTarget(video)] }),
      "transient",
    );
    expect([error.statusCode, error.errorCode, error.operation]).toEqual([
      403,
      "quotaExceeded",
      "GET /youtube/v3/videos",
    ]);
    expect(error.retryAt).toBe(Date.parse("2026-03-02T08:00:00.000Z"));
  });

  test("a 429 fails the call: transient, after Retry-After", async () => {
    const { adapter, destination } = await start();
    const video = stored();
    fake.failNext(1, { status: 429, path: "/youtube/v3/videos", headers: { "retry-after": "120" } });
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination, targets: [asTarget(video)] }),
      "transient",
    );
    expect([error.statusCode, error.errorCode]).toEqual([429, "rateLimitExceeded"]);
    expect(error.retryAt).toBe(clock.now() + 120_000);
  });

  test("an expired token is auth_expired (the job refreshes it and reads again)", async () => {
    const { adapter, destination } = await start();
    const video = stored({ counts: { likes: 6 } });
    fake.expireTokens();
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination, targets: [asTarget(video)] }),
      "auth_expired",
    );
    expect(error.statusCode).toBe(401);
    renew(destination);
    const [result] = await adapter.fetchMetrics!({ destination, targets: [asTarget(video)] });
    expect(result).toMatchObject({ kind: "metrics", values: { reactions: 6 } });
  });
});

describe("the shared scenarios, as they apply to a network that publishes only videos", () => {
  test("its rules are the registry's rules for the channel", async () => {
    const { adapter } = await start();
    const rules = NETWORK_RULES.find((n) => n.channel === "youtube")!;
    expect(rules).toBe(YOUTUBE_RULES);
    const { dailyCap, monthlyPostLimit, supportsThreads, optionsSchema } = adapter;
    expect({ dailyCap, monthlyPostLimit, supportsThreads, optionsSchema }).toEqual({
      dailyCap: 100,
      monthlyPostLimit: null,
      supportsThreads: false,
      optionsSchema: rules.optionsSchema,
    });
  });

  test("publishes an item the network then holds (its text as the description); no replies", async () => {
    const { adapter, destination } = await start({ processingPolls: 0 });
    const input = item(destination);
    const published = await publishFully(adapter, input);
    expect(published.url).toMatch(/^https:\/\/www\.youtube\.com\/watch\?v=/);
    expect(fake.videos.map((v) => ({ id: v.id, text: v.description }))).toEqual([
      { id: published.providerObjectId, text: input.text },
    ]);
    const reply = item(destination, { itemIndex: 1, root: published, parent: published });
    await expectProviderError(adapter.publishItem(reply), "rejected");
    expect(fake.sessions).toHaveLength(1);
  });
});

describe("rules checked before sending", () => {
  const mp4 = { assetId: "a", contentType: "video/mp4", byteSize: 1000, width: 16, height: 9, altText: null };
  const png = { ...mp4, contentType: "image/png" };
  test.each([
    ["a video with a title line", "Title\nmore", [mp4], []],
    ["text only", "Just words", [], [""]],
    ["an image", "Title", [png], ["/media/0"]],
    ["a video and an image", "Title", [mp4, png], ["/media/1"]],
    ["two videos", "Title", [mp4, mp4], ["/media/1"]],
    ["< or > in the text", "Title <b>bold</b>", [mp4], [""]],
    ["no text (no title)", "  ", [mp4], [""]],
    ["a description of 5,002 UTF-8 bytes in 2,501 characters", "é".repeat(2501), [mp4], [""]],
    ["a video over 12 hours", "Title", [{ ...mp4, durationSec: 12 * 3600 + 1 }], ["/media/0"]],
  ] as const)("%s", (_name, text, media, pointers) => {
    const problems = checkYouTubeItem({ text, media: [...media] });
    expect(problems.map((p) => p.pointer)).toEqual([...pointers]);
  });

  test("the registry's checkItem is the same check (no network)", () => {
    const problems = YOUTUBE_RULES.checkItem!({
      text: "x",
      media: [],
      options: {},
      limits: YOUTUBE_LIMITS,
      publicMediaUrls: false,
      externalId: "UC1",
    });
    expect(problems[0]!.detail).toContain("videos only");
  });

  test.each([
    ["fine", { tags: ["herald", "open source"] }, []],
    ["a comma in a tag", { tags: ["a,b"] }, ["/tags/0"]],
    ["an angle bracket in a tag", { tags: ["ok", "<x>"] }, ["/tags/1"]],
    [
      "tags over 500 characters as YouTube counts them",
      { tags: ["a b".repeat(100), "c".repeat(198)] },
      ["/tags"],
    ],
  ] as const)("options: %s", (_name, options, pointers) => {
    expect(checkYouTubeOptions({ ...options }).map((p) => p.pointer)).toEqual([...pointers]);
  });

  test("tags count commas between them and quotes around tags with spaces", () => {
    expect(tagsLength(["a", "b c"])).toBe(1 + 1 + 5);
    expect(tagsLength([])).toBe(0);
  });

  test.each([
    ["the headline", { headline: "Launch day", text: "Launch day\nmore" }, "Launch day"],
    [
      "the first non-empty line when there is no headline",
      { headline: "", text: "\n  Hello  \nworld" },
      "Hello",
    ],
    ["cut to 100 UTF-16 units", { headline: "a".repeat(120), text: "" }, "a".repeat(100)],
    ["never splitting an emoji", { headline: `${"a".repeat(99)}😀`, text: "" }, "a".repeat(99)],
  ])("the title is %s", (_name, input, title) => {
    expect(titleOf(input)).toBe(title);
  });

  test.each([
    ["a text-only item", { media: [] }],
    ["an image", { media: [mediaItem({})] }],
    ["two videos", { media: [video(), video()] }],
    ["< in the text", { text: "a <b> title" }],
    ["a comma in a tag", { options: { tags: ["a,b"] } }],
  ])("publishItem refuses %s before sending anything", async (_name, over) => {
    const { adapter, destination } = await start();
    await expectProviderError(adapter.publishItem(item(destination, over)), "rejected");
    expect(fake.requests).toEqual([]);
  });
});

registeredAs("youtube", {
  connection: "fixed-app",
  idempotentCreate: false,
  pendingChecksRepeatable: true,
});
