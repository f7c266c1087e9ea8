// Channel rules through the API (Bluesky text, options and media; X URLs and monthly usage) and the
// destinations API (list, get, patch, disconnect, connection sessions and their origin guard).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer } from "../helpers/server.ts";
import {
  api,
  connectBluesky,
  insertAsset,
  insertXDestination,
  X_APP_ENV,
  makePng,
  ok,
  setAssetReady,
} from "./fixtures.ts";
import { startPostsWorld, type PostsWorld } from "./helpers.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

let w: PostsWorld;
let bluesky: BlueskyFake;
let alice: string;
let a: ReturnType<typeof api>;

beforeAll(async () => {
  w = await startPostsWorld(X_APP_ENV);
  bluesky = await startBlueskyFake();
  alice = await connectBluesky(w.s, bluesky, w.ws);
  a = api(w.s, w.ws);
});
afterAll(async () => {
  await w.stop();
  await bluesky.stop();
});

let groups = 0;
/** A Create Post body for one Bluesky post. */
const toBluesky = (post: Record<string, unknown>, when = "2026-03-20T10:00:00Z") => ({
  when,
  confirmed: true,
  group: `bsky-${++groups}`,
  posts: [{ destination_id: alice, body: ["hello"], ...post }],
});
/** Publishes now and runs the engine; returns the post and the record the fake stored. */
async function publishToBluesky(post: Record<string, unknown>) {
  const created = ok(await a.create(toBluesky(post, "now")), 202).body.posts[0];
  await w.s.server.engine.runUntilIdle();
  const after = ok(await a.get(created.id), 200).body;
  expect({ state: after.state, last_error: after.last_error }).toEqual({
    state: "published",
    last_error: null,
  });
  const record = bluesky.records.find((r) =>
    r.uri.endsWith(after.receipts[0].provider_object_id.split("/").pop()),
  );
  expect(record).toBeDefined();
  return { post: after, record: record!.record };
}

describe("Bluesky text and options", () => {
  // 100 thumbs with a skin tone (1 grapheme, 4 UTF-16 units, 8 bytes each) + 200 letters.
  const emoji300 = "👍🏽".repeat(100) + "a".repeat(200);

  test("300 graphemes are accepted and published, whatever their UTF-16 length", async () => {
    expect(emoji300.length).toBe(600);
    const { record } = await publishToBluesky({ body: [emoji300] });
    expect(record.text).toBe(emoji300);
  });

  const tooLong: { name: string; body: string[]; pointer: string }[] = [
    { name: "301 graphemes", body: [emoji300 + "👍🏽"], pointer: "/posts/0/body/0" },
    { name: "301 graphemes in a reply", body: ["first", "a".repeat(301)], pointer: "/posts/0/body/1" },
    {
      name: "300 graphemes over 3000 UTF-8 bytes",
      body: ["👨‍👩‍👧‍👦".repeat(300)],
      pointer: "/posts/0/body/0",
    },
  ];
  for (const c of tooLong) {
    test(`${c.name} is 422 on ${c.pointer}`, async () => {
      expectProblem(await a.create(toBluesky({ body: c.body })), 422, "public_unpublishable", [c.pointer]);
    });
  }

  test("languages and content labels are accepted and reach the record", async () => {
    const { post, record } = await publishToBluesky({
      body: ["Guten Tag"],
      destination_options: {
        bluesky: { languages: ["de", "en"], content_labels: ["porn", "graphic-media"] },
      },
    });
    expect(post.payload.destination_options.bluesky).toEqual({
      languages: ["de", "en"],
      content_labels: ["porn", "graphic-media"],
    });
    expect(record.langs).toEqual(["de", "en"]);
    expect(record.labels).toEqual({
      $type: "com.atproto.label.defs#selfLabels",
      values: [{ val: "porn" }, { val: "graphic-media" }],
    });
  });

  test("alt text for an asset that is not attached is 400 on that key", async () => {
    const attached = await insertAsset(w.s, w.ws);
    const stray = await insertAsset(w.s, w.ws);
    const r = await a.create(
      toBluesky({
        media: [attached],
        destination_options: { bluesky: { alt_text_by_asset_id: { [attached]: "a cat", [stray]: "a dog" } } },
      }),
    );
    expectProblem(r, 400, "public_invalid_request", [
      `/posts/0/destination_options/bluesky/alt_text_by_asset_id/${stray}`,
    ]);
  });

  const badOptions: { name: string; options: Record<string, unknown>; pointer: string }[] = [
    {
      name: "an unknown content label",
      options: { content_labels: ["porn", "spicy"] },
      pointer: "/posts/0/destination_options/bluesky/content_labels/1",
    },
    {
      name: "an unknown option",
      options: { langs: ["en"] },
      pointer: "/posts/0/destination_options/bluesky/langs",
    },
  ];
  for (const c of badOptions) {
    test(`${c.name} is 400`, async () => {
      expectProblem(
        await a.create(toBluesky({ destination_options: { bluesky: c.options } })),
        400,
        "public_invalid_request",
        [c.pointer],
      );
    });
  }
});

describe("Bluesky media", () => {
  const images = (n: number) =>
    Promise.all(Array.from({ length: n }, (_, i) => insertAsset(w.s, w.ws, { width: 4 + i, height: 3 })));
  const alts = (ids: string[]) => ({
    bluesky: { alt_text_by_asset_id: Object.fromEntries(ids.map((id, i) => [id, `picture ${i + 1}`])) },
  });

  test("four images with alt text are published: four blobs, the alt texts and aspect ratios in the embed", async () => {
    const ids = await images(4);
    const blobsBefore = bluesky.blobs.length;
    const { post, record } = await publishToBluesky({ media: ids, destination_options: alts(ids) });
    expect(post.assets.map((x: any) => x.id)).toEqual(ids);
    expect(bluesky.blobs.length - blobsBefore).toBe(4);
    expect(bluesky.blobs.slice(blobsBefore).every((b) => b.mimeType === "image/png")).toBe(true);
    expect(bluesky.blobs.slice(blobsBefore).map((b) => b.size)).toEqual(
      [4, 5, 6, 7].map((width) => makePng(width, 3).length),
    );
    expect(record.embed.$type).toBe("app.bsky.embed.images");
    expect(record.embed.images.map((x: any) => x.alt)).toEqual([
      "picture 1",
      "picture 2",
      "picture 3",
      "picture 4",
    ]);
    expect(record.embed.images.map((x: any) => x.aspectRatio)).toEqual(
      [4, 5, 6, 7].map((width) => ({ width, height: 3 })),
    );
  });

  test("media_items attach images to a reply", async () => {
    const [one] = await images(1);
    const { post } = await publishToBluesky({
      body: ["text only", "with a picture"],
      media_items: [{ asset_id: one, item_index: 1 }],
      destination_options: alts([one!]),
    });
    expect(post.assets).toEqual([expect.objectContaining({ id: one, item_index: 1 })]);
    const reply = bluesky.records.at(-1)!.record;
    expect(reply.reply).toBeDefined();
    expect(reply.embed.images[0].alt).toBe("picture 1");
  });

  test("a fifth image is 422 pointing at it", async () => {
    const ids = await images(5);
    expectProblem(
      await a.create(toBluesky({ media: ids, destination_options: alts(ids) })),
      422,
      "public_unpublishable",
      ["/posts/0/media/4"],
    );
  });

  test("an image without alt text is 422 pointing at it (media or media_items)", async () => {
    const [x, y] = await images(2);
    const onlyFirst = { bluesky: { alt_text_by_asset_id: { [x!]: "has alt" } } };
    expectProblem(
      await a.create(toBluesky({ media: [x, y], destination_options: onlyFirst })),
      422,
      "public_unpublishable",
      ["/posts/0/media/1"],
    );
    expectProblem(
      await a.create(
        toBluesky({
          body: ["a", "b"],
          media_items: [
            { asset_id: x, item_index: 0 },
            { asset_id: y, item_index: 1 },
          ],
          destination_options: onlyFirst,
        }),
      ),
      422,
      "public_unpublishable",
      ["/posts/0/media_items/1"],
    );
    const blank = { bluesky: { alt_text_by_asset_id: { [x!]: "  " } } };
    expectProblem(
      await a.create(toBluesky({ media: [x], destination_options: blank })),
      422,
      "public_unpublishable",
      ["/posts/0/media/0"],
    );
  });

  test("an image over 1,000,000 bytes is 422; exactly 1,000,000 is fine", async () => {
    const big = await insertAsset(w.s, w.ws, { bytes: makePng(4, 3, 1_000_001) });
    const edge = await insertAsset(w.s, w.ws, { bytes: makePng(4, 3, 1_000_000) });
    expectProblem(
      await a.create(toBluesky({ media: [edge, big], destination_options: alts([edge, big]) })),
      422,
      "public_unpublishable",
      ["/posts/0/media/1"],
    );
    const dry = ok(await a.validate(toBluesky({ media: [edge], destination_options: alts([edge]) })), 200);
    expect(dry.body).toMatchObject({ object: "post_validation", valid: true, errors: [], warnings: [] });
  });

  test("an asset still uploading: preparing, then needs-attention at its time, or on its way once ready", async () => {
    w.s.clock.set("2026-03-01T12:00:00Z");
    const late = await insertAsset(w.s, w.ws, { status: "pending_upload" });
    const onTime = await insertAsset(w.s, w.ws, { status: "pending_upload" });
    const lost = ok(
      await a.create(toBluesky({ media: [late], destination_options: alts([late]) }, "2026-03-01T12:30:00Z")),
    ).body.posts[0];
    const saved = ok(
      await a.create(
        toBluesky({ media: [onTime], destination_options: alts([onTime]) }, "2026-03-01T13:00:00Z"),
      ),
    ).body.posts[0];
    expect([lost.state, saved.state]).toEqual(["preparing", "preparing"]);

    w.s.clock.set("2026-03-01T12:31:00Z");
    await w.s.server.engine.runUntilIdle();
    const attention = ok(await a.get(lost.id), 200).body;
    expect(attention).toMatchObject({
      state: "needs-attention",
      action_required: true,
      last_error: { code: "assets_not_ready" },
    });
    expect(ok(await a.get(saved.id), 200).body.state).toBe("preparing");

    await setAssetReady(w.s, onTime);
    await w.s.server.engine.runUntilIdle();
    expect(ok(await a.get(saved.id), 200).body).toMatchObject({
      state: "scheduled",
      scheduled_at: "2026-03-01T13:00:00.000Z",
    });
    w.s.clock.set("2026-03-01T13:00:00Z");
    await w.s.server.engine.runUntilIdle();
    const done = ok(await a.get(saved.id), 200).body;
    expect(done.state).toBe("published");
    expect(bluesky.records.at(-1)!.record.embed.images).toHaveLength(1);
  });
});

describe("X rules (an X destination row as a fixture)", () => {
  let x: string;
  beforeAll(async () => {
    x = await insertXDestination(w.s, w.ws);
  });
  afterAll(() => w.s.clock.set("2026-03-01T14:10:00Z")); // later tests schedule in late March
  const toX = (body: string[], when = "2026-07-01T10:00:00Z") => ({
    when,
    confirmed: true,
    group: `x-${++groups}`,
    posts: [{ destination_id: x, body }],
  });

  const urls: { name: string; body: string[]; pointer: string }[] = [
    {
      name: "an https URL in a reply",
      body: ["plain words", "read https://example.com/post"],
      pointer: "/posts/0/body/1",
    },
    { name: "a bare domain", body: ["see example.org for more"], pointer: "/posts/0/body/0" },
    { name: "a www address", body: ["www.herald.dev/x"], pointer: "/posts/0/body/0" },
    { name: "a domain with a newer TLD", body: ["try foo.ai"], pointer: "/posts/0/body/0" },
    { name: "a second-level country domain", body: ["hi", "example.co.uk"], pointer: "/posts/0/body/1" },
    { name: "a t.co link", body: ["t.co/abc123"], pointer: "/posts/0/body/0" },
  ];
  for (const c of urls) {
    test(`${c.name} is 422 on ${c.pointer}`, async () => {
      expectProblem(await a.create(toX(c.body)), 422, "public_unpublishable", [c.pointer]);
    });
  }

  // The dry run names the item and says why, for a destination and for a draft naming only `x`.
  const dryRuns: { name: string; body: string[]; pointer: string; detail: string }[] = [
    {
      name: "foo.ai",
      body: ["see foo.ai"],
      pointer: "/posts/0/body/0",
      detail: "X bodies cannot contain URLs",
    },
    {
      name: "a URL in the reply",
      body: ["first", "https://t.co/abc123"],
      pointer: "/posts/0/body/1",
      detail: "X bodies cannot contain URLs",
    },
    {
      name: "141 CJK characters",
      body: ["漢".repeat(141)],
      pointer: "/posts/0/body/0",
      detail: "text is 282 characters as X counts them (CJK characters and emoji count 2); X allows 280",
    },
    {
      name: "a byte-order mark",
      body: ["\uFEFFhello"],
      pointer: "/posts/0/body/0",
      detail: "text contains a character X refuses (U+FFFE, U+FEFF or U+FFFF)",
    },
  ];
  for (const c of dryRuns) {
    test(`validate: ${c.name} is refused at ${c.pointer}, as an error now and a warning in a draft`, async () => {
      const finding = { pointer: c.pointer, code: "public_unpublishable", detail: c.detail, channel: "x" };
      const now = ok(await a.validate(toX(c.body)), 200).body;
      expect({ valid: now.valid, errors: now.errors }).toEqual({ valid: false, errors: [finding] });
      const draft = ok(
        await a.validate({ when: "draft", group: `x-${++groups}`, posts: [{ channel: "x", body: c.body }] }),
        200,
      ).body;
      expect(draft).toMatchObject({
        object: "post_validation",
        valid: true,
        errors: [],
        warnings: [finding],
      });
    });
  }

  test("@user, #tag, $AAPL, 1.5, node.js and www.herald.test (no TLD X links) are not URLs", async () => {
    const dry = ok(await a.validate(toX(["@user #tag $AAPL 1.5 node.js www.herald.test/x"])), 200).body;
    expect({ valid: dry.valid, errors: dry.errors }).toEqual({ valid: true, errors: [] });
  });

  test("a body without URLs is scheduled", async () => {
    expect(ok(await a.create(toX(["no links here", "and none here either"]))).body.posts[0]).toMatchObject({
      state: "scheduled",
      channel: "x",
    });
  });

  test("50 X posts a month are accepted, the 51st is 402, and cancelling one frees a slot", async () => {
    const june = "2026-06-10T10:00:00Z";
    const fifty = ok(
      await a.create({
        when: june,
        confirmed: true,
        group: "x-usage",
        posts: Array.from({ length: 50 }, (_, i) => ({ destination_id: x, body: [`post ${i}`] })),
      }),
    ).body.posts;
    expect(fifty).toHaveLength(50);
    expect(fifty.every((p: any) => p.state === "scheduled")).toBe(true);

    const over = await a.create(toX(["one more"], "2026-06-20T10:00:00Z"));
    expectProblem(over, 402, "public_usage_limit_reached");
    expect(over.body.user_action).toBe("upgrade_plan");
    const dry = ok(await a.validate(toX(["one more"], "2026-06-20T10:00:00Z")), 200).body;
    expect(dry.valid).toBe(false);
    expect(dry.errors.map((e: any) => [e.code, e.channel])).toEqual([["public_usage_limit_reached", "x"]]);
    // Another month has its own 50.
    ok(await a.create(toX(["in May"], "2026-05-31T23:59:00Z")));

    ok(await a.action(fifty[0].id, "cancel", { confirmed: true }), 200);
    expect(ok(await a.validate(toX(["one more"], "2026-06-20T10:00:00Z")), 200).body.valid).toBe(true);
    ok(await a.create(toX(["one more"], "2026-06-20T10:00:00Z")));
    expectProblem(
      await a.create(toX(["and another"], "2026-06-21T10:00:00Z")),
      402,
      "public_usage_limit_reached",
    );
  });

  test("a missed X post gives its slot back once: cancelling it afterwards does not free a second one", async () => {
    w.s.clock.set("2026-03-01T13:00:00Z");
    const missed = ok(await a.create(toX(["soon"], "2026-03-01T13:30:00Z"))).body.posts[0];
    ok(
      await a.create({
        when: "2026-03-20T10:00:00Z",
        confirmed: true,
        group: "x-march",
        posts: Array.from({ length: 49 }, (_, i) => ({ destination_id: x, body: [`march ${i}`] })),
      }),
    );
    expectProblem(await a.create(toX(["51st"], "2026-03-21T10:00:00Z")), 402, "public_usage_limit_reached");
    w.s.clock.set("2026-03-01T14:05:00Z"); // Herald "was down": 35 minutes late
    await w.s.server.engine.runUntilIdle();
    expect(ok(await a.get(missed.id), 200).body.state).toBe("missed");
    ok(await a.create(toX(["takes the missed one's slot"], "2026-03-21T10:00:00Z")));
    ok(await a.action(missed.id, "cancel", { confirmed: true }), 200);
    expectProblem(
      await a.create(toX(["would be the 51st"], "2026-03-22T10:00:00Z")),
      402,
      "public_usage_limit_reached",
    );
  });

  test("retrying a missed X post a month later does not take a slot from the new month for good", async () => {
    w.s.clock.set("2026-04-01T10:00:00Z");
    const late = ok(await a.create(toX(["april"], "2026-04-01T10:30:00Z"))).body.posts[0];
    w.s.clock.set("2026-04-01T11:05:00Z");
    await w.s.server.engine.runUntilIdle();
    expect(ok(await a.get(late.id), 200).body.state).toBe("missed");
    w.s.clock.set("2026-05-02T10:00:00Z");
    expect(ok(await a.action(late.id, "retry", { confirmed: true }), 200).body.state).toBe("ready");
    // The attempt fails (the fixture's X cannot be reached) and gives the reservation back.
    await w.s.server.engine.runUntilIdle();
    expect(ok(await a.get(late.id), 200).body.state).toBe("failed");
    // May holds one post ("in May"); 49 more fit.
    ok(
      await a.create({
        when: "2026-05-20T10:00:00Z",
        confirmed: true,
        group: "x-may",
        posts: Array.from({ length: 49 }, (_, i) => ({ destination_id: x, body: [`may ${i}`] })),
      }),
    );
    expectProblem(
      await a.create(toX(["51st in May"], "2026-05-21T10:00:00Z")),
      402,
      "public_usage_limit_reached",
    );
  });
});

describe("destinations", () => {
  let bob: string;
  const path = (id: string) => `/v1/workspaces/${w.ws}/destinations/${id}`;
  const patch = (id: string, body: Record<string, unknown>) => w.s.request("PATCH", path(id), { body });
  beforeAll(async () => {
    bob = await connectBluesky(w.s, bluesky, w.ws, "bob.test", "bob-app-pass");
  });

  test("the listing is whole: has_more false, next_cursor null", async () => {
    const r = ok(await w.s.request("GET", `/v1/workspaces/${w.ws}/destinations?limit=1`), 200);
    expect(r.body.has_more).toBe(false);
    expect(r.body.next_cursor).toBeNull();
    expect(r.headers.get("link")).toBeNull();
    expect(r.body.data.map((d: any) => d.id).sort()).toEqual(
      expect.arrayContaining([w.destinationId, alice, bob].sort()),
    );
    for (const d of r.body.data) {
      expect(d).toMatchObject({ object: "destination", status: "ready", is_default: false });
      expect(d).not.toHaveProperty("unavailable_reason");
    }
  });

  test("GET one, with its ETag; an unknown one is 404", async () => {
    const r = ok(await w.s.request("GET", path(alice)), 200);
    expect(r.body).toMatchObject({
      id: alice,
      object: "destination",
      channel: "bluesky",
      display_name: "alice.test",
      status: "ready",
      is_default: false,
    });
    expect(r.headers.get("etag")).toBeTruthy();
    expectProblem(await w.s.request("GET", path("dest_nope")), 404, "public_not_found");
  });

  test("is_default true clears the other default of the same channel only", async () => {
    ok(await patch(w.destinationId, { is_default: true }), 200);
    expect(ok(await patch(alice, { is_default: true }), 200).body.is_default).toBe(true);
    expect(ok(await patch(bob, { is_default: true }), 200).body.is_default).toBe(true);
    const after = Object.fromEntries(
      ok(await w.s.request("GET", `/v1/workspaces/${w.ws}/destinations`), 200).body.data.map((d: any) => [
        d.id,
        d.is_default,
      ]),
    );
    expect([after[alice], after[bob], after[w.destinationId]]).toEqual([false, true, true]);
  });

  test("a disabled destination refuses new posts (422) until enabled again", async () => {
    expect(ok(await patch(bob, { enabled: false }), 200).body.status).toBe("disabled");
    expect(ok(await w.s.request("GET", path(bob)), 200).body.status).toBe("disabled");
    const body = {
      when: "2026-03-25T10:00:00Z",
      confirmed: true,
      group: "to-bob",
      posts: [{ destination_id: bob, body: ["hi bob"] }],
    };
    expectProblem(await a.create(body), 422, "public_unpublishable", ["/posts/0/destination_id"]);
    expect(ok(await patch(bob, { enabled: true }), 200).body.status).toBe("ready");
    ok(await a.create(body));
    expectProblem(await patch(bob, {}), 400, "public_invalid_request");
  });

  test("DELETE is 409 while a post waits on the destination, then disconnects it", async () => {
    const waiting = (await a.list(`?destination_id=${bob}&view=scheduled`)).body.data;
    expect(waiting).toHaveLength(1);
    expectProblem(await w.s.request("DELETE", path(bob)), 409, "public_conflict");
    ok(await a.action(waiting[0].id, "cancel", { confirmed: true }), 200);
    const r = ok(await w.s.request("DELETE", path(bob)), 200);
    expect(r.body).toEqual({ id: bob, object: "destination", deleted: true });
    expectProblem(await w.s.request("GET", path(bob)), 404, "public_not_found");
    expect(
      ok(await w.s.request("GET", `/v1/workspaces/${w.ws}/destinations`), 200).body.data.map(
        (d: any) => d.id,
      ),
    ).not.toContain(bob);
    expectProblem(
      await a.create({
        when: "2026-03-25T10:00:00Z",
        confirmed: true,
        group: "to-bob-2",
        posts: [{ destination_id: bob, body: ["gone"] }],
      }),
      422,
      "public_unpublishable",
      ["/posts/0/destination_id"],
    );
    expect(ok(await a.get(waiting[0].id), 200).body.destination_id).toBe(bob);
  });
});

describe("connection sessions", () => {
  const connect = (s: typeof w.s, body: Record<string, unknown>) =>
    s.request("POST", `/v1/workspaces/${s.owner.workspaceId}/destination-connections`, { body });
  const refusedEverywhere = [
    "https://10.0.0.1",
    "https://192.168.1.20",
    "https://169.254.169.254",
    "https://user:pw@example.com",
    "https://1.1.1.1/some/path",
    "https://1.1.1.1/?q=1",
    "ftp://1.1.1.1",
    "not a url",
    "http://8.8.8.8",
  ];

  test("without HERALD_DEV_ALLOW_PRIVATE_NETWORK, loopback http origins are refused too", async () => {
    const plain = await startTestServer();
    const sessions = () => bluesky.requests.filter((r) => r.path.includes("createSession")).length;
    const sessionsBefore = sessions();
    try {
      for (const origin of [
        `http://127.0.0.1:${new URL(bluesky.origin).port}`,
        "http://localhost:8080",
        "https://127.0.0.1",
        "https://[::1]",
        ...refusedEverywhere,
      ]) {
        for (const provider of ["mastodon", "bluesky"]) {
          const extra =
            provider === "bluesky" ? { handle: "alice.test", app_password: "alice-app-pass" } : {};
          const r = await connect(plain, { provider, instance_origin: origin, ...extra });
          expectProblem(r, 400, "public_invalid_request", ["/instance_origin"]);
        }
      }
      expect(sessions()).toBe(sessionsBefore);
    } finally {
      await plain.stop();
    }
  });

  for (const origin of refusedEverywhere) {
    test(`${origin} is refused even with the dev switch`, async () => {
      expectProblem(
        await connect(w.s, { provider: "mastodon", instance_origin: origin }),
        400,
        "public_invalid_request",
        ["/instance_origin"],
      );
    });
  }

  test("a wrong Bluesky app password is 422 on /app_password; a missing handle is 400", async () => {
    const r = await connect(w.s, {
      provider: "bluesky",
      instance_origin: bluesky.origin,
      handle: "alice.test",
      app_password: "wrong-password",
    });
    expectProblem(r, 422, "public_provider_credentials_refused", ["/app_password"]);
    expect(r.text).not.toContain("wrong-password");
    expectProblem(
      await connect(w.s, {
        provider: "bluesky",
        instance_origin: bluesky.origin,
        app_password: "alice-app-pass",
      }),
      400,
      "public_invalid_request",
      ["/handle"],
    );
  });

  test("without instance_origin Bluesky connects at HERALD_BLUESKY_API_BASE (default bsky.social)", async () => {
    const plain = await startTestServer({
      env: { HERALD_BLUESKY_API_BASE: bluesky.origin, HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" },
    });
    try {
      const sessions = () => bluesky.requests.filter((r) => r.path.includes("createSession")).length;
      const before = sessions();
      const r = await connect(plain, {
        provider: "bluesky",
        handle: "alice.test",
        app_password: "alice-app-pass",
      });
      expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
      expect(r.body.status).toBe("completed");
      expect(sessions()).toBe(before + 1);
    } finally {
      await plain.stop();
    }
  });

  test("the OAuth return page with an unknown state is a 400 HTML page", async () => {
    const r = await fetch(`${w.s.url}/oauth/callback/mastodon?state=not-a-state&code=abc`);
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toStartWith("text/html");
    expect(await r.text()).toContain("<h1>Not connected</h1>");
  });

  test("a pending connection expires after 15 minutes and cannot be completed", async () => {
    const started = ok(await connect(w.s, { provider: "mastodon", instance_origin: w.mastodon.origin }));
    expect(started.body).toMatchObject({
      object: "destination_connection",
      status: "pending",
      provider: "mastodon",
      destination_id: null,
    });
    const before = ok(
      await w.s.request("GET", `/v1/workspaces/${w.ws}/destination-connections/${started.body.id}`),
      200,
    ).body;
    expect(before.status).toBe("pending");
    w.s.clock.advance(16 * 60_000);
    const expired = ok(
      await w.s.request("GET", `/v1/workspaces/${w.ws}/destination-connections/${started.body.id}`),
      200,
    ).body;
    expect(expired).toMatchObject({ status: "expired", authorization_url: null, destination_id: null });
    const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
    const callback = await returnFromOAuth(authorize.headers.get("location")!);
    expect(callback.status).toBe(400);
    expect(await callback.text()).toContain("expired");
    expect(
      ok(await w.s.request("GET", `/v1/workspaces/${w.ws}/destination-connections/${started.body.id}`), 200)
        .body.status,
    ).toBe("expired");
  });
});
