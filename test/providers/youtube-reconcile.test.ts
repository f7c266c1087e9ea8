// Looking up a YouTube item whose run died before its upload session was stored (reconcileItem): the
// channel's uploads playlist (channels.list → relatedPlaylists.uploads, playlistItems.list newest first,
// paged by nextPageToken), matched by title and description from `since` − RECONCILE_SLACK_MS on.
// (After the session is stored, checks probe it instead: see youtube.test.ts, "the final chunk's answer
// is lost".)
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { ManualClock } from "../../src/lib/clock.ts";
import { RECONCILE_SLACK_MS } from "../../src/providers/reconcile-listing.ts";
import { isPending, type DestinationRef, type PublishItemInput } from "../../src/providers/types.ts";
import { createYouTubeAdapter, YOUTUBE_LIMITS } from "../../src/providers/youtube/adapter.ts";
import { YOUTUBE_RECONCILE_PAGES } from "../../src/providers/youtube/reconcile.ts";
import { googleErrorBody, startYouTubeFake, type YouTubeFake } from "../fakes/youtube.ts";
import { expectProviderError, fakeApp, mediaItem, publishInput } from "./support.ts";

const MINUTE = 60_000;
const clock = new ManualClock();
beforeEach(() => clock.set("2026-03-01T12:00:00.000Z"));
let fake: YouTubeFake;
afterEach(async () => fake?.stop());

async function start() {
  fake = await startYouTubeFake({ now: () => clock.now(), processingPolls: 0 });
  const adapter = createYouTubeAdapter({
    fetch,
    clock,
    timeoutMs: 1000,
    pollIntervalMs: 1,
    maxPolls: 2,
    youtubeChunkBytes: 256 * 1024,
    apps: { youtube: fakeApp(fake) },
  });
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

function item(destination: DestinationRef, text = "Launch day\nEverything we shipped."): PublishItemInput {
  const video = mediaItem({ assetId: "ast_v", contentType: "video/mp4", bytes: new Uint8Array(1000) });
  return publishInput(destination, { text, headline: text.split("\n")[0]!, media: [video] });
}

let seq = 0;
/** A video on the channel uploaded at `at`. */
function seed(title: string, description: string, at: number): string {
  const id = `vid${String(++seq).padStart(8, "0")}`;
  fake.videos.push({
    id,
    channelId: fake.channel!.id,
    title,
    description,
    tags: null,
    categoryId: null,
    privacyStatus: "public",
    madeForKids: null,
    notifySubscribers: true,
    contentType: "video/mp4",
    bytes: new Uint8Array(1),
    uploadStatus: "processed",
    pollsLeft: 0,
    end: "processed",
    uploadedAt: at,
  });
  return id;
}

describe("YouTube: reconcileItem", () => {
  test("the video Herald uploaded (title and description, since the call) is the receipt", async () => {
    const { adapter, destination } = await start();
    const since = clock.now();
    const input = item(destination);
    const pending = await adapter.publishItem(input);
    if (!isPending(pending)) throw new Error("expected a pending item");
    clock.advance(MINUTE);
    await adapter.checkPending({ destination, item: input, data: pending.data, since });
    const [video] = fake.videos;
    const found = await adapter.reconcileItem!({ item: input, since });
    expect(found).toMatchObject({
      state: "published",
      item: {
        providerObjectId: video!.id,
        url: `https://www.youtube.com/watch?v=${video!.id}`,
        extra: { video_id: video!.id, recovered: true },
      },
    });
    // Two reads, one quota unit each.
    const reads = fake.requests.filter((r) => /channels|playlistItems/.test(r.path)).map((r) => r.path);
    expect(reads).toEqual(["/youtube/v3/channels", "/youtube/v3/playlistItems"]);
  });

  test("absent: uploads that reach back (or the whole history) hold no such video since the call", async () => {
    const { adapter, destination } = await start();
    const since = clock.now();
    expect(await adapter.reconcileItem!({ item: item(destination), since })).toMatchObject({
      state: "absent",
    });
    seed("Launch day", "Launch day\nEverything we shipped.", since - RECONCILE_SLACK_MS - MINUTE);
    seed("Launch day", "Something else.", since + MINUTE);
    expect(await adapter.reconcileItem!({ item: item(destination), since })).toMatchObject({
      state: "absent",
    });
  });

  test("unknown: two videos match, or the pages read do not reach back", async () => {
    const { adapter, destination } = await start();
    const since = clock.now();
    seed("Launch day", "Launch day\nEverything we shipped.", since + MINUTE);
    seed("Launch day", "Launch day\nEverything we shipped.", since + 2 * MINUTE);
    const twice = await adapter.reconcileItem!({ item: item(destination), since });
    expect(twice).toMatchObject({ state: "unknown" });
    if (twice.state === "unknown") expect(twice.reason).toContain("2 of the channel's latest uploads");
    fake.videos = [];
    seed("Old", "", since - RECONCILE_SLACK_MS - MINUTE);
    for (let i = 0; i < YOUTUBE_RECONCILE_PAGES * 50; i++) seed(`burst ${i}`, "", since + i * 1000);
    const short = await adapter.reconcileItem!({ item: item(destination), since });
    expect(short).toMatchObject({ state: "unknown" });
    if (short.state === "unknown") expect(short.reason).toContain("do not reach back");
  });

  test("a 503 is thrown transient (asked again later); a refused read is unknown, not a disconnection", async () => {
    const { adapter, destination } = await start();
    const since = clock.now();
    fake.failNext(1, { status: 503, path: "/playlistItems" });
    await expectProviderError(adapter.reconcileItem!({ item: item(destination), since }), "transient");
    fake.failNext(1, {
      status: 403,
      path: "/playlistItems",
      body: googleErrorBody(
        403,
        "insufficientPermissions",
        "Request had insufficient authentication scopes.",
      ),
    });
    const refused = await adapter.reconcileItem!({ item: item(destination), since });
    expect(refused).toMatchObject({ state: "unknown" });
    if (refused.state === "unknown") expect(refused.reason).toContain("could not be read");
  });
});
