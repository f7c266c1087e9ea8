// Facebook Pages through the real server: the 422 naming the variables when Herald's Meta app is not
// configured, connecting with Facebook Login (every Page a destination; connecting again updates them,
// never duplicates), Create Post → engine → a feed post, a photo uploaded from an asset, a video that
// becomes a reel and keeps the post awaiting the provider while Meta processes it, and validation
// refusals with their JSON pointers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uploadAsset } from "../assets/helpers.ts";
import { gif, jpeg, mp4 } from "../assets/samples.ts";
import { startFacebookFake, type FacebookFake } from "../fakes/facebook.ts";
import { expectProblem } from "../helpers/problems.ts";
import { apiPosting } from "./support.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { outbox } from "../posts/engine-helpers.ts";
import type { PostsWorld } from "../posts/helpers.ts";
import { FACEBOOK_REEL_CHECK_MS } from "../../src/providers/facebook/publish.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

let s: TestServer;
let fake: FacebookFake;
let ws: string;

/** Destination ids by Page name. */
const destinations: Record<string, string> = {};

const api = apiPosting("facebook", () => ({ s, ws }));
const { createPost, getPost, publishNow } = api;

beforeAll(async () => {
  fake = await startFacebookFake({ reelProcessingPolls: 0 });
  s = await startTestServer({
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      HERALD_FACEBOOK_CLIENT_ID: fake.app.clientId,
      HERALD_FACEBOOK_CLIENT_SECRET: fake.app.clientSecret,
      HERALD_FACEBOOK_API_BASE: fake.origin,
      HERALD_FACEBOOK_AUTH_BASE: fake.origin,
    },
  });
  ws = s.owner.workspaceId;
});
afterAll(async () => {
  await s.stop();
  await fake.stop();
});

/** Connects through the API: the Login dialog on the fake, back to Herald's callback. */
async function connectFacebook(): Promise<{ id: string; destination_id: string }> {
  const started = await s.request("POST", `/v1/workspaces/${ws}/destination-connections`, {
    body: { provider: "facebook" },
  });
  expect({ status: started.status, text: started.text }).toMatchObject({ status: 201 });
  expect(started.body.authorization_url).toStartWith(`${fake.origin}/v25.0/dialog/oauth?`);
  const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
  expect(authorize.status).toBe(302);
  const callback = await returnFromOAuth(authorize.headers.get("location")!);
  expect({ status: callback.status, text: await callback.text() }).toMatchObject({ status: 200 });
  const done = await s.request("GET", `/v1/workspaces/${ws}/destination-connections/${started.body.id}`);
  expect(done.body).toMatchObject({ status: "completed", error: null });
  return done.body;
}

async function facebookDestinations() {
  const listed = await s.request("GET", `/v1/workspaces/${ws}/destinations`);
  return listed.body.data.filter((d: any) => d.channel === "facebook");
}

describe("connecting Facebook", () => {
  test("one authorization connects every Page the person manages; connecting again updates, never duplicates", async () => {
    const first = await connectFacebook();
    expect(fake.authorizations[0]).toMatchObject({
      client_id: fake.app.clientId,
      redirect_uri: `${s.url}/oauth/callback/facebook`,
      scope: "pages_show_list,pages_manage_posts,pages_read_engagement,read_insights,pages_manage_engagement",
      response_type: "code",
    });
    const listed = await facebookDestinations();
    expect(listed.map((d: any) => [d.display_name, d.status]).sort()).toEqual([
      ["Herald Books", "ready"],
      ["Herald Café", "ready"],
      ["Herald Labs", "ready"],
    ]);
    for (const d of listed) destinations[d.display_name] = d.id;
    expect(first.destination_id).toBe(destinations["Herald Café"]);

    const tokensBefore = new Set(fake.tokens.keys());
    await connectFacebook();
    const again = await facebookDestinations();
    expect(again.map((d: any) => d.id).sort()).toEqual(listed.map((d: any) => d.id).sort());
    // The stored Page tokens were replaced: the first connection's tokens are no longer needed.
    fake.revokeTokens((_, value) => tokensBefore.has(value));
    const post = await publishNow(destinations["Herald Café"]!, { body: ["after reconnecting"] });
    expect(post.state).toBe("published");
    expect(fake.posts.at(-1)).toMatchObject({ pageId: "101000000000001", message: "after reconnecting" });
  });
});

describe("publishing to Facebook", () => {
  test("text goes to the Page's feed; the receipt is the post's permalink", async () => {
    const post = await publishNow(destinations["Herald Labs"]!, { body: ["Lab notes, day one"] });
    expect(post.state).toBe("published");
    const stored = fake.posts.at(-1)!;
    expect(stored).toMatchObject({
      pageId: "101000000000002",
      kind: "status",
      message: "Lab notes, day one",
    });
    expect(post.receipts).toEqual([
      expect.objectContaining({ item_index: 0, provider_object_id: stored.id, url: stored.permalink }),
    ]);
    expect(post.receipts[0].url).toMatch(/^https:\/\/www\.facebook\.com\/101000000000002\/posts\/\d+$/);
  });

  test("a link post carries destination_options.facebook.link", async () => {
    const post = await publishNow(destinations["Herald Books"]!, {
      body: ["New arrivals"],
      destination_options: { facebook: { link: "https://herald.example/books" } },
    });
    expect(post.state).toBe("published");
    expect(fake.posts.at(-1)).toMatchObject({ kind: "link", link: "https://herald.example/books" });
  });

  test("a photo is uploaded from the asset's bytes and published with its caption", async () => {
    const bytes = jpeg(40, 30);
    const asset = await uploadAsset(s, ws, bytes, { contentType: "image/jpeg", fileName: "bread.jpg" });
    const post = await publishNow(destinations["Herald Café"]!, { body: ["Fresh bread"], media: [asset.id] });
    expect(post.state).toBe("published");
    const photo = fake.photos.at(-1)!;
    expect(photo).toMatchObject({ published: true, contentType: "image/jpeg", bytes: bytes.length });
    const stored = fake.posts.at(-1)!;
    expect(stored).toMatchObject({ kind: "photo", message: "Fresh bread", photoIds: [photo.id] });
    expect(post.receipts[0]).toMatchObject({ provider_object_id: stored.id, url: stored.permalink });
  });

  test("a video becomes a reel: the post awaits the provider while Meta processes it, then is published", async () => {
    const asset = await uploadAsset(s, ws, mp4(1080, 1920, 6, { mdatBytes: 50_000 }), {
      kind: "video",
      contentType: "video/mp4",
      fileName: "counter.mp4",
    });
    fake.reelProcessingPolls = 1000;
    const created = await createPost(destinations["Herald Café"]!, {
      body: ["Behind the counter"],
      media: [asset.id],
    });
    expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
    const id = created.body.posts[0].id;
    await s.server.engine.runUntilIdle();
    expect((await getPost(id)).state).toBe("awaiting-provider");
    const reel = fake.reels.at(-1)!;
    expect(reel).toMatchObject({
      received: asset.byte_size,
      videoState: "PUBLISHED",
      description: "Behind the counter",
      phase: "processing",
    });

    fake.reelProcessingPolls = 0;
    fake.finishProcessing();
    s.clock.advance(FACEBOOK_REEL_CHECK_MS + 1000);
    await s.server.engine.runUntilIdle();
    const published = await getPost(id);
    expect(published.state).toBe("published");
    expect(published.receipts).toEqual([
      expect.objectContaining({
        item_index: 0,
        provider_object_id: reel.id,
        url: `https://www.facebook.com/reel/${reel.id}`,
      }),
    ]);
    expect(fake.posts.at(-1)).toMatchObject({ kind: "reel", videoId: reel.id });
    expect((await outbox({ s } as PostsWorld, id)).map((e) => e.type)).toEqual([
      "post.awaiting-provider",
      "post.published",
    ]);
    // One finish: the status checks never published again.
    expect(fake.reels.filter((r) => r.finished && r.description === "Behind the counter")).toHaveLength(1);
  });
});

describe("validation", () => {
  test("a second body item is refused where it is: Facebook has no threads", async () => {
    const r = await createPost(destinations["Herald Café"]!, { body: ["one", "two"] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/body/1"]);
  });

  test("a GIF is refused at its media pointer", async () => {
    const asset = await uploadAsset(s, ws, gif(10, 10), { contentType: "image/gif", fileName: "a.gif" });
    const r = await createPost(destinations["Herald Café"]!, { body: ["x"], media: [asset.id] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/media/0"]);
  });

  test("a video longer than a reel (90 s) is refused at its media pointer", async () => {
    const asset = await uploadAsset(s, ws, mp4(1080, 1920, 120), {
      kind: "video",
      contentType: "video/mp4",
      fileName: "long.mp4",
    });
    const r = await createPost(destinations["Herald Café"]!, { body: ["x"], media: [asset.id] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/media/0"]);
  });

  test("a link with media is refused at the link option", async () => {
    const asset = await uploadAsset(s, ws, jpeg(8, 6), { contentType: "image/jpeg", fileName: "b.jpg" });
    const r = await createPost(destinations["Herald Café"]!, {
      body: ["x"],
      media: [asset.id],
      destination_options: { facebook: { link: "https://herald.example" } },
    });
    expectProblem(r, 400, "public_invalid_request", ["/posts/0/destination_options/facebook/link"]);
  });
});
