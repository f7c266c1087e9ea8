import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { ConfigError } from "../../src/config.ts";
import { escapeLittleText, LINKEDIN_DEFAULT_VERSION } from "../../src/providers/linkedin/api.ts";
import { createProviderRegistry, NETWORKS } from "../../src/providers/registry.ts";
import {
  createLinkedInAdapter,
  LINKEDIN_DEFAULT_SCOPES,
  LINKEDIN_MAX_PROCESSING_MS,
  LINKEDIN_RECHECK_MS,
} from "../../src/providers/linkedin/adapter.ts";
import { LINKEDIN_LIMITS } from "../../src/providers/linkedin/rules.ts";
import {
  isPending,
  type AdapterDeps,
  type DestinationRef,
  type MetricsTarget,
  type PendingItem,
  type PublishedItem,
} from "../../src/providers/types.ts";
import { startLinkedInFake, type LinkedInFake, type LinkedInFakeOptions } from "../fakes/linkedin.ts";
import { adapterScenarios, registeredAs } from "./scenarios.ts";
import { expectProviderError, mediaItem, publishInput, fakeApp } from "./support.ts";

const DAY = 24 * 60 * 60 * 1000;
const clock = new ManualClock();
beforeEach(() => clock.set("2026-03-01T12:00:00.000Z"));
const REDIRECT = "https://herald.example/oauth/callback/linkedin";
let fake: LinkedInFake;
afterEach(async () => fake?.stop());

/** An adapter pointed at the fake (API, sign-in and token endpoints all on its origin). */
function adapterFor(f: LinkedInFake, over: { scopes?: string; deps?: Partial<AdapterDeps> } = {}) {
  const origin = f.origin;
  return createLinkedInAdapter({
    fetch,
    clock,
    timeoutMs: 1000,
    pollIntervalMs: 5,
    maxPolls: 3,
    apps: {
      linkedin: fakeApp({ ...f, origin: origin }, { scopes: over.scopes ?? null }),
    },
    ...over.deps,
  });
}

async function start(options: LinkedInFakeOptions = {}) {
  fake = await startLinkedInFake(options);
  const token = fake.issueToken();
  const credentials = { accessToken: token, expiresAt: clock.now() + 60 * DAY };
  const member: DestinationRef = {
    origin: fake.origin,
    externalId: `urn:li:person:${fake.member.sub}`,
    handle: fake.member.sub,
    credentials,
    limits: LINKEDIN_LIMITS,
  };
  const page: DestinationRef = { ...member, externalId: "urn:li:organization:2414183", handle: "devtestco" };
  return { fake, adapter: adapterFor(fake), member, page };
}

/** Follows the authorization URL on the fake like a browser: the redirect back to Herald. */
async function consent(url: string): Promise<URL> {
  const response = await fetch(url, { redirect: "manual" });
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!);
}

async function connect(adapter: ReturnType<typeof adapterFor>, f: LinkedInFake) {
  const back = await consent(
    adapter.authorizationUrl({
      origin: f.origin,
      clientId: f.clientId,
      redirectUri: REDIRECT,
      state: "st_1",
      codeChallenge: "unused",
    }),
  );
  return adapter.completeAuthorization({
    origin: f.origin,
    clientId: f.clientId,
    clientSecret: f.clientSecret,
    redirectUri: REDIRECT,
    code: back.searchParams.get("code")!,
    codeVerifier: "unused",
  });
}

const rest = (f: LinkedInFake) => f.requests.filter((r) => r.path.startsWith("/rest/"));

describe("connecting through OAuth", () => {
  test(
    "asks for the member and page scopes, exchanges the code, and connects the member and the two " +
      "pages they administer",
    async () => {
      const { adapter } = await start();
      const url = new URL(
        adapter.authorizationUrl({
          origin: fake.origin,
          clientId: fake.clientId,
          redirectUri: REDIRECT,
          state: "st_1",
          codeChallenge: "ch",
        }),
      );
      expect(url.origin + url.pathname).toBe(`${fake.origin}/oauth/v2/authorization`);
      expect(Object.fromEntries(url.searchParams)).toEqual({
        response_type: "code",
        client_id: fake.clientId,
        redirect_uri: REDIRECT,
        state: "st_1",
        scope: LINKEDIN_DEFAULT_SCOPES,
      });
      const accounts = await connect(adapter, fake);
      expect(fake.tokenRequests).toEqual([
        {
          grant_type: "authorization_code",
          code: expect.any(String),
          client_id: fake.clientId,
          client_secret: fake.clientSecret,
          redirect_uri: REDIRECT,
        },
      ]);
      expect(accounts.map((a) => [a.externalId, a.handle, a.displayName])).toEqual([
        ["urn:li:person:782bbtaQ", "782bbtaQ", "Alice Example"],
        ["urn:li:organization:2414183", "devtestco", "Devtestco"],
        ["urn:li:organization:5590506", "herald-labs", "Herald Labs"],
      ]);
      expect(accounts[0]!.profileImageUrl).toBe(fake.member.picture);
      // One grant: every destination holds the same 60-day token and no refresh token (not an approved app).
      for (const account of accounts) {
        expect(account.credentials).toEqual({
          accessToken: accounts[0]!.credentials.accessToken,
          expiresAt: clock.now() + 60 * DAY,
          renewable: false,
        });
        expect(account.limits).toEqual(LINKEDIN_LIMITS);
      }
      const acl = rest(fake).find((r) => r.path === "/rest/organizationAcls")!;
      expect(acl.headers["linkedin-version"]).toBe(LINKEDIN_DEFAULT_VERSION);
    },
  );

  test(
    "an app without the pages product is refused the page scopes; HERALD_LINKEDIN_SCOPES connects " +
      "only the member",
    async () => {
      fake = await startLinkedInFake({ pagesProduct: false });
      const refused = await consent(
        adapterFor(fake).authorizationUrl({
          origin: fake.origin,
          clientId: fake.clientId,
          redirectUri: REDIRECT,
          state: "s",
          codeChallenge: "c",
        }),
      );
      expect(refused.searchParams.get("error")).toBe("unauthorized_scope_error");
      const memberOnly = adapterFor(fake, { scopes: "openid profile w_member_social" });
      const accounts = await connect(memberOnly, fake);
      expect(accounts.map((a) => a.externalId)).toEqual(["urn:li:person:782bbtaQ"]);
      expect(rest(fake)).toEqual([]); // no organization lookups without the page scopes
    },
  );

  test("a code LinkedIn does not know is auth_revoked", async () => {
    const { adapter } = await start();
    const error = await expectProviderError(
      adapter.completeAuthorization({
        origin: fake.origin,
        clientId: fake.clientId,
        clientSecret: fake.clientSecret,
        redirectUri: REDIRECT,
        code: "forged",
        codeVerifier: "",
      }),
      "auth_revoked",
    );
    expect([error.statusCode, error.errorCode]).toEqual([400, "invalid_request"]);
  });
});

describe("refreshing credentials", () => {
  test("an approved app's refresh token gives a new access token; the refresh token and its expiry stay", async () => {
    fake = await startLinkedInFake({ refreshTokens: true });
    const adapter = adapterFor(fake);
    const [account] = await connect(adapter, fake);
    const stored = account!.credentials;
    expect(stored.refreshToken).toEqual(expect.any(String));
    expect(stored.refreshTokenExpiresAt as number).toBeGreaterThan(clock.now() + 364 * DAY);
    clock.advance(10 * DAY);
    const destination: DestinationRef = {
      origin: fake.origin,
      externalId: account!.externalId,
      handle: account!.handle,
      credentials: stored,
      limits: LINKEDIN_LIMITS,
    };
    const renewed = await adapter.refreshCredentials({ destination });
    expect(fake.tokenRequests.at(-1)).toEqual({
      grant_type: "refresh_token",
      refresh_token: stored.refreshToken as string,
      client_id: fake.clientId,
      client_secret: fake.clientSecret,
    });
    expect(renewed.accessToken).not.toBe(stored.accessToken);
    expect(renewed.expiresAt).toBe(clock.now() + 60 * DAY);
    expect(renewed.refreshToken).toBe(stored.refreshToken);
    // The new token works.
    fake.expireTokens();
    const stale = await expectProviderError(adapter.publishItem(publishInput(destination)), "auth_expired");
    expect(stale.subcode).toBe("65602");
    const fresh = await adapterFor(fake).refreshCredentials({ destination });
    await adapter.publishItem(publishInput({ ...destination, credentials: fresh }));
    expect(fake.posts.length).toBe(1);
  });

  test("without a refresh token, with an expired one or a revoked one, the account must be connected again", async () => {
    const { adapter, member } = await start({ refreshTokens: true });
    await expectProviderError(adapter.refreshCredentials({ destination: member }), "auth_revoked");
    const expired = { ...member.credentials, refreshToken: "AQXold", refreshTokenExpiresAt: clock.now() - 1 };
    await expectProviderError(
      adapter.refreshCredentials({ destination: { ...member, credentials: expired } }),
      "auth_revoked",
    );
    expect(fake.tokenRequests).toEqual([]); // nothing was sent for either
    const [account] = await connect(adapter, fake);
    fake.revokeTokens();
    const error = await expectProviderError(
      adapter.refreshCredentials({ destination: { ...member, credentials: account!.credentials } }),
      "auth_revoked",
    );
    expect(error.statusCode).toBe(400);
  });
});

describe("publishing", () => {
  test("a member's text post: versioned headers, PUBLIC, MAIN_FEED, 201 with the URN in x-restli-id", async () => {
    const { adapter, member } = await start();
    const published = (await adapter.publishItem(
      publishInput(member, { text: "Hello LinkedIn" }),
    )) as PublishedItem;
    expect(fake.posts).toEqual([
      {
        urn: published.providerObjectId,
        author: "urn:li:person:782bbtaQ",
        commentary: "Hello LinkedIn",
        visibility: "PUBLIC",
        content: null,
        lifecycleState: "PUBLISHED",
        isReshareDisabledByAuthor: false,
        distribution: {
          feedDistribution: "MAIN_FEED",
          targetEntities: [],
          thirdPartyDistributionChannels: [],
        },
        version: LINKEDIN_DEFAULT_VERSION,
      },
    ]);
    expect(published.providerObjectId).toMatch(/^urn:li:share:\d+$/);
    expect(published.url).toBe(`https://www.linkedin.com/feed/update/${published.providerObjectId}`);
    expect(published.provider).toEqual({ operation: "POST /rest/posts", requestId: null, statusCode: 201 });
    const create = rest(fake).find((r) => r.path === "/rest/posts")!;
    expect(create.headers["x-restli-protocol-version"]).toBe("2.0.0");
  });

  test("commentary is escaped as little text: what LinkedIn stores is exactly the escaped text", async () => {
    const { adapter, member } = await start();
    const text =
      "Launch (beta) for @team: [docs] {v2} <soon> a*b_c~d|e\\f #herald & issue #12, C# and a lone #";
    await adapter.publishItem(publishInput(member, { text }));
    const expected =
      "Launch \\(beta\\) for \\@team: \\[docs\\] \\{v2\\} \\<soon\\> a\\*b\\_c\\~d\\|e\\\\f #herald & " +
      "issue #12, C\\# and a lone \\#";
    expect(escapeLittleText(text)).toBe(expected);
    expect(fake.posts[0]!.commentary).toBe(expected);
  });

  test(
    "options: connections visibility for a member, resharing disabled; a page refuses connections " +
      "before sending",
    async () => {
      const { adapter, member, page } = await start();
      await adapter.publishItem(
        publishInput(member, {
          text: "to my network",
          options: { visibility: "connections", allow_resharing: false },
        }),
      );
      await adapter.publishItem(
        publishInput(page, { text: "from the page", options: { visibility: "public" } }),
      );
      expect(fake.posts.map((p) => [p.author, p.visibility, p.isReshareDisabledByAuthor])).toEqual([
        ["urn:li:person:782bbtaQ", "CONNECTIONS", true],
        ["urn:li:organization:2414183", "PUBLIC", false],
      ]);
      const sent = fake.requests.length;
      const error = await expectProviderError(
        adapter.publishItem(
          publishInput(page, { text: "x", options: { visibility: "connections" }, media: [mediaItem({})] }),
        ),
        "rejected",
      );
      expect(error.message).toContain("page has no connections");
      expect(fake.requests.length).toBe(sent);
    },
  );

  test(
    "one image: initialized for the author, PUT, polled until AVAILABLE, attached as content.media " +
      "with its alt text",
    async () => {
      const { adapter, page } = await start({ imageProcessingPolls: 1 });
      const image = mediaItem({ altText: "a red square" });
      await adapter.publishItem(publishInput(page, { media: [image] }));
      const [uploaded] = fake.media;
      expect(uploaded).toMatchObject({ kind: "image", owner: page.externalId, status: "AVAILABLE" });
      expect(uploaded!.size).toBe(image.byteSize);
      expect(fake.posts[0]!.content).toEqual({ media: { id: uploaded!.urn, altText: "a red square" } });
      expect(
        fake.requests.filter((r) => r.method === "GET" && r.path.startsWith("/rest/images/")).length,
      ).toBe(2);
    },
  );

  test("several images become content.multiImage, in order", async () => {
    const { adapter, member } = await start();
    const media = [1, 2, 3].map((i) =>
      mediaItem({ assetId: `ast_${i}`, altText: i === 2 ? null : `image ${i}` }),
    );
    await adapter.publishItem(publishInput(member, { media }));
    expect(fake.posts[0]!.content).toEqual({
      multiImage: {
        images: [
          { id: fake.media[0]!.urn, altText: "image 1" },
          { id: fake.media[1]!.urn },
          { id: fake.media[2]!.urn, altText: "image 3" },
        ],
      },
    });
  });

  test("an image whose status LinkedIn will not show (403) is attached anyway", async () => {
    const { adapter, member } = await start();
    fake.imageReadsForbidden = true;
    await adapter.publishItem(publishInput(member, { media: [mediaItem({})] }));
    expect(fake.posts[0]!.content?.media.id).toBe(fake.media[0]!.urn);
  });

  test("a video in two parts: each part PUT, ETags finalized in order, PROCESSING → AVAILABLE, then the post", async () => {
    const { member } = await start({ videoPartBytes: 50_000, videoProcessingPolls: 2 });
    const adapter = adapterFor(fake, { deps: { maxPolls: 5 } });
    const bytes = new Uint8Array(80_000).map((_, i) => i % 251);
    await adapter.publishItem(
      publishInput(member, { media: [mediaItem({ contentType: "video/mp4", bytes, altText: null })] }),
    );
    const [video] = fake.media;
    expect(video).toMatchObject({ kind: "video", size: 80_000, received: 80_000, status: "AVAILABLE" });
    expect(video!.parts.map((p) => [p.firstByte, p.lastByte])).toEqual([
      [0, 49_999],
      [50_000, 79_999],
    ]);
    expect(video!.finalizedWith).toEqual(video!.parts.map((p) => p.etag!));
    expect(fake.requests.filter((r) => r.method === "GET" && r.path.startsWith("/rest/videos/")).length).toBe(
      3,
    );
    expect(fake.posts[0]!.content).toEqual({ media: { id: video!.urn } });
  });

  test(
    "a video part whose kept-alive connection is reset mid-body is sent again once by Herald (only that " +
      "part), each part on a connection of its own; the video holds every byte and the post goes out once",
    async () => {
      const { member } = await start({ videoPartBytes: 50_000, videoProcessingPolls: 0, cuttable: true });
      const adapter = adapterFor(fake, { deps: { maxPolls: 5 } });
      const bytes = new Uint8Array(130_000).map((_, i) => (i * 7) % 251);
      // 20,000 bytes of the first part arrive, then the connection is reset.
      fake.resetNextPart({ keepBytes: 20_000 });
      await adapter.publishItem(
        publishInput(member, { media: [mediaItem({ contentType: "video/mp4", bytes, altText: null })] }),
      );
      const [video] = fake.media;
      expect(fake.partPuts.map((p) => [p.index, p.cut])).toEqual([
        [0, true],
        [0, false],
        [1, false],
        [2, false],
      ]);
      expect(fake.partPuts.every((p) => p.fresh)).toBe(true);
      expect(video!.finalizedWith).toEqual(video!.parts.map((p) => p.etag!));
      expect(Buffer.from(fake.videoBytes.get(video!.urn)!).equals(Buffer.from(bytes))).toBe(true);
      expect(fake.posts).toHaveLength(1);
      expect(fake.posts[0]!.content).toEqual({ media: { id: video!.urn } });
    },
  );

  test(
    "a video still processing after the inline polls is pending; checkPending creates the post once " +
      "it is AVAILABLE",
    async () => {
      const { adapter, member } = await start({ videoProcessingPolls: 5 });
      const item = publishInput(member, { media: [mediaItem({ contentType: "video/mp4", altText: null })] });
      const outcome = await adapter.publishItem(item);
      expect(isPending(outcome)).toBe(true);
      const pending = outcome as PendingItem;
      expect(pending.data).toEqual({ media: [{ urn: fake.media[0]!.urn, kind: "video" }] });
      expect(pending.checkAgainAt).toBe(clock.now() + LINKEDIN_RECHECK_MS);
      expect(fake.posts).toEqual([]);
      const since = clock.now();
      const states: string[] = [];
      for (;;) {
        const status = await adapter.checkPending!({ destination: member, item, data: pending.data, since });
        states.push(status.state);
        if (status.state !== "pending") {
          expect(status.state === "published" && status.item.providerObjectId).toBe(fake.posts[0]!.urn);
          break;
        }
        expect(status.checkAgainAt).toBe(clock.now() + LINKEDIN_RECHECK_MS);
      }
      expect(states).toEqual(["pending", "pending", "published"]);
      expect(fake.posts.length).toBe(1);
    },
  );

  test("a video LinkedIn fails to process is rejected, inline or when checked later; nothing is posted", async () => {
    const { adapter, member } = await start({ videoProcessingPolls: 0 });
    fake.failVideoProcessing = true;
    const video = () =>
      publishInput(member, { media: [mediaItem({ contentType: "video/mp4", altText: null })] });
    const inline = await expectProviderError(adapter.publishItem(video()), "rejected");
    expect(inline.message).toContain("UNSUPPORTED_CODEC");
    fake.failVideoProcessing = false;
    fake.videoProcessingPolls = 10;
    const item = video();
    const pending = (await adapter.publishItem(item)) as PendingItem;
    fake.failVideoProcessing = true;
    fake.media.at(-1)!.pollsLeft = 0;
    await expectProviderError(
      adapter.checkPending!({ destination: member, item, data: pending.data, since: clock.now() }),
      "rejected",
    );
    expect(fake.posts).toEqual([]);
  });

  test("checkPending: media LinkedIn forgot is gone; media processing for over two hours is rejected", async () => {
    const { adapter, member } = await start({ videoProcessingPolls: 100 });
    const item = publishInput(member, { media: [mediaItem({ contentType: "video/mp4", altText: null })] });
    const forgotten = { media: [{ urn: "urn:li:video:C4Eunknown", kind: "video" }] };
    expect(
      await adapter.checkPending!({ destination: member, item, data: forgotten, since: clock.now() }),
    ).toEqual({
      state: "gone",
      reason: "LinkedIn no longer knows the uploaded media",
    });
    const pending = (await adapter.publishItem(item)) as PendingItem;
    const since = clock.now() - LINKEDIN_MAX_PROCESSING_MS - 1;
    await expectProviderError(
      adapter.checkPending!({ destination: member, item, data: pending.data, since }),
      "rejected",
    );
    expect(fake.posts).toEqual([]);
  });

  test("no threads: an item with a parent, or a video with images, is refused before anything is sent", async () => {
    const { adapter, member } = await start();
    const parent: PublishedItem = {
      providerObjectId: "urn:li:share:1",
      url: "https://www.linkedin.com/feed/update/urn:li:share:1",
      extra: {},
      provider: { operation: "POST /rest/posts", requestId: null, statusCode: 201 },
    };
    await expectProviderError(
      adapter.publishItem(publishInput(member, { itemIndex: 1, root: parent, parent })),
      "rejected",
    );
    const mixed = [mediaItem({ contentType: "video/mp4" }), mediaItem({ assetId: "ast_2" })];
    await expectProviderError(adapter.publishItem(publishInput(member, { media: mixed })), "rejected");
    expect(fake.requests).toEqual([]);
  });
});

describe("failures map to kinds", () => {
  test.each([
    [
      "invalid token (65600)",
      () => fake.failNext(1, { status: 401, path: "/rest/posts" }),
      "auth_expired",
      "65600",
    ],
    ["expired token (65602)", () => fake.expireTokens(), "auth_expired", "65602"],
    ["revoked token (65601)", () => fake.revokeTokens(), "auth_revoked", "65601"],
  ] as const)("401 %s is %s", async (_name, arrange, kind, subcode) => {
    const { adapter, member } = await start();
    arrange();
    const error = await expectProviderError(adapter.publishItem(publishInput(member)), kind);
    expect([error.statusCode, error.subcode]).toEqual([401, subcode]);
  });

  test("a duplicate post is rejected (422 DUPLICATE_POST)", async () => {
    const { adapter, member } = await start();
    await adapter.publishItem(publishInput(member, { text: "same words" }));
    const error = await expectProviderError(
      adapter.publishItem(publishInput(member, { text: "same words" })),
      "rejected",
    );
    expect([error.statusCode, error.errorCode]).toEqual([422, "DUPLICATE_POST"]);
    expect(error.message).toContain("duplicate");
    expect(fake.posts.length).toBe(1);
  });

  test("429 is transient until the next midnight UTC (LinkedIn sends no reset header)", async () => {
    const { adapter, member } = await start();
    fake.failNext(1, { status: 429, path: "/rest/posts" });
    const error = await expectProviderError(adapter.publishItem(publishInput(member)), "transient");
    expect(error.retryAt).toBe(Date.parse("2026-03-02T00:00:00.000Z"));
  });

  test(
    "403 (a scope the grant lacks, a page not administered) is auth_revoked: connect again with the " +
      "right scopes",
    async () => {
      const { adapter, member } = await start();
      const noPosting = { ...member, credentials: { accessToken: fake.issueToken(["openid", "profile"]) } };
      const error = await expectProviderError(adapter.publishItem(publishInput(noPosting)), "auth_revoked");
      expect([error.statusCode, error.errorCode]).toEqual([403, "ACCESS_DENIED"]);
      const watched = { ...member, externalId: "urn:li:organization:1337" };
      await expectProviderError(adapter.publishItem(publishInput(watched)), "auth_revoked");
      expect(fake.posts).toEqual([]);
    },
  );

  test.each([
    [500, "outcome_unknown"],
    [504, "outcome_unknown"],
    [502, "transient"],
    [503, "transient"],
  ] as const)("%i on the create call is %s", async (status, kind) => {
    const { adapter, member } = await start();
    fake.failNext(1, { status, path: "/rest/posts" });
    await expectProviderError(adapter.publishItem(publishInput(member)), kind);
  });

  test("a 500 on an upload is transient (an unattached upload is safe to repeat)", async () => {
    const { adapter, member } = await start();
    fake.failNext(1, { status: 500, path: "/rest/images" });
    await expectProviderError(
      adapter.publishItem(publishInput(member, { media: [mediaItem({})] })),
      "transient",
    );
    expect(fake.posts).toEqual([]);
  });

  test("an unanswered create is outcome_unknown, and LinkedIn holds the post", async () => {
    const { member } = await start();
    const slow = adapterFor(fake, { deps: { timeoutMs: 150 } });
    fake.hangAfterReceive = true;
    await expectProviderError(slow.publishItem(publishInput(member)), "outcome_unknown");
    expect(fake.posts.length).toBe(1);
  });

  test("text over 3,000 characters sent anyway is refused by LinkedIn (rejected)", async () => {
    const { adapter, member } = await start();
    await expectProviderError(
      adapter.publishItem(publishInput(member, { text: "x".repeat(3001) })),
      "rejected",
    );
  });

  test("every versioned call carries LinkedIn-Version and Rest.li 2.0.0; without the version the fake answers 400", async () => {
    const { member } = await start();
    const adapter = adapterFor(fake, { deps: { maxPolls: 5 } });
    await adapter.publishItem(publishInput(member, { media: [mediaItem({ contentType: "video/mp4" })] }));
    const calls = rest(fake);
    expect(new Set(calls.map((r) => r.path.split("/").slice(0, 3).join("/")))).toEqual(
      new Set(["/rest/videos", "/rest/posts"]),
    );
    for (const call of calls) {
      expect(call.headers["linkedin-version"]).toBe(LINKEDIN_DEFAULT_VERSION);
      expect(call.headers["x-restli-protocol-version"]).toBe("2.0.0");
    }
    const bare = await fetch(`${fake.origin}/rest/posts`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${member.credentials.accessToken}`,
        "content-type": "application/json",
        "x-restli-protocol-version": "2.0.0",
      },
      body: JSON.stringify({ author: member.externalId, commentary: "no version", visibility: "PUBLIC" }),
    });
    expect(bare.status).toBe(400);
    expect(((await bare.json()) as { code: string }).code).toBe("VERSION_MISSING");
    expect(fake.posts.length).toBe(1);
  });
});

describe("LinkedIn-Version is HERALD_LINKEDIN_API_VERSION", () => {
  /** An adapter sending `version` (as the registry builds it from HERALD_LINKEDIN_API_VERSION). */
  const adapterSending = (f: LinkedInFake, version: string) =>
    adapterFor(f, { deps: { apps: { linkedin: fakeApp(f, { apiVersion: version }) } } });

  test("the configured version is on every call: profile, pages, media upload, post and metrics", async () => {
    await start();
    const adapter = adapterSending(fake, "202609");
    const [, page] = await connect(adapter, fake);
    const destination = { ...page!, origin: fake.origin, handle: page!.handle, limits: LINKEDIN_LIMITS };
    const post = (await adapter.publishItem(
      publishInput(destination, { media: [mediaItem({ contentType: "image/png" })] }),
    )) as PublishedItem;
    await adapter.fetchMetrics!({
      destination,
      targets: [
        { providerObjectId: post.providerObjectId, url: post.url, extra: {}, publishedAt: clock.now() },
      ],
    });
    const versioned = fake.requests.filter((r) => r.path.startsWith("/rest/") || r.path === "/v2/userinfo");
    expect(new Set(versioned.map((r) => r.path.split("/").slice(0, 3).join("/")))).toEqual(
      new Set([
        "/v2/userinfo",
        "/rest/organizationAcls",
        "/rest/organizations",
        "/rest/images",
        "/rest/posts",
        "/rest/organizationalEntityShareStatistics",
      ]),
    );
    for (const call of versioned) expect(call.headers["linkedin-version"]).toBe("202609");
    expect(fake.posts.map((p) => p.version)).toEqual(["202609"]);
  });

  test("a version LinkedIn retired (426 NONEXISTENT_VERSION) is misconfigured: one call, the setting named", async () => {
    const { member } = await start();
    const adapter = adapterSending(fake, "202509");
    const error = await expectProviderError(adapter.publishItem(publishInput(member)), "misconfigured");
    expect([error.statusCode, error.errorCode, error.operation]).toEqual([
      426,
      "NONEXISTENT_VERSION",
      "POST /rest/posts",
    ]);
    expect(error.message).toContain("HERALD_LINKEDIN_API_VERSION");
    expect(error.message).toContain("202509");
    expect(rest(fake).length).toBe(1);
    expect(fake.posts).toEqual([]);
    expect(adapter.configurationProblem!()).toBe("api_version_retired");
    expect(adapterFor(fake).configurationProblem!()).toBeNull();
  });

  test("the default is a version the fake (LinkedIn as of 2026-11) serves", async () => {
    const { adapter, member } = await start();
    await adapter.publishItem(publishInput(member));
    expect(fake.posts.map((p) => p.version)).toEqual([LINKEDIN_DEFAULT_VERSION]);
    expect(adapter.configurationProblem!()).toBeNull();
  });

  test.each(["2026-10", "20261", "202613", "202610.1", "v202610", "latest"])(
    "%s stops the start with a message naming the variable",
    (value) => {
      const build = () =>
        createProviderRegistry({
          fetch,
          clock,
          timeoutMs: 1000,
          settings: { linkedin: { ...unset, apiVersion: value } },
        });
      expect(build).toThrow(ConfigError);
      expect(build).toThrow(`HERALD_LINKEDIN_API_VERSION must be a LinkedIn API version YYYYMM or YYYYMM.RR`);
    },
  );

  test("a revision YYYYMM.RR is accepted; a network without versions refuses the variable", () => {
    const registry = createProviderRegistry({
      fetch,
      clock,
      timeoutMs: 1000,
      settings: { linkedin: { ...unset, apiVersion: "202610.02" } },
    });
    expect(registry.app("linkedin")!.apiVersion).toBe("202610.02");
    expect(
      createProviderRegistry({ fetch, clock, timeoutMs: 1000, settings: {} }).app("linkedin")!.apiVersion,
    ).toBe(LINKEDIN_DEFAULT_VERSION);
    expect(() =>
      createProviderRegistry({
        fetch,
        clock,
        timeoutMs: 1000,
        settings: { x: { ...unset, apiVersion: "2" } },
      }),
    ).toThrow("HERALD_X_API_VERSION is not a setting");
    expect(NETWORKS.filter((n) => n.apiVersion).map((n) => n.rules.channel)).toEqual(["linkedin"]);
  });
});

const unset = {
  clientId: null,
  clientSecret: null,
  apiBase: null,
  authBase: null,
  tokenBase: null,
  scopes: null,
};

describe("checkItem", () => {
  const check = (text: string, media = [] as ReturnType<typeof mediaItem>[]) =>
    createLinkedInAdapter({ fetch, clock, timeoutMs: 1000, apps: {} }).checkItem({
      text,
      media,
      options: {},
      limits: LINKEDIN_LIMITS,
      publicMediaUrls: false,
      externalId: "urn:li:person:abc",
    });
  const pointers = (text: string, media = [] as ReturnType<typeof mediaItem>[]) =>
    check(text, media).map((p) => p.pointer);

  test("visibility connections is refused for a page, at the option, and allowed for a member", () => {
    const adapter = createLinkedInAdapter({ fetch, clock, timeoutMs: 1000, apps: {} });
    const checkFor = (externalId: string) =>
      adapter.checkItem({
        text: "x",
        media: [],
        options: { visibility: "connections" },
        limits: LINKEDIN_LIMITS,
        publicMediaUrls: false,
        externalId,
      });
    expect(checkFor("urn:li:organization:2414183")).toEqual([
      { pointer: "", option: "/visibility", detail: expect.stringContaining("page has no connections") },
    ]);
    expect(checkFor("urn:li:person:782bbtaQ")).toEqual([]);
  });

  test.each([
    ["3,000 plain characters", "a".repeat(3000), []],
    ["3,001 plain characters", "a".repeat(3001), [""]],
    ["1,500 reserved characters (3,000 once escaped)", "(".repeat(1500), []],
    ["1,501 reserved characters", "(".repeat(1501), [""]],
    ["1,500 emoji (two UTF-16 units each)", "👍".repeat(1500), []],
    ["1,501 emoji", "👍".repeat(1501), [""]],
    ["hashtags are not escaped", `${"a".repeat(2994)} #tags`, []],
  ])("%s", (_name, text, expected) => {
    expect(pointers(text)).toEqual(expected);
  });

  const image = (i: number, over: Parameters<typeof mediaItem>[0] = {}) =>
    mediaItem({ assetId: `a${i}`, ...over });
  const video = (over: Parameters<typeof mediaItem>[0] = {}) =>
    mediaItem({ assetId: "v", contentType: "video/mp4", byteSize: 1_000_000, ...over });
  test.each([
    ["20 images", Array.from({ length: 20 }, (_, i) => image(i)), []],
    ["21 images", Array.from({ length: 21 }, (_, i) => image(i)), ["/media/20"]],
    ["one video alone", [video()], []],
    ["a video with an image", [video(), image(1)], ["/media"]],
    ["two videos", [video(), video({ assetId: "v2" })], ["/media"]],
    ["a MOV video", [video({ contentType: "video/quicktime" })], ["/media/0"]],
    ["a video under 75 KB", [video({ byteSize: 70_000 })], ["/media/0"]],
    ["a video over 500 MB", [video({ byteSize: 500_000_001 })], ["/media/0"]],
    ["a WebP image", [image(1, { contentType: "image/webp" })], ["/media/0"]],
    ["an image of 5 MB", [image(1, { byteSize: 5 * 1024 * 1024 })], []],
    ["an image over 5 MB", [image(1, { byteSize: 5 * 1024 * 1024 + 1 })], ["/media/0"]],
  ])("%s", (_name, media, expected) => {
    expect(pointers("x", media)).toEqual(expected);
  });
});

describe("metrics (organizationalEntityShareStatistics)", () => {
  const target = (urn: string): MetricsTarget => ({
    providerObjectId: urn,
    url: `https://www.linkedin.com/feed/update/${urn}`,
    extra: { urn },
    publishedAt: clock.now(),
  });
  const publish = async (adapter: ReturnType<typeof adapterFor>, destination: DestinationRef, text: string) =>
    ((await adapter.publishItem(publishInput(destination, { text }))) as PublishedItem).providerObjectId;
  /** A page post the Posts API named as a ugcPost (video posts are), put straight into the fake. */
  const ugcPost = (author: string): string => {
    const urn = `urn:li:ugcPost:${7_200_000_000_000_000_000n + BigInt(fake.posts.length)}`;
    fake.posts.push({
      urn,
      author,
      commentary: "a video",
      visibility: "PUBLIC",
      content: null,
      lifecycleState: "PUBLISHED",
      isReshareDisabledByAuthor: false,
      distribution: null,
      version: LINKEDIN_DEFAULT_VERSION,
    });
    return urn;
  };
  const statistics = () => rest(fake).filter((r) => r.path === "/rest/organizationalEntityShareStatistics");

  test("a page's posts: one call for its shares, one for its ugcPosts; every statistic mapped", async () => {
    const { adapter, page } = await start();
    expect(adapter.metricsBatchSize).toBe(20);
    const first = await publish(adapter, page, "first");
    const second = await publish(adapter, page, "second");
    const video = ugcPost(page.externalId);
    const counts = (urn: string) => fake.posts.find((p) => p.urn === urn)!;
    counts(first).counts = {
      impressionCount: 300,
      uniqueImpressionsCount: 250,
      clickCount: 12,
      likeCount: 9,
      commentCount: 4,
      shareCount: 2,
    };
    counts(second).counts = { impressionCount: 10 };
    counts(video).counts = { likeCount: 1 };
    const results = await adapter.fetchMetrics!({
      destination: page,
      targets: [target(first), target(video), target(second)],
    });
    const byUrn = Object.fromEntries(results.map((r) => [r.providerObjectId, r]));
    expect(byUrn[first]).toEqual({
      providerObjectId: first,
      kind: "metrics",
      values: { views: 250, impressions: 300, comments: 4, reactions: 9, shares: 2, link_clicks: 12 },
      providerAsOf: null,
    });
    expect(byUrn[second]).toMatchObject({ kind: "metrics", values: { impressions: 10, views: 0 } });
    expect(byUrn[video]).toMatchObject({ kind: "metrics", values: { reactions: 1 } });
    expect(fake.statisticsQueries).toEqual([
      { organization: page.externalId, param: "shares", urns: [first, second] },
      { organization: page.externalId, param: "ugcPosts", urns: [video] },
    ]);
    for (const call of statistics()) {
      expect(call.headers["linkedin-version"]).toBe(LINKEDIN_DEFAULT_VERSION);
      expect(call.headers.authorization).toBe(`Bearer ${page.credentials.accessToken}`);
    }
  });

  test("a member's posts are unsupported (restricted member analytics): nothing is called", async () => {
    const { adapter, member } = await start();
    const urn = await publish(adapter, member, "a member's post");
    const before = fake.requests.length;
    const results = await adapter.fetchMetrics!({ destination: member, targets: [target(urn)] });
    expect(results).toEqual([{ providerObjectId: urn, kind: "unsupported", reason: expect.any(String) }]);
    expect(fake.requests).toHaveLength(before);
  });

  test("a deleted post is missing; the others of the batch are read", async () => {
    const { adapter, page } = await start();
    const kept = await publish(adapter, page, "kept");
    const gone = await publish(adapter, page, "deleted later");
    fake.posts = fake.posts.filter((p) => p.urn !== gone);
    const results = await adapter.fetchMetrics!({ destination: page, targets: [target(kept), target(gone)] });
    expect(results.map((r) => [r.providerObjectId, r.kind])).toEqual([
      [kept, "metrics"],
      [gone, "missing"],
    ]);
    expect(statistics()).toHaveLength(1);
  });

  test("a list LinkedIn refuses (400) is asked again post by post; a post refused alone is missing", async () => {
    const { adapter, page } = await start();
    const refused = await publish(adapter, page, "refused");
    const read = await publish(adapter, page, "read");
    fake.failNext(2, { status: 400, path: "/rest/organizationalEntityShareStatistics" });
    const results = await adapter.fetchMetrics!({
      destination: page,
      targets: [target(refused), target(read)],
    });
    expect(results.map((r) => [r.providerObjectId, r.kind])).toEqual([
      [refused, "missing"],
      [read, "metrics"],
    ]);
    expect(statistics()).toHaveLength(3);
  });

  test("429 fails the call: transient until the next midnight UTC", async () => {
    const { adapter, page } = await start();
    const urn = await publish(adapter, page, "limited");
    fake.failNext(1, { status: 429, path: "/rest/organizationalEntityShareStatistics" });
    const error = await expectProviderError(
      adapter.fetchMetrics!({ destination: page, targets: [target(urn)] }),
      "transient",
    );
    expect(error.retryAt).toBe(Date.parse("2026-03-02T00:00:00.000Z"));
  });

  test(
    "an expired token is auth_expired (the job refreshes and reads again); a page no longer " +
      "administered is auth_revoked",
    async () => {
      const { adapter, page } = await start();
      const urn = await publish(adapter, page, "expired");
      fake.expireTokens();
      const expired = await expectProviderError(
        adapter.fetchMetrics!({ destination: page, targets: [target(urn)] }),
        "auth_expired",
      );
      expect([expired.statusCode, expired.subcode]).toEqual([401, "65602"]);
      const live = { ...page, credentials: { accessToken: fake.issueToken() } };
      fake.organizations.find((o) => page.externalId.endsWith(`:${o.id}`))!.role = "ANALYST";
      await expectProviderError(
        adapter.fetchMetrics!({ destination: live, targets: [target(urn)] }),
        "auth_revoked",
      );
    },
  );
});

adapterScenarios("linkedin", async () => {
  const f = await startLinkedInFake();
  const destination: DestinationRef = {
    origin: f.origin,
    externalId: `urn:li:person:${f.member.sub}`,
    handle: f.member.sub,
    credentials: { accessToken: f.issueToken(), expiresAt: clock.now() + 60 * DAY },
    limits: LINKEDIN_LIMITS,
  };
  return {
    adapter: adapterFor(f),
    destination,
    fake: f,
    createPath: "/rest/posts",
    // LinkedIn has no replies to posts in Herald's sense: every stored post stands alone.
    stored: () => f.posts.map((p) => ({ id: p.urn, text: p.commentary, replyTo: null })),
    stop: () => f.stop(),
  };
});

registeredAs("linkedin", {
  connection: "fixed-app",
  idempotentCreate: false,
  pendingChecksRepeatable: false,
});
