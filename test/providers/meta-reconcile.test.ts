// Looking up an Instagram or Threads item whose publish went out unanswered (reconcileItem, Meta's
// container flow): the account's latest posts, newest first and paged by cursor as Meta documents
// them, matched by text (and a reply's parent) from `since` − RECONCILE_SLACK_MS on. One match is the
// receipt; none in a listing that reaches back before then is `absent`; several, a listing that stops
// short or one Meta refuses is `unknown`; a 503 is thrown `transient` for the engine to ask again.
import { afterEach, describe, expect, test } from "bun:test";
import { systemClock } from "../../src/lib/clock.ts";
import { createInstagramAdapter, INSTAGRAM_LIMITS } from "../../src/providers/instagram/adapter.ts";
import { META_RECOVERY_PAGES, META_RECOVERY_SCAN } from "../../src/providers/meta/containers.ts";
import { RECONCILE_SLACK_MS } from "../../src/providers/reconcile-listing.ts";
import { createThreadsAdapter, THREADS_LIMITS } from "../../src/providers/threads/adapter.ts";
import {
  UnresolvedOutcome,
  type DestinationRef,
  type ProviderAdapter,
  type PublishedItem,
} from "../../src/providers/types.ts";
import { startFacebookFake, type FacebookFake } from "../fakes/facebook.ts";
import { startThreadsFake, type ThreadsFake } from "../fakes/threads.ts";
import { jpeg } from "../assets/samples.ts";
import { expectProviderError, fakeApp, publishInput, servedFiles } from "./support.ts";

const MINUTE = 60_000;
// The photo Meta "downloads" for an Instagram container.
const { served } = servedFiles(
  new Map([["/photo.jpg", { type: "image/jpeg", bytes: new Uint8Array(jpeg(8, 6)) }]]),
  "image/jpeg",
);
const CAFE_PAGE = "101000000000001";
const CAFE_IG = "17841400000000001";

/** One network of the container flow as these tests drive it. */
interface World {
  adapter: ProviderAdapter;
  destination: DestinationRef;
  /** Puts a post on the account as if published at `at` (a reply to `replyTo` on Threads). */
  seed(text: string, at: number, replyTo?: string): string;
  /** Posts the fake holds. */
  count(): number;
  /** Path part of the account's listing of posts (or replies). */
  listing(reply: boolean): string;
  failNext(status: number, path: string): void;
  /** The id of the container made last. */
  lastContainer(): string;
  stop(): Promise<void>;
}

let seq = 0;

async function instagram(): Promise<World> {
  const fake: FacebookFake = await startFacebookFake({ mediaProcessingPolls: 0 });
  const adapter = createInstagramAdapter({
    fetch,
    clock: systemClock,
    timeoutMs: 2000,
    pollIntervalMs: 2,
    maxPolls: 3,
    apps: { instagram: fakeApp({ ...fake.app, origin: fake.origin }) },
  });
  const destination: DestinationRef = {
    origin: fake.origin,
    externalId: CAFE_IG,
    handle: "herald.cafe",
    credentials: { accessToken: fake.issuePageToken(CAFE_PAGE), pageId: CAFE_PAGE },
    limits: INSTAGRAM_LIMITS,
  };
  return {
    adapter,
    destination,
    seed(text, at) {
      const id = `1790000000${++seq}`;
      fake.igPosts.push({
        id,
        igId: CAFE_IG,
        containerId: `c${id}`,
        mediaType: "IMAGE",
        caption: text,
        children: [],
        shortcode: `S${id}`,
        permalink: `https://www.instagram.com/p/S${id}/`,
        timestamp: at,
      });
      return id;
    },
    count: () => fake.igPosts.length,
    lastContainer: () => fake.containers.at(-1)!.id,
    listing: () => `/${CAFE_IG}/media`,
    failNext: (status, path) => fake.failNext(1, { status, path }),
    stop: () => fake.stop(),
  };
}

async function threads(): Promise<World> {
  const fake: ThreadsFake = await startThreadsFake({ mediaProcessingPolls: 0 });
  const adapter = createThreadsAdapter({
    fetch,
    clock: systemClock,
    timeoutMs: 2000,
    pollIntervalMs: 2,
    maxPolls: 3,
    apps: { threads: fakeApp({ ...fake.app, origin: fake.origin }) },
  });
  const issuedAt = Date.now();
  const destination: DestinationRef = {
    origin: fake.origin,
    externalId: fake.account.id,
    handle: fake.account.username,
    credentials: { accessToken: fake.issueToken({}), issuedAt, expiresAt: issuedAt + 60 * 24 * 60 * MINUTE },
    limits: THREADS_LIMITS,
  };
  return {
    adapter,
    destination,
    seed(text, at, replyTo) {
      const id = `1800000000${++seq}`;
      fake.posts.push({
        id,
        containerId: `c${id}`,
        mediaType: "TEXT_POST",
        text,
        children: [],
        replyToId: replyTo ?? null,
        replyControl: null,
        shortcode: `S${id}`,
        permalink: `https://www.threads.net/@${fake.account.username}/post/S${id}`,
        timestamp: at,
      });
      return id;
    },
    count: () => fake.posts.length,
    lastContainer: () => fake.containers.at(-1)!.id,
    listing: (reply) => `/${fake.account.id}/${reply ? "replies" : "threads"}`,
    failNext: (status, path) => fake.failNext(1, { status, path }),
    stop: () => fake.stop(),
  };
}

let world: World | null = null;
afterEach(async () => {
  await world?.stop();
  world = null;
});

/** An image post on Instagram (which needs media), text alone on Threads. */
function itemOf(w: World, text: string, parent: PublishedItem | null = null) {
  const media = w.destination.limits === INSTAGRAM_LIMITS ? [served("/photo.jpg")] : [];
  return publishInput(w.destination, { text, media, parent, root: parent, itemIndex: parent ? 1 : 0 });
}

async function lookUp(w: World, text: string, since: number, parent: PublishedItem | null = null) {
  return w.adapter.reconcileItem!({ item: itemOf(w, text, parent), since });
}

describe.each([
  ["Instagram", instagram],
  ["Threads", threads],
])("%s: reconcileItem", (_name, open) => {
  test("one post with the item's text since the call went out is the receipt (line endings and outer spaces aside)", async () => {
    world = await open();
    const since = Date.now() - 5 * MINUTE;
    world.seed("yesterday", since - 24 * 60 * MINUTE);
    const id = world.seed("good morning\ncafé", since + MINUTE);
    world.seed("later", since + 2 * MINUTE);
    const found = await lookUp(world, " good morning\r\ncafé ", since);
    expect(found).toMatchObject({
      state: "published",
      item: { providerObjectId: id, extra: { id, recovered: true } },
    });
    if (found.state === "published") expect(found.item.url).toContain(`S${id}`);
    expect(world.count()).toBe(3);
  });

  test("absent: the listing reaches back before since − slack (or is the whole history) without a match", async () => {
    world = await open();
    const since = Date.now() - 5 * MINUTE;
    expect(await lookUp(world, "first ever", since)).toMatchObject({ state: "absent" });
    world.seed("an old one", since - RECONCILE_SLACK_MS - MINUTE);
    // The same text, but dated before since − slack: an earlier post, not this call's.
    world.seed("again", since - RECONCILE_SLACK_MS - 2 * MINUTE);
    world.seed("something else", since + MINUTE);
    const found = await lookUp(world, "again", since);
    expect(found).toMatchObject({ state: "absent" });
    if (found.state === "absent") expect(found.reason).toContain("3 read");
  });

  test("a match on the second page is found (cursor paging)", async () => {
    world = await open();
    const since = Date.now() - 30 * MINUTE;
    const id = world.seed("deep", since + MINUTE);
    for (let i = 0; i < META_RECOVERY_SCAN + 5; i++) world.seed(`burst ${i}`, since + 2 * MINUTE + i * 1000);
    expect(await lookUp(world, "deep", since)).toMatchObject({
      state: "published",
      item: { providerObjectId: id },
    });
  });

  test("unknown: two posts match", async () => {
    world = await open();
    const since = Date.now() - 5 * MINUTE;
    world.seed("twice", since + MINUTE);
    world.seed("twice", since + 2 * MINUTE);
    const found = await lookUp(world, "twice", since);
    expect(found).toMatchObject({ state: "unknown" });
    if (found.state === "unknown") expect(found.reason).toContain("2 of the");
  });

  test("unknown: the pages read do not reach back to when the call went out", async () => {
    world = await open();
    const since = Date.now() - 60 * MINUTE;
    world.seed("before the burst", since - RECONCILE_SLACK_MS - MINUTE);
    for (let i = 0; i < META_RECOVERY_PAGES * META_RECOVERY_SCAN; i++)
      world.seed(`burst ${i}`, since + i * 1000);
    const found = await lookUp(world, "not there", since);
    expect(found).toMatchObject({ state: "unknown" });
    if (found.state === "unknown") expect(found.reason).toContain("do not reach back");
  });

  test("a listing answering 503 is thrown transient (asked again later); a refused one is unknown", async () => {
    world = await open();
    const since = Date.now() - 5 * MINUTE;
    world.failNext(503, world.listing(false));
    await expectProviderError(lookUp(world, "x", since), "transient");
    world.failNext(403, world.listing(false));
    const refused = await lookUp(world, "x", since);
    expect(refused).toMatchObject({ state: "unknown" });
    if (refused.state === "unknown") expect(refused.reason).toContain("could not be read");
  });
});

describe("Threads replies", () => {
  test("a reply is looked up among the profile's replies with its parent (replied_to)", async () => {
    world = await threads();
    const since = Date.now() - 5 * MINUTE;
    const root = world.seed("the thread", since + MINUTE);
    const parent: PublishedItem = {
      providerObjectId: root,
      url: "https://www.threads.net/@alice/post/x",
      extra: {},
      provider: { operation: "receipt", requestId: null, statusCode: null },
    };
    // The same text replying to another post is not this item.
    world.seed("and more", since + MINUTE, "17999999999");
    expect(await lookUp(world, "and more", since, parent)).toMatchObject({ state: "absent" });
    const reply = world.seed("and more", since + 2 * MINUTE, root);
    expect(await lookUp(world, "and more", since, parent)).toMatchObject({
      state: "published",
      item: { providerObjectId: reply },
    });
  });
});

describe.each([
  ["Instagram", instagram],
  ["Threads", threads],
])("%s: a PUBLISHED container without one matching post", (_name, open) => {
  test("is settled for a person (UnresolvedOutcome): the engine never looks it up as absent later", async () => {
    world = await open();
    const since = Date.now() - MINUTE;
    await world.adapter.publishItem(itemOf(world, "the published one"));
    const container = world.lastContainer();
    const error = await expectProviderError(
      world.adapter.checkPending!({
        destination: world.destination,
        item: itemOf(world, "another text"),
        data: { children: [], container },
        since,
      }),
      "outcome_unknown",
    );
    expect(error).toBeInstanceOf(UnresolvedOutcome);
    expect(error.message).toContain("none of the");
    expect(world.count()).toBe(1);
  });
});
