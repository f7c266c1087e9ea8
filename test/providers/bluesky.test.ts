import { afterEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { BLUESKY_LIMITS, createBlueskyAdapter } from "../../src/providers/bluesky/adapter.ts";
import type { DestinationRef, PublishedItem, PublishItemInput } from "../../src/providers/types.ts";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { adapterScenarios, registeredAs } from "./scenarios.ts";
import { closedOrigin, expectProviderError, mediaItem, publishInput } from "./support.ts";

const clock = new ManualClock(Date.parse("2026-03-01T10:00:00.000Z"));
const adapter = createBlueskyAdapter({ fetch, clock, timeoutMs: 1000 });
let fake: BlueskyFake;
afterEach(async () => fake?.stop());

async function connect(): Promise<DestinationRef> {
  fake = await startBlueskyFake();
  const account = await adapter.connectWithPassword({
    origin: fake.origin,
    identifier: "alice.test",
    password: "alice-app-pass",
  });
  return {
    origin: fake.origin,
    externalId: account.externalId,
    handle: account.handle,
    credentials: account.credentials,
    limits: account.limits,
  };
}

const item = publishInput;

const count = (nsid: string) => fake.requests.filter((r) => r.path === `/xrpc/${nsid}`).length;

describe("connecting with an app password", () => {
  test("stores the session pair, DID, handle and the app password; limits are Bluesky's", async () => {
    fake = await startBlueskyFake();
    const account = await adapter.connectWithPassword({
      origin: fake.origin,
      identifier: "alice.test",
      password: "alice-app-pass",
    });
    expect(account).toMatchObject({ externalId: fake.accounts[0]!.did, handle: "alice.test" });
    expect(Object.keys(account.credentials).sort()).toEqual([
      "accessJwt",
      "appPassword",
      "did",
      "handle",
      "refreshJwt",
    ]);
    expect(account.credentials.appPassword).toBe("alice-app-pass");
    expect(account.limits).toEqual({
      maxCharacters: 300,
      maxImages: 4,
      maxVideos: 1,
      maxImageBytes: 1_000_000,
    });
  });

  test("a wrong password is auth_revoked", async () => {
    fake = await startBlueskyFake();
    const error = await expectProviderError(
      adapter.connectWithPassword({ origin: fake.origin, identifier: "alice.test", password: "nope" }),
      "auth_revoked",
    );
    expect(error.statusCode).toBe(401);
  });
});

describe("publishing", () => {
  test("a three-item thread: reply root and parent chain by uri and cid, no login per post", async () => {
    const destination = await connect();
    const published: PublishedItem[] = [];
    for (const [i, text] of ["one", "two", "three"].entries()) {
      published.push(
        await adapter.publishItem(
          item(destination, {
            text,
            itemIndex: i,
            root: published[0] ?? null,
            parent: published.at(-1) ?? null,
          }),
        ),
      );
    }
    const [r0, r1, r2] = fake.records;
    expect(r0!.record.reply).toBeUndefined();
    expect(r1!.record.reply).toEqual({
      root: { uri: r0!.uri, cid: r0!.cid },
      parent: { uri: r0!.uri, cid: r0!.cid },
    });
    expect(r2!.record.reply).toEqual({
      root: { uri: r0!.uri, cid: r0!.cid },
      parent: { uri: r1!.uri, cid: r1!.cid },
    });
    expect(published.map((p) => p.providerObjectId)).toEqual(fake.records.map((r) => r.uri));
    expect(published[1]!.extra).toEqual({ uri: r1!.uri, cid: r1!.cid });
    expect(published[2]!.url).toBe(`https://bsky.app/profile/alice.test/post/${r2!.rkey}`);
    expect(r0!.record).toMatchObject({
      $type: "app.bsky.feed.post",
      text: "one",
      createdAt: "2026-03-01T10:00:00.000Z",
    });
    expect(count("com.atproto.server.createSession")).toBe(1); // the connection only
  });

  test("images are uploaded as blobs with their mime type; the embed carries alt text and aspect ratio", async () => {
    const destination = await connect();
    await adapter.publishItem(
      item(destination, {
        media: [
          mediaItem({ altText: "a red square", width: 640, height: 480 }),
          mediaItem({ assetId: "ast_2", altText: null, width: null, height: null }),
        ],
        options: { alt_text_by_asset_id: { ast_2: "from the options" } },
      }),
    );
    const uploads = fake.requests.filter((r) => r.path.endsWith("uploadBlob"));
    expect(uploads.map((r) => r.headers["content-type"])).toEqual(["image/png", "image/png"]);
    const embed = fake.records[0]!.record.embed;
    expect(embed.$type).toBe("app.bsky.embed.images");
    expect(
      embed.images.map((i: any) => [
        i.alt,
        i.aspectRatio,
        i.image.mimeType,
        i.image.ref.$link.startsWith("bafkrei"),
      ]),
    ).toEqual([
      ["a red square", { width: 640, height: 480 }, "image/png", true],
      ["from the options", undefined, "image/png", true],
    ]);
  });

  test("one MP4 video becomes an app.bsky.embed.video", async () => {
    const destination = await connect();
    await adapter.publishItem(
      item(destination, {
        media: [
          mediaItem({
            contentType: "video/mp4",
            bytes: new Uint8Array([0, 0, 0, 24, 102, 116, 121, 112]),
            width: 1920,
            height: 1080,
            altText: "clip",
          }),
        ],
      }),
    );
    expect(fake.records[0]!.record.embed).toMatchObject({
      $type: "app.bsky.embed.video",
      alt: "clip",
      aspectRatio: { width: 1920, height: 1080 },
      video: { mimeType: "video/mp4" },
    });
  });

  test("facets carry UTF-8 byte offsets for a mention, a link and a tag after non-ASCII text", async () => {
    const destination = await connect();
    const text = "🎉 héllo @bob.test https://x.example/a. #tag and @nobody.test";
    await adapter.publishItem(item(destination, { text }));
    const facets = fake.records[0]!.record.facets;
    const bytes = Buffer.from(text, "utf8");
    expect(
      facets.map((f: any) => bytes.subarray(f.index.byteStart, f.index.byteEnd).toString("utf8")),
    ).toEqual(["@bob.test", "https://x.example/a", "#tag"]);
    expect(facets.map((f: any) => [f.index.byteStart, f.index.byteEnd])).toEqual([
      [12, 21],
      [22, 41],
      [43, 47],
    ]);
    expect(facets.map((f: any) => f.features[0])).toEqual([
      { $type: "app.bsky.richtext.facet#mention", did: fake.accounts[1]!.did },
      { $type: "app.bsky.richtext.facet#link", uri: "https://x.example/a" },
      { $type: "app.bsky.richtext.facet#tag", tag: "tag" },
    ]);
  });

  test("languages and content labels become langs and self-labels", async () => {
    const destination = await connect();
    await adapter.publishItem(
      item(destination, { options: { languages: ["en", "de"], content_labels: ["porn", "graphic-media"] } }),
    );
    expect(fake.records[0]!.record.langs).toEqual(["en", "de"]);
    expect(fake.records[0]!.record.labels).toEqual({
      $type: "com.atproto.label.defs#selfLabels",
      values: [{ val: "porn" }, { val: "graphic-media" }],
    });
  });
});

describe("failures map to kinds", () => {
  test("503 and 502 are transient; a 500 after createRecord was sent is outcome_unknown", async () => {
    const destination = await connect();
    for (const status of [502, 503]) {
      fake.failNext(1, { status, path: "createRecord" });
      await expectProviderError(adapter.publishItem(item(destination)), "transient");
    }
    fake.failNext(1, { status: 500, path: "createRecord" });
    await expectProviderError(adapter.publishItem(item(destination)), "outcome_unknown");
    fake.failNext(1, { status: 500, path: "uploadBlob" });
    await expectProviderError(
      adapter.publishItem(item(destination, { media: [mediaItem({})] })),
      "transient",
    ); // uploads are safe to repeat
  });

  test("429 is transient with retryAt from RateLimit-Reset (unix seconds)", async () => {
    const destination = await connect();
    fake.failNext(1, { status: 429, headers: { "ratelimit-reset": "1900000000" } });
    const error = await expectProviderError(adapter.publishItem(item(destination)), "transient");
    expect(error.retryAt).toBe(1_900_000_000_000);
    expect(error.errorCode).toBe("RateLimitExceeded");
  });

  test("an expired access token is auth_expired; refreshCredentials rotates the pair and publishing works again", async () => {
    const destination = await connect();
    fake.expireAccessTokens();
    const error = await expectProviderError(adapter.publishItem(item(destination)), "auth_expired");
    expect([error.statusCode, error.errorCode]).toEqual([400, "ExpiredToken"]);
    const credentials = await adapter.refreshCredentials({ destination });
    expect(credentials.refreshJwt).not.toBe(destination.credentials.refreshJwt);
    expect(count("com.atproto.server.refreshSession")).toBe(1);
    expect(count("com.atproto.server.createSession")).toBe(1);
    await adapter.publishItem(item({ ...destination, credentials }));
    expect(fake.records.length).toBe(1);
  });

  test("the access token expires after the PDS's TTL (fake clock), and refresh renews it", async () => {
    const pdsClock = new ManualClock(Date.parse("2026-03-01T10:00:00.000Z"));
    fake = await startBlueskyFake({ now: () => pdsClock.now(), accessTtlMs: 60_000 });
    const account = await adapter.connectWithPassword({
      origin: fake.origin,
      identifier: "alice.test",
      password: "alice-app-pass",
    });
    const destination = {
      origin: fake.origin,
      externalId: account.externalId,
      handle: account.handle,
      credentials: account.credentials,
      limits: account.limits,
    };
    await adapter.publishItem(item(destination));
    pdsClock.advance(60_000);
    await expectProviderError(adapter.publishItem(item(destination)), "auth_expired");
    // Another post (its own record key): the first one's key is taken.
    await adapter.publishItem(
      item(
        { ...destination, credentials: await adapter.refreshCredentials({ destination }) },
        { idempotencyKey: "post_2:0" },
      ),
    );
    expect(fake.records.length).toBe(2);
  });

  test("a 401 is auth_expired too", async () => {
    const destination = await connect();
    fake.failNext(1, { status: 401 });
    await expectProviderError(adapter.publishItem(item(destination)), "auth_expired");
  });

  test("a dead refresh token is recovered by one login with the stored app password", async () => {
    const destination = await connect();
    fake.expireAccessTokens();
    fake.expireRefreshTokens();
    const credentials = await adapter.refreshCredentials({ destination });
    expect(count("com.atproto.server.createSession")).toBe(2);
    await adapter.publishItem(item({ ...destination, credentials }));
    expect(fake.records.length).toBe(1);
  });

  test("revoked sessions and a revoked app password are auth_revoked", async () => {
    const destination = await connect();
    fake.revokeTokens();
    fake.revokeAppPassword("alice.test");
    await expectProviderError(adapter.publishItem(item(destination)), "auth_expired");
    const error = await expectProviderError(adapter.refreshCredentials({ destination }), "auth_revoked");
    expect(error.statusCode).toBe(401);
  });

  test("a create that is received but never answered is outcome_unknown (and it did post)", async () => {
    const destination = await connect();
    fake.hangAfterReceive = true;
    const hasty = createBlueskyAdapter({ fetch, clock, timeoutMs: 150 });
    const error = await expectProviderError(hasty.publishItem(item(destination)), "outcome_unknown");
    expect(error.errorCode).toBe("timeout");
    expect(fake.records.length).toBe(1);
  });

  test("a slow PDS is outcome_unknown for createRecord", async () => {
    const destination = await connect();
    fake.delayMs = 300;
    await expectProviderError(
      createBlueskyAdapter({ fetch, clock, timeoutMs: 100 }).publishItem(item(destination)),
      "outcome_unknown",
    );
  });

  test("an invalid record is rejected with the PDS's message", async () => {
    const destination = await connect();
    const error = await expectProviderError(
      adapter.publishItem(item(destination, { text: "x".repeat(301) })),
      "rejected",
    );
    expect(error.errorCode).toBe("InvalidRequest");
    expect(error.message).toBe(
      "Invalid app.bsky.feed.post record: grapheme too big (maximum 300, got 301) at $.record.text",
    );
  });

  test("a refused connection is transient (nothing was sent)", async () => {
    const destination = await connect();
    await expectProviderError(
      adapter.publishItem(item({ ...destination, origin: await closedOrigin() })),
      "transient",
    );
  });
});

describe("checkItem", () => {
  const check = (
    text: string,
    media = [] as ReturnType<typeof mediaItem>[],
    options: Record<string, unknown> = {},
  ) =>
    adapter.checkItem({
      text,
      media,
      options,
      limits: BLUESKY_LIMITS,
      publicMediaUrls: false,
      externalId: "did:plc:alice",
    });
  const pointers = (problems: { pointer: string }[]) => problems.map((p) => p.pointer);

  test("300 graphemes pass, 301 fail (graphemes, not code units)", () => {
    expect(check("a".repeat(300))).toEqual([]);
    expect(pointers(check("a".repeat(301)))).toEqual([""]);
    expect(check("👍🏽".repeat(300))).toEqual([]);
    expect(pointers(check("👍🏽".repeat(301)))).toEqual([""]);
  });

  test("3000 UTF-8 bytes pass, 3001 fail", () => {
    const family = "👨‍👩‍👧‍👦"; // one grapheme, 25 bytes
    expect(check(family.repeat(120))).toEqual([]);
    expect(check(`${family.repeat(120)}a`)[0]!.detail).toContain("3001 bytes");
  });

  test("4 images pass, 5 fail at /media/4", () => {
    const four = [1, 2, 3, 4].map((i) => mediaItem({ assetId: `a${i}` }));
    expect(check("x", four)).toEqual([]);
    expect(pointers(check("x", [...four, mediaItem({ assetId: "a5" })]))).toEqual(["/media/4"]);
  });

  test("every image needs alt text, from the item or the options", () => {
    const media = [
      mediaItem({ altText: null }),
      mediaItem({ assetId: "b", altText: "  " }),
      mediaItem({ assetId: "c", altText: null }),
    ];
    expect(pointers(check("x", media, { alt_text_by_asset_id: { c: "given here" } }))).toEqual([
      "/media/0",
      "/media/1",
    ]);
  });

  test("1,000,000 bytes pass, 1,000,001 fail", () => {
    expect(check("x", [mediaItem({ byteSize: 1_000_000 })])).toEqual([]);
    expect(pointers(check("x", [mediaItem({ byteSize: 1_000_001 })]))).toEqual(["/media/0"]);
  });

  test("exactly one MP4 video, never with images", () => {
    const video = mediaItem({ contentType: "video/mp4", assetId: "v", altText: null });
    expect(check("x", [video])).toEqual([]);
    expect(pointers(check("x", [{ ...video, contentType: "video/quicktime" }]))).toEqual(["/media/0"]);
    expect(pointers(check("x", [video, mediaItem({})]))).toEqual(["/media"]);
    expect(pointers(check("x", [video, { ...video, assetId: "v2" }]))).toEqual(["/media"]);
  });
});

adapterScenarios("bluesky", async () => {
  const scenarioFake = await startBlueskyFake();
  const account = await adapter.connectWithPassword({
    origin: scenarioFake.origin,
    identifier: "alice.test",
    password: "alice-app-pass",
  });
  const destination: DestinationRef = {
    origin: scenarioFake.origin,
    externalId: account.externalId,
    handle: account.handle,
    credentials: account.credentials,
    limits: account.limits,
  };
  return {
    adapter,
    destination,
    fake: scenarioFake,
    createPath: "createRecord",
    stored: () =>
      scenarioFake.records.map((r) => ({
        id: r.uri,
        text: String(r.record.text),
        replyTo: r.record.reply?.parent?.uri ?? null,
      })),
    stop: () => scenarioFake.stop(),
  };
});

registeredAs("bluesky", {
  connection: "password",
  idempotentCreate: false,
  pendingChecksRepeatable: false,
});
