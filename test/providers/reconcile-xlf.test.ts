// reconcileItem of X, LinkedIn and Facebook against their fakes: an item whose create went out
// unanswered is looked up in the account's listing (X's user timeline, LinkedIn's author finder, the
// Page's published_posts): one match is the receipt, a listing that reaches back without one proves it
// absent, two matches or a listing read only part of the way are unknown, a 503 is thrown (asked later).
import { afterEach, describe, expect, test } from "bun:test";
import { systemClock } from "../../src/lib/clock.ts";
import { createFacebookAdapter } from "../../src/providers/facebook/adapter.ts";
import { FACEBOOK_LIMITS } from "../../src/providers/facebook/rules.ts";
import { createLinkedInAdapter } from "../../src/providers/linkedin/adapter.ts";
import { LINKEDIN_LIMITS } from "../../src/providers/linkedin/rules.ts";
import { RECONCILE_SLACK_MS } from "../../src/providers/reconcile-listing.ts";
import type { DestinationRef, ProviderAdapter, PublishItemInput } from "../../src/providers/types.ts";
import { createXAdapter, X_SCOPES } from "../../src/providers/x/adapter.ts";
import { X_LIMITS } from "../../src/providers/x/rules.ts";
import { jpeg, mp4 } from "../assets/samples.ts";
import { startFacebookFake, type FacebookFake } from "../fakes/facebook.ts";
import { startLinkedInFake, type LinkedInFake } from "../fakes/linkedin.ts";
import type { RecordedRequest } from "../fakes/shared.ts";
import { startXFake, type XFake } from "../fakes/x.ts";
import { expectProviderError, fakeApp, mediaItem, publishInput } from "./support.ts";

/** One network as these tests drive it: its adapter and destination, and what its fake holds. */
interface Network {
  name: string;
  adapter: ProviderAdapter;
  destination: DestinationRef;
  /** Puts a post on the account as the network would hold it (text as sent, `at` epoch ms). */
  holdPost(text: string, at: number): void;
  /** The path of the listing call, for failures and request counts. */
  listingPath: string;
  stop(): Promise<void>;
  requests(): RecordedRequest[];
  failNext(status: number): void;
}

const deps = { fetch, clock: systemClock, timeoutMs: 2000, pollIntervalMs: 2, maxPolls: 3 };
let running: Network | null = null;
afterEach(async () => {
  await running?.stop();
  running = null;
});

async function xNetwork(): Promise<Network & { fake: XFake }> {
  const fake = await startXFake({ processingPolls: 0 });
  const tokens = fake.issueTokens();
  let n = 0;
  return {
    fake,
    name: "X",
    adapter: createXAdapter({ ...deps, apps: { x: fakeApp(fake) } }),
    destination: {
      origin: fake.origin,
      externalId: fake.user.id,
      handle: fake.user.username,
      credentials: { ...tokens, expiresAt: Date.now() + 7_200_000, scope: X_SCOPES },
      limits: { ...X_LIMITS },
    },
    holdPost: (text, at) =>
      fake.tweets.push({
        id: String(1_700_000_000_000_000_000n + BigInt(++n)),
        text,
        mediaIds: [],
        replyTo: null,
        authorId: fake.user.id,
        createdAt: at,
      }),
    listingPath: `/2/users/${fake.user.id}/tweets`,
    stop: () => fake.stop(),
    requests: () => fake.requests,
    failNext: (status) => fake.failNext(1, { status, path: "/tweets" }),
  };
}

async function linkedinNetwork(): Promise<Network & { fake: LinkedInFake; member: DestinationRef }> {
  const fake = await startLinkedInFake();
  const credentials = { accessToken: fake.issueToken(), expiresAt: Date.now() + 86_400_000 };
  const page: DestinationRef = {
    origin: fake.origin,
    externalId: "urn:li:organization:2414183",
    handle: "devtestco",
    credentials,
    limits: { ...LINKEDIN_LIMITS },
  };
  let n = 0;
  return {
    fake,
    name: "LinkedIn",
    adapter: createLinkedInAdapter({ ...deps, apps: { linkedin: fakeApp(fake) } }),
    destination: page,
    member: { ...page, externalId: `urn:li:person:${fake.member.sub}`, handle: "alice" },
    holdPost: (text, at) =>
      fake.posts.push({
        urn: `urn:li:share:70000000000000${++n}`,
        author: page.externalId,
        commentary: text.replace(/[\\|{}@[\]()<>*_~]/g, "\\$&"),
        visibility: "PUBLIC",
        content: null,
        lifecycleState: "PUBLISHED",
        isReshareDisabledByAuthor: false,
        distribution: null,
        version: "202610",
        createdAt: at,
        lastModifiedAt: at,
      }),
    listingPath: "/rest/posts",
    stop: () => fake.stop(),
    requests: () => fake.requests,
    failNext: (status) => fake.failNext(1, { status, path: "/rest/posts" }),
  };
}

async function facebookNetwork(): Promise<Network & { fake: FacebookFake }> {
  const fake = await startFacebookFake({ reelProcessingPolls: 0 });
  const page = fake.pages[0]!;
  let n = 0;
  return {
    fake,
    name: "Facebook",
    adapter: createFacebookAdapter({
      ...deps,
      apps: { facebook: fakeApp({ ...fake.app, origin: fake.origin }) },
    }),
    destination: {
      origin: fake.origin,
      externalId: page.id,
      handle: page.username ?? page.id,
      credentials: { accessToken: fake.issuePageToken(page.id) },
      limits: FACEBOOK_LIMITS,
    },
    holdPost: (text, at) =>
      fake.posts.push({
        id: `${page.id}_90000${++n}`,
        pageId: page.id,
        kind: "status",
        message: text,
        link: null,
        photoIds: [],
        videoId: null,
        permalink: `https://www.facebook.com/${page.username}/posts/90000${n}`,
        createdAt: at,
      }),
    listingPath: `/v25.0/${page.id}/published_posts`,
    stop: () => fake.stop(),
    requests: () => fake.requests,
    failNext: (status) => fake.failNext(1, { status, path: "/published_posts" }),
  };
}

const networks: [string, () => Promise<Network>][] = [
  ["X", xNetwork],
  ["LinkedIn", linkedinNetwork],
  ["Facebook", facebookNetwork],
];

async function world<T extends Network>(make: () => Promise<T>): Promise<T> {
  const network = await make();
  running = network;
  return network;
}

const itemFor = (network: Network, text: string, over: Partial<PublishItemInput> = {}) =>
  publishInput(network.destination, { text, headline: text, ...over });

describe.each(networks)("%s: reconcileItem", (_, make) => {
  test("published: the one post with the item's text since the call is the receipt", async () => {
    const network = await world(make);
    network.holdPost("an older post", Date.now() - 3 * RECONCILE_SLACK_MS);
    const since = Date.now();
    const item = itemFor(network, "Launch day (finally) & more #herald");
    const sent = await network.adapter.publishItem(item);
    const found = await network.adapter.reconcileItem!({ item, since });
    expect(found).toMatchObject({
      state: "published",
      item: { providerObjectId: (sent as any).providerObjectId, url: (sent as any).url },
    });
  });

  test("absent: the listing reaches back past the call and no post is the item", async () => {
    const network = await world(make);
    network.holdPost("an older post", Date.now() - 3 * RECONCILE_SLACK_MS);
    network.holdPost("another text, just now", Date.now());
    const found = await network.adapter.reconcileItem!({
      item: itemFor(network, "never sent"),
      since: Date.now(),
    });
    expect(found.state).toBe("absent");
  });

  test("absent on an account with no posts at all (its whole history was read)", async () => {
    const network = await world(make);
    const found = await network.adapter.reconcileItem!({
      item: itemFor(network, "first"),
      since: Date.now(),
    });
    expect(found.state).toBe("absent");
  });

  test("a post of the same text from before the call (minus the slack) is not the item", async () => {
    const network = await world(make);
    network.holdPost("said yesterday", Date.now() - 24 * 3_600_000);
    const found = await network.adapter.reconcileItem!({
      item: itemFor(network, "said yesterday"),
      since: Date.now(),
    });
    expect(found.state).toBe("absent");
  });

  test("unknown: two posts with the item's text since the call", async () => {
    const network = await world(make);
    network.holdPost("twice", Date.now());
    network.holdPost("twice", Date.now());
    const found = await network.adapter.reconcileItem!({
      item: itemFor(network, "twice"),
      since: Date.now(),
    });
    expect(found.state).toBe("unknown");
    expect((found as { reason: string }).reason).toContain("2 of the");
  });

  test("unknown: more posts since the call than the two pages Herald reads, none of them the item", async () => {
    const network = await world(make);
    for (let i = 0; i < 210; i++) network.holdPost(`busy ${i}`, Date.now());
    const found = await network.adapter.reconcileItem!({ item: itemFor(network, "lost"), since: Date.now() });
    expect(found.state).toBe("unknown");
    expect((found as { reason: string }).reason).toContain("did not reach back");
    const reads = network.requests().filter((r) => r.method === "GET" && r.path === network.listingPath);
    expect(reads).toHaveLength(2);
  });

  test("a listing that answers 503 is thrown as transient (the engine asks again later)", async () => {
    const network = await world(make);
    network.failNext(503);
    await expectProviderError(
      network.adapter.reconcileItem!({ item: itemFor(network, "later"), since: Date.now() }),
      "transient",
    );
  });

  test("an item without text found once stays unknown (it cannot be told from another post)", async () => {
    const network = await world(make);
    network.holdPost("", Date.now());
    const found = await network.adapter.reconcileItem!({ item: itemFor(network, ""), since: Date.now() });
    expect(found.state).toBe("unknown");
  });
});

describe("X specifics", () => {
  test("the timeline is asked from since − slack, 100 a page, with the fields matching needs", async () => {
    const network = await world(xNetwork);
    const since = Date.now();
    await network.adapter.reconcileItem!({ item: itemFor(network, "x"), since });
    const read = network.requests().find((r) => r.path === network.listingPath)!;
    expect(read).toBeDefined();
    expect(network.fake.timelineReads).toEqual([
      {
        userId: network.fake.user.id,
        startTime: new Date(Math.floor((since - RECONCILE_SLACK_MS) / 1000) * 1000)
          .toISOString()
          .replace(".000Z", "Z"),
        token: null,
      },
    ]);
  });

  test("a thread item matches only the post replying to its parent; media posts match with their t.co link", async () => {
    const network = await world(xNetwork);
    const since = Date.now();
    const root = await network.adapter.publishItem(itemFor(network, "thread root"));
    const first = itemFor(network, "same words", { itemIndex: 1, root: root as any, parent: root as any });
    const reply = await network.adapter.publishItem(first);
    network.fake.tweets.push({ ...network.fake.tweets.at(-1)!, id: "1700000000000000999", replyTo: null });
    expect(await network.adapter.reconcileItem!({ item: first, since })).toMatchObject({
      state: "published",
      item: { providerObjectId: (reply as any).providerObjectId },
    });
    const photo = mediaItem({ contentType: "image/jpeg", bytes: new Uint8Array(jpeg(8, 6)) });
    const withMedia = itemFor(network, "a photo <3", { media: [photo] });
    const sent = await network.adapter.publishItem(withMedia);
    const listed = await fetch(`${network.fake.origin}${network.listingPath}?max_results=5`, {
      headers: { authorization: `Bearer ${network.destination.credentials.accessToken}` },
    }).then((r) => r.json() as Promise<{ data: { text: string }[] }>);
    expect(listed.data[0].text).toMatch(/^a photo &lt;3 https:\/\/t\.co\/\w{10}$/);
    expect(await network.adapter.reconcileItem!({ item: withMedia, since })).toMatchObject({
      state: "published",
      item: { providerObjectId: (sent as any).providerObjectId },
    });
  });

  test("a long post is matched by its note_tweet text (the timeline's `text` is only its start)", async () => {
    const network = await world(xNetwork);
    const text = `${"long & winding ".repeat(30)}end`;
    network.holdPost(text, Date.now());
    network.holdPost(`${"long & winding ".repeat(30)}other end`, Date.now());
    const found = await network.adapter.reconcileItem!({ item: itemFor(network, text), since: Date.now() });
    expect(found).toMatchObject({
      state: "published",
      item: { providerObjectId: network.fake.tweets[0]!.id },
    });
  });
});

describe("LinkedIn specifics", () => {
  test("the finder is called as documented: q=author, the versioned headers, FINDER", async () => {
    const network = await world(linkedinNetwork);
    await network.adapter.reconcileItem!({ item: itemFor(network, "x"), since: Date.now() });
    const read = network.requests().find((r) => r.path === "/rest/posts")!;
    expect(read.method).toBe("GET");
    expect(read.headers).toMatchObject({
      "x-restli-protocol-version": "2.0.0",
      "x-restli-method": "FINDER",
      "linkedin-version": expect.stringMatching(/^\d{6}$/),
    });
  });

  test("a member's posts need r_member_social: LinkedIn's 403 leaves the outcome unknown, nothing else", async () => {
    const network = await world(linkedinNetwork);
    const found = await network.adapter.reconcileItem!({
      item: publishInput(network.member, { text: "mine" }),
      since: Date.now(),
    });
    expect(found.state).toBe("unknown");
    expect((found as { reason: string }).reason).toContain("could not be read");
  });
});

describe("Facebook specifics", () => {
  test("a photo published with its caption is found by its message", async () => {
    const network = await world(facebookNetwork);
    const since = Date.now();
    const photo = mediaItem({ contentType: "image/jpeg", bytes: new Uint8Array(jpeg(8, 6)) });
    const item = itemFor(network, "our new terrace", { media: [photo] });
    const sent = await network.adapter.publishItem(item);
    expect(await network.adapter.reconcileItem!({ item, since })).toMatchObject({
      state: "published",
      item: { providerObjectId: (sent as any).providerObjectId },
    });
  });

  test("a next page announced without a cursor Herald can follow: the listing did not reach back, unknown", async () => {
    const network = await world(facebookNetwork);
    network.fake.failNext(1, {
      status: 200,
      path: "/published_posts",
      body: { data: [], paging: { next: `${network.fake.origin}/v25.0/x/published_posts?until=1` } },
    });
    const found = await network.adapter.reconcileItem!({
      item: itemFor(network, "gone?"),
      since: Date.now(),
    });
    expect(found.state).toBe("unknown");
  });

  test("a reel is not looked up: no documented read of a Page's reels, so it stays unknown", async () => {
    const network = await world(facebookNetwork);
    const clip = mediaItem({ contentType: "video/mp4", bytes: new Uint8Array(mp4(1080, 1920, 5)) });
    const before = network.requests().length;
    const found = await network.adapter.reconcileItem!({
      item: itemFor(network, "a reel", { media: [clip] }),
      since: Date.now(),
    });
    expect(found.state).toBe("unknown");
    expect(network.requests().length).toBe(before);
  });
});
