// Validating a draft tells what publishing it would refuse (issue 26, point 5): the draft is valid
// (Create Post stores it), and `warnings` list each problem as `{pointer, code, detail, channel}` —
// against its destination's limits, or the network's own when the draft names only a channel.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { NETWORK_RULES } from "../../src/providers/registry.ts";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { cells, herald, removeTempDirs, tempDir } from "../cli/helpers.ts";
import { api, connectBluesky, insertAsset, insertXDestination, ok, X_APP_ENV } from "./fixtures.ts";
import { startPostsWorld, type PostsWorld } from "./helpers.ts";

let w: PostsWorld;
let bluesky: BlueskyFake;
let a: ReturnType<typeof api>;
const to: Record<string, { destination_id: string }> = {};

beforeAll(async () => {
  w = await startPostsWorld(X_APP_ENV);
  bluesky = await startBlueskyFake();
  a = api(w.s, w.ws);
  to.bluesky = { destination_id: await connectBluesky(w.s, bluesky, w.ws) };
  to.x = { destination_id: await insertXDestination(w.s, w.ws) };
  to.mastodon = { destination_id: w.destinationId };
});
afterAll(async () => {
  await w.stop();
  await bluesky.stop();
  removeTempDirs();
});

let groups = 0;
/** A Create Post body of one post (`target`: a destination or a bare channel) at `when`. */
function request(target: Record<string, string>, post: Record<string, unknown>, when = "draft") {
  return {
    when,
    ...(when === "draft" ? {} : { confirmed: true }),
    group: `warn-${++groups}`,
    posts: [{ ...target, body: ["hello"], ...post }],
  };
}

/** The four cases of the issue, each by destination and by bare channel. */
const cases: {
  name: string;
  channel: string;
  post: () => Promise<Record<string, unknown>>;
  pointer: string;
  detail: string;
}[] = [
  {
    name: "a 600-character Bluesky post",
    channel: "bluesky",
    post: async () => ({ body: ["b".repeat(600)] }),
    pointer: "/posts/0/body/0",
    detail: "text is 600 characters; Bluesky allows 300",
  },
  {
    name: "30,000 characters on X",
    channel: "x",
    post: async () => ({ body: ["x".repeat(30_000)] }),
    pointer: "/posts/0/body/0",
    detail:
      "text is at least 30000 characters as X counts them (CJK characters and emoji count 2); X allows 280",
  },
  {
    name: "an Instagram post without media",
    channel: "instagram",
    post: async () => ({ body: ["only words"] }),
    pointer: "/posts/0/body/0",
    detail: "an Instagram post needs an image or a video; text alone cannot be published",
  },
  {
    name: "a Bluesky image without alt text",
    channel: "bluesky",
    post: async () => ({ media: [await insertAsset(w.s, w.ws)] }),
    pointer: "/posts/0/media/0",
    detail: "every image needs alt text on Bluesky (destination_options.bluesky.alt_text_by_asset_id)",
  },
];

describe("the four cases of the issue: valid as drafts, with what publishing would refuse", () => {
  for (const c of cases) {
    for (const by of ["channel", "destination"] as const) {
      if (by === "destination" && !to[c.channel]) continue;
      test(`${c.name}, by ${by}`, async () => {
        const target = by === "channel" ? { channel: c.channel } : to[c.channel]!;
        const post = await c.post();
        const dry = ok(await a.validate(request(target, post)), 200).body;
        expect(dry).toEqual({
          object: "post_validation",
          valid: true,
          errors: [],
          warnings: [
            { pointer: c.pointer, code: "public_unpublishable", detail: c.detail, channel: c.channel },
          ],
          lengths: expect.any(Array),
        });
        // The draft is still accepted and stored as it is.
        const created = ok(await a.create(request(target, post))).body.posts[0];
        expect(created.state).toBe("draft");
        if (by === "channel") return;
        // Publishing refuses exactly what the warnings said.
        const now = ok(await a.validate(request(target, post, "now")), 200).body;
        expect(now.valid).toBe(false);
        expect(now.warnings).toEqual([]);
        expect(now.errors).toEqual(dry.warnings);
      });
    }
  }

  test("a draft within every limit has no warnings", async () => {
    const dry = ok(await a.validate(request(to.bluesky!, { body: ["fine"] })), 200).body;
    expect(dry).toEqual({
      object: "post_validation",
      valid: true,
      errors: [],
      warnings: [],
      lengths: expect.any(Array),
    });
  });

  test("errors of the request stay errors; only what publishing would refuse is a warning", async () => {
    const dry = ok(
      await a.validate(request({ channel: "bluesky" }, { body: ["b".repeat(301)], media: ["ast_missing"] })),
      200,
    ).body;
    expect(dry.valid).toBe(false);
    expect(dry.errors).toEqual([
      {
        pointer: "/posts/0/media/0",
        code: "public_unpublishable",
        detail: "no asset ast_missing in this workspace",
        channel: "bluesky",
      },
    ]);
    expect(dry.warnings.map((w: { pointer: string }) => w.pointer)).toEqual(["/posts/0/body/0"]);
  });
});

describe("every network's limits, for a draft that names only its channel", () => {
  for (const rules of NETWORK_RULES) {
    const limit = rules.defaultLimits.maxCharacters;
    test(`${rules.channel}: ${limit + 1} characters is a warning, the draft valid`, async () => {
      const dry = ok(
        await a.validate(request({ channel: rules.channel }, { body: ["a".repeat(limit + 1)] })),
        200,
      ).body;
      expect(dry.valid).toBe(true);
      const warning = dry.warnings.find((w: { pointer: string }) => w.pointer === "/posts/0/body/0");
      expect(warning).toMatchObject({ code: "public_unpublishable", channel: rules.channel });
      // Networks that need media say that first ("text alone cannot be …"); every other one names the length.
      if (!/text alone/.test(warning.detail)) expect(warning.detail).toContain(`${limit}`);
    });
  }
});

describe("herald posts validate --when draft", () => {
  test("prints valid as a draft and each warning; exit 0", async () => {
    const env = {
      HERALD_API_URL: w.s.url,
      HERALD_API_KEY: w.s.owner.apiKey,
      HERALD_CONFIG_DIR: `${tempDir()}/config`,
    };
    const long = "b".repeat(600);
    const r = await herald(["posts", "validate", long, "--channel", "instagram", "--when", "draft"], env);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const table = cells(r.stdout);
    expect(table[0]).toEqual(["valid as a draft, but publishing the post would be refused (warnings):"]);
    expect(table[1]).toEqual(["POINTER", "CHANNEL", "CODE", "DETAIL"]);
    expect(table[2]).toEqual([
      "/posts/0/body/0",
      "instagram",
      "public_unpublishable",
      "an Instagram post needs an image or a video; text alone cannot be published",
    ]);
    expect(table).toHaveLength(3);
  });
});

describe("lengths: each item's text by its network's own counts (the composer's counters)", () => {
  const length = (
    pointer: string,
    channel: string,
    destination: string | null,
    used: number,
    limit: number,
  ) => ({
    pointer,
    channel,
    destination_id: destination,
    used,
    limit,
    unit: "characters",
  });

  test("per destination and item: graphemes and bytes on Bluesky, X's weights, URLs as 23 on Mastodon", async () => {
    const second = `${"a".repeat(290)} 漢字`;
    const body = ["hello 👋🏽", second, "see https://example.com/a/very/long/path/that/counts/as/23"];
    const posts = [to.bluesky!, to.x!, to.mastodon!].map((target) => ({ ...target, body }));
    const dry = ok(
      await a.validate({ when: "now", confirmed: true, group: `len-${++groups}`, posts }),
      200,
    ).body;
    const [bsky, x, masto] = [to.bluesky!, to.x!, to.mastodon!].map((t) => t.destination_id);
    expect(dry.lengths).toEqual([
      length("/posts/0/body/0", "bluesky", bsky!, 7, 300),
      { ...length("/posts/0/body/0", "bluesky", bsky!, 14, 3000), unit: "bytes" },
      length("/posts/0/body/1", "bluesky", bsky!, 293, 300),
      { ...length("/posts/0/body/1", "bluesky", bsky!, 297, 3000), unit: "bytes" },
      length("/posts/0/body/2", "bluesky", bsky!, 58, 300),
      { ...length("/posts/0/body/2", "bluesky", bsky!, 58, 3000), unit: "bytes" },
      length("/posts/1/body/0", "x", x!, 8, 280),
      length("/posts/1/body/1", "x", x!, 295, 280),
      length("/posts/1/body/2", "x", x!, 27, 280),
      length("/posts/2/body/0", "mastodon", masto!, 7, 500),
      length("/posts/2/body/1", "mastodon", masto!, 293, 500),
      length("/posts/2/body/2", "mastodon", masto!, 27, 500),
    ]);
    // The counter and the refusal say the same number: one count, not two.
    const xOver = dry.errors.find(
      (e: { pointer: string; detail: string }) =>
        e.pointer === "/posts/1/body/1" && e.detail.includes("as X counts them"),
    );
    expect(xOver.detail).toContain("text is 295 characters");
  });

  test("a draft naming only its channel is counted against the network's default limits", async () => {
    const dry = ok(await a.validate(request({ channel: "bluesky" }, { body: ["b".repeat(301)] })), 200).body;
    expect(dry.valid).toBe(true);
    expect(dry.lengths).toEqual([
      length("/posts/0/body/0", "bluesky", null, 301, 300),
      { ...length("/posts/0/body/0", "bluesky", null, 301, 3000), unit: "bytes" },
    ]);
    expect(dry.warnings[0].detail).toBe("text is 301 characters; Bluesky allows 300");
  });

  test("a request refused for other reasons is still counted; an unknown destination is not", async () => {
    const dry = ok(
      await a.validate({
        when: "now",
        group: `len-${++groups}`,
        posts: [
          { ...to.mastodon!, body: ["four"] },
          { destination_id: "dest_nope", body: ["x"] },
        ],
      }),
      200,
    ).body;
    expect(dry.valid).toBe(false);
    expect(dry.errors.map((e: { pointer: string }) => e.pointer)).toContain("/confirmed");
    expect(dry.lengths).toEqual([length("/posts/0/body/0", "mastodon", to.mastodon!.destination_id, 4, 500)]);
  });
});
