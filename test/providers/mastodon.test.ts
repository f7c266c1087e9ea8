import { afterEach, describe, expect, test } from "bun:test";
import { systemClock } from "../../src/lib/clock.ts";
import {
  createMastodonAdapter,
  MASTODON_DEFAULT_LIMITS,
  mastodonRetryAt,
} from "../../src/providers/mastodon/adapter.ts";
import { createPkcePair } from "../../src/providers/pkce.ts";
import type { DestinationRef, PublishedItem, PublishItemInput } from "../../src/providers/types.ts";
import { startMastodonFake, type MastodonFake, type MastodonFakeOptions } from "../fakes/mastodon.ts";
import { adapterScenarios, registeredAs } from "./scenarios.ts";
import { closedOrigin, expectProviderError, mediaItem, publishInput } from "./support.ts";

const adapter = createMastodonAdapter({
  fetch,
  clock: systemClock,
  timeoutMs: 1000,
  mediaPollIntervalMs: 10,
  mediaMaxPolls: 5,
});
let fake: MastodonFake;
afterEach(async () => fake?.stop());

async function start(
  options: MastodonFakeOptions = {},
): Promise<{ fake: MastodonFake; destination: DestinationRef }> {
  fake = await startMastodonFake(options);
  const destination: DestinationRef = {
    origin: fake.origin,
    externalId: fake.account.id,
    handle: "alice",
    credentials: { accessToken: fake.issueToken() },
    limits: MASTODON_DEFAULT_LIMITS,
  };
  return { fake, destination };
}

const item = publishInput;

describe("connecting through OAuth", () => {
  test("registers the app, sends the user to authorize with PKCE, exchanges the code and reads account and limits", async () => {
    fake = await startMastodonFake({
      maxCharacters: 1000,
      maxMediaAttachments: 6,
      imageSizeLimit: 8_000_000,
    });
    const redirectUri = "https://herald.example/oauth/callback/mastodon";
    const app = await adapter.registerApp({
      origin: fake.origin,
      redirectUri,
      clientName: "Herald",
      website: "https://herald.example",
    });
    expect(fake.apps[0]).toMatchObject({
      clientId: app.clientId,
      redirectUris: [redirectUri],
      scopes: "read write",
    });

    const pkce = createPkcePair();
    const url = new URL(
      adapter.authorizationUrl({
        origin: fake.origin,
        clientId: app.clientId,
        redirectUri,
        state: "st_1",
        codeChallenge: pkce.challenge,
      }),
    );
    expect(url.pathname).toBe("/oauth/authorize");
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: "code",
      scope: "read write",
      state: "st_1",
      code_challenge: pkce.challenge,
      code_challenge_method: "S256",
    });

    const consent = await fetch(url, { redirect: "manual" });
    expect(consent.status).toBe(302);
    const back = new URL(consent.headers.get("location")!);
    expect(back.origin + back.pathname).toBe(redirectUri);
    expect(back.searchParams.get("state")).toBe("st_1");

    const [account] = await adapter.completeAuthorization({
      origin: fake.origin,
      ...app,
      redirectUri,
      code: back.searchParams.get("code")!,
      codeVerifier: pkce.verifier,
    });
    expect(account).toMatchObject({ externalId: "109", handle: "alice", displayName: "Alice" });
    expect(account.limits).toEqual({
      maxCharacters: 1000,
      maxImages: 6,
      maxVideos: 1,
      maxImageBytes: 8_000_000,
    });
    expect(typeof account.credentials.accessToken).toBe("string");
  });

  test("a wrong PKCE verifier is refused as auth_revoked (invalid_grant)", async () => {
    fake = await startMastodonFake();
    const redirectUri = "https://herald.example/cb";
    const app = await adapter.registerApp({
      origin: fake.origin,
      redirectUri,
      clientName: "Herald",
      website: "https://herald.example",
    });
    const consent = await fetch(
      adapter.authorizationUrl({
        origin: fake.origin,
        clientId: app.clientId,
        redirectUri,
        state: "s",
        codeChallenge: createPkcePair().challenge,
      }),
      { redirect: "manual" },
    );
    const code = new URL(consent.headers.get("location")!).searchParams.get("code")!;
    const error = await expectProviderError(
      adapter.completeAuthorization({
        origin: fake.origin,
        ...app,
        redirectUri,
        code,
        codeVerifier: createPkcePair().verifier,
      }),
      "auth_revoked",
    );
    expect(error.statusCode).toBe(400);
    expect(error.errorCode).toBe("invalid_grant");
  });

  test("an instance without /api/v2/instance gets the default limits (500 characters, 4 media)", async () => {
    fake = await startMastodonFake({ instanceV2: false });
    const redirectUri = "https://herald.example/cb";
    const app = await adapter.registerApp({
      origin: fake.origin,
      redirectUri,
      clientName: "Herald",
      website: "https://herald.example",
    });
    const pkce = createPkcePair();
    const consent = await fetch(
      adapter.authorizationUrl({
        origin: fake.origin,
        clientId: app.clientId,
        redirectUri,
        state: "s",
        codeChallenge: pkce.challenge,
      }),
      { redirect: "manual" },
    );
    const code = new URL(consent.headers.get("location")!).searchParams.get("code")!;
    const [account] = await adapter.completeAuthorization({
      origin: fake.origin,
      ...app,
      redirectUri,
      code,
      codeVerifier: pkce.verifier,
    });
    expect(account.limits).toEqual(MASTODON_DEFAULT_LIMITS);
  });
});

describe("publishing", () => {
  test("a three-item thread chains in_reply_to_id and sends each item's Idempotency-Key", async () => {
    const { destination } = await start();
    const published: PublishedItem[] = [];
    for (const [i, text] of ["first", "second", "third"].entries()) {
      const previous = published.at(-1) ?? null;
      published.push(
        await adapter.publishItem(
          item(destination, {
            text,
            itemIndex: i,
            root: published[0] ?? null,
            parent: previous,
            idempotencyKey: `post_1:${i}`,
          }),
        ),
      );
    }
    expect(fake.statuses.map((s) => [s.text, s.inReplyToId, s.visibility, s.idempotencyKey])).toEqual([
      ["first", null, "public", "post_1:0"],
      ["second", published[0]!.providerObjectId, "public", "post_1:1"],
      ["third", published[1]!.providerObjectId, "public", "post_1:2"],
    ]);
    expect(published[2]!.url).toBe(`${fake.origin}/@alice/${published[2]!.providerObjectId}`);
    expect(published[0]!.provider).toMatchObject({ operation: "POST /api/v1/statuses", statusCode: 200 });
  });

  test("media is uploaded with its alt text, polled while processing (202 → 206 → 200), then attached", async () => {
    const { destination } = await start({ mediaProcessingPolls: 2 });
    await adapter.publishItem(
      item(destination, {
        media: [mediaItem({ altText: "a red square" }), mediaItem({ assetId: "ast_2", altText: null })],
      }),
    );
    expect(fake.media.map((m) => [m.description, m.contentType, m.attached])).toEqual([
      ["a red square", "image/png", true],
      [null, "image/png", true],
    ]);
    expect(
      fake.requests.filter((r) => r.method === "GET" && r.path.startsWith("/api/v1/media/")).length,
    ).toBe(6); // per file: 206, 206, 200
    expect(fake.statuses[0]!.mediaIds).toEqual(fake.media.map((m) => m.id));
  });

  test("media still processing after the last poll is transient", async () => {
    const { destination } = await start({ mediaProcessingPolls: 50 });
    const error = await expectProviderError(
      adapter.publishItem(item(destination, { media: [mediaItem({})] })),
      "transient",
    );
    expect(error.message).toContain("still processing");
    expect(fake.statuses.length).toBe(0);
  });

  test("the language option is sent", async () => {
    const { destination } = await start();
    await adapter.publishItem(item(destination, { options: { languages: ["de"] } }));
    await adapter.publishItem(item(destination, { options: { language: "fr" }, idempotencyKey: "k2" }));
    expect(fake.statuses.map((s) => s.language)).toEqual(["de", "fr"]);
  });
});

describe("failures map to kinds", () => {
  test("5xx is transient and nothing is posted", async () => {
    const { destination } = await start();
    for (const status of [500, 502, 503, 504]) {
      fake.failNext(1, { status, path: "/api/v1/statuses" });
      const error = await expectProviderError(adapter.publishItem(item(destination)), "transient");
      expect(error.statusCode).toBe(status);
    }
    expect(fake.statuses.length).toBe(0);
  });

  test("429 is transient with retryAt from the ISO-8601 X-RateLimit-Reset (microseconds)", async () => {
    const { destination } = await start();
    fake.failNext(1, { status: 429, headers: { "x-ratelimit-reset": "2030-05-01T12:00:05.123456Z" } });
    const error = await expectProviderError(adapter.publishItem(item(destination)), "transient");
    expect(error.statusCode).toBe(429);
    expect(error.retryAt).toBe(Date.parse("2030-05-01T12:00:05.123Z"));
  });

  test("the fake's default 429 carries a parseable reset", async () => {
    const { destination } = await start();
    fake.failNext(1, { status: 429 });
    const error = await expectProviderError(adapter.publishItem(item(destination)), "transient");
    expect(error.retryAt).toBeGreaterThan(Date.now());
    expect(mastodonRetryAt(new Headers({ "x-ratelimit-reset": "nonsense" }))).toBeNull();
  });

  test("a revoked token is auth_revoked (Mastodon tokens never expire), and refresh says so too", async () => {
    const { destination } = await start();
    fake.revokeTokens();
    const error = await expectProviderError(adapter.publishItem(item(destination)), "auth_revoked");
    expect(error.message).toBe("The access token is invalid");
    await expectProviderError(adapter.refreshCredentials({ destination }), "auth_revoked");
  });

  test("422 is rejected with the network's own message", async () => {
    const { destination } = await start();
    const error = await expectProviderError(
      adapter.publishItem(item(destination, { text: "   " })),
      "rejected",
    );
    expect(error.statusCode).toBe(422);
    expect(error.message).toBe("Validation failed: Text can't be blank");
  });

  test("an unanswered create is transient, and the retry with the same key creates no duplicate", async () => {
    const { destination } = await start();
    const slow = createMastodonAdapter({ fetch, clock: systemClock, timeoutMs: 150 });
    fake.hangAfterReceive = true;
    await expectProviderError(
      slow.publishItem(item(destination, { idempotencyKey: "post_9:0" })),
      "transient",
    );
    expect(fake.statuses.length).toBe(1);
    fake.hangAfterReceive = false;
    const retried = await slow.publishItem(item(destination, { idempotencyKey: "post_9:0" }));
    expect(retried.providerObjectId).toBe(fake.statuses[0]!.id);
    expect(fake.statuses.length).toBe(1);
  });

  test("a slow instance times out as transient (the create is idempotent)", async () => {
    const { destination } = await start();
    fake.delayMs = 300;
    const slow = createMastodonAdapter({ fetch, clock: systemClock, timeoutMs: 100 });
    const error = await expectProviderError(slow.publishItem(item(destination)), "transient");
    expect(error.errorCode).toBe("timeout");
  });

  test("a refused connection is transient", async () => {
    const { destination } = await start();
    const error = await expectProviderError(
      adapter.publishItem(item({ ...destination, origin: await closedOrigin() })),
      "transient",
    );
    expect(error.message).toContain("not sent");
  });
});

describe("checkItem", () => {
  const limits = MASTODON_DEFAULT_LIMITS;
  const check = (text: string, media = [] as ReturnType<typeof mediaItem>[]) =>
    adapter.checkItem({ text, media, options: {}, limits, publicMediaUrls: false, externalId: "1" });

  test("500 characters pass, 501 fail; graphemes count once", () => {
    expect(check("a".repeat(500))).toEqual([]);
    expect(check("a".repeat(501)).map((p) => p.pointer)).toEqual([""]);
    expect(check("👍🏽".repeat(500))).toEqual([]);
  });

  test("every URL counts as 23 characters, a remote mention as its local part", () => {
    const url = `https://example.com/${"p".repeat(80)}`;
    expect(check(`${"a".repeat(476)} ${url}`)).toEqual([]); // 476 + 1 + 23 = 500
    expect(check(`${"a".repeat(477)} ${url}`).length).toBe(1);
    expect(check(`${"a".repeat(494)} @bob@mastodon.example`)).toEqual([]); // "@bob" = 4, 494 + 1 + 4 = 499
  });

  test("4 media pass, 5 fail at /media/4", () => {
    const four = [1, 2, 3, 4].map((i) => mediaItem({ assetId: `a${i}` }));
    expect(check("x", four)).toEqual([]);
    expect(check("x", [...four, mediaItem({ assetId: "a5" })]).map((p) => p.pointer)).toEqual(["/media/4"]);
  });

  test("one video alone passes; video with images or two videos fail", () => {
    const video = mediaItem({ contentType: "video/mp4", assetId: "v" });
    expect(check("x", [video])).toEqual([]);
    expect(check("x", [video, mediaItem({})]).length).toBe(1);
    expect(check("x", [video, { ...video, assetId: "v2" }]).length).toBe(1);
  });

  test("an image over the instance's size limit fails", () => {
    expect(check("x", [mediaItem({ byteSize: limits.maxImageBytes })])).toEqual([]);
    expect(check("x", [mediaItem({ byteSize: limits.maxImageBytes + 1 })]).map((p) => p.pointer)).toEqual([
      "/media/0",
    ]);
  });
});

adapterScenarios("mastodon", async () => {
  const fake = await startMastodonFake({ mediaProcessingPolls: 0 });
  const destination: DestinationRef = {
    origin: fake.origin,
    externalId: fake.account.id,
    handle: "alice",
    credentials: { accessToken: fake.issueToken() },
    limits: MASTODON_DEFAULT_LIMITS,
  };
  return {
    adapter,
    destination,
    fake,
    createPath: "/api/v1/statuses",
    stored: () => fake.statuses.map((s) => ({ id: s.id, text: s.text, replyTo: s.inReplyToId })),
    stop: () => fake.stop(),
  };
});

registeredAs("mastodon", {
  connection: "per-instance",
  idempotentCreate: true,
  pendingChecksRepeatable: false,
});
