// The per-network previews, read as a person reads them (test/helpers/screen.ts): one scenario per
// network, then the mistakes previews.md lists (counting, cards that will not exist, full-length links,
// no fold, LinkedIn's reserved characters, mentions that stay text).
import { describe, expect, test } from "bun:test";
import type { Element } from "domhandler";
import { DomUtils } from "htmlparser2";
import {
  renderPreview,
  type PreviewInput,
  type PreviewItem,
  type PreviewMedia,
} from "../../src/http/previews/index.ts";
import { attributeOf, screenOf, textOf, type Screen } from "../helpers/screen.ts";

const AUTHOR = { name: "Ada Lovelace", handle: "ada", avatarUrl: null };
const AT = "2026-11-28T10:00:00.000Z";

const image = (alt: string | null, n = 1): PreviewMedia => ({
  kind: "image",
  url: `/media/${n}.png`,
  alt,
  width: 1200,
  height: 675,
});
const video = (width = 1920, height = 1080): PreviewMedia => ({
  kind: "video",
  url: "/media/clip.mp4",
  alt: null,
  width,
  height,
});

function preview(provider: string, items: PreviewItem[], options: Record<string, unknown> = {}): Screen {
  const input: PreviewInput = { provider, author: AUTHOR, items, options, at: AT };
  return screenOf(`<!doctype html><html><body><main>${renderPreview(input).text}</main></body></html>`);
}

/** The preview's region, named for the network, and its posts. */
function region(screen: Screen, network: string) {
  const section = screen.getByRole("region", { name: `${network} preview` });
  const inside = screen.within(section);
  return { section, inside, posts: inside.getAllByRole("article") };
}

const names = (screen: Screen, role: string) => screen.namesOf(role);
const text = (el: Element) => textOf(el);

interface Scenario {
  provider: string;
  network: string;
  items: PreviewItem[];
  options?: Record<string, unknown>;
  check(s: Screen, posts: Element[]): void;
}

const SCENARIOS: Scenario[] = [
  {
    provider: "x",
    network: "X",
    items: [
      {
        body: "Launch day @grace #shipit $HRLD",
        media: [image("Dashboard", 1), image("Chart", 2), image(null, 3)],
      },
      { body: "Second in the thread", media: [] },
    ],
    check(s, posts) {
      expect(posts.map((p) => s.nameOf(p))).toEqual(["X post 1 of 2", "X post 2 of 2"]);
      const first = s.within(posts[0]!);
      expect(first.text()).toContain("Ada Lovelace @ada");
      expect(first.text()).toContain("28 Nov 2026, 10:00 UTC");
      expect(first.namesOf("img")).toEqual(["Dashboard", "Chart", "Image 3 of 3, no alt text"]);
      // "ALT" on the two images that have alt text, as X shows it.
      expect(first.text().match(/\bALT\b/g)?.length).toBe(2);
      expect(first.getAllByRole("list", { name: "3 media" })).toHaveLength(1);
      expect(first.text()).toContain("Launch day @grace #shipit $HRLD");
      expect(s.within(posts[1]!).text()).toContain("Second in the thread");
    },
  },
  {
    provider: "bluesky",
    network: "Bluesky",
    items: [
      {
        body: "Read https://example.com/a/long/path/indeed and ping @grace.bsky.social #herald",
        media: [image("A cat")],
      },
    ],
    options: { content_labels: ["nudity"] },
    check(s) {
      // The link as Herald sends it: its full text, linked through the facet.
      expect(s.namesOf("link")).toEqual(["https://example.com/a/long/path/indeed"]);
      expect(s.text()).toContain("@grace.bsky.social");
      expect(s.text()).toContain("Content warning: Non-sexual nudity");
      expect(s.namesOf("img")).toEqual(["A cat"]);
      expect(s.text()).toContain("ALT");
      expect(s.queryByRole("group", { name: /Link card/ })).toBeNull();
    },
  },
  {
    provider: "mastodon",
    network: "Mastodon",
    items: [
      {
        body: "Notes at https://www.example.org/a/very/long/path/to/the/notes.html cc @bob@fosstodon.org",
        media: [],
      },
    ],
    check(s) {
      expect(s.namesOf("link")).toEqual(["example.org/a/very/long/path/t…"]);
      expect(s.getByRole("group", { name: "Link card for example.org" })).toBeDefined();
      expect(s.text()).toContain("@bob@fosstodon.org");
    },
  },
  {
    provider: "threads",
    network: "Threads",
    items: [
      {
        body: "A carousel #first #second",
        media: [image("One", 1), image("Two", 2), image("Three", 3), image("Four", 4), image("Five", 5)],
      },
    ],
    options: { reply_control: "mentioned_only" },
    check(s) {
      // A carousel: every image, to swipe through (not cut at four).
      expect(s.namesOf("img")).toEqual(["One", "Two", "Three", "Four", "Five"]);
      expect(s.getByRole("list", { name: "5 media, side by side" })).toBeDefined();
      expect(s.text()).toContain("ada");
      expect(s.text()).toContain("Only profiles mentioned can reply.");
      expect(s.text()).not.toContain("ALT");
    },
  },
  {
    provider: "facebook",
    network: "Facebook",
    items: [
      {
        body: "We are live. ".repeat(50),
        media: [image("1", 1), image("2", 2), image("3", 3), image("4", 4), image("5", 5), image("6", 6)],
      },
    ],
    check(s) {
      expect(s.getByRole("group", { name: "See more" })).toBeDefined();
      // Four tiles, the last saying how many more.
      expect(s.namesOf("img")).toEqual(["1", "2", "3", "4"]);
      expect(s.text()).toContain("+2");
      expect(s.text()).toContain("Public");
    },
  },
  {
    provider: "instagram",
    network: "Instagram",
    items: [
      {
        body:
          "Sunset over the bay with @friend.one #sunset — more at https://example.com/gallery " +
          "for everyone who asked about it yesterday and the day before, thank you all",
        media: [image("Sunset")],
      },
    ],
    check(s) {
      // Links in captions are not clickable; the caption folds with "more".
      expect(s.namesOf("link")).toEqual([]);
      expect(s.getByRole("group", { name: "more" })).toBeDefined();
      expect(s.namesOf("img")).toEqual(["Sunset"]);
    },
  },
  {
    provider: "linkedin",
    network: "LinkedIn",
    items: [{ body: "Hiring! (remote) [senior] @Grace <3 #hiring", media: [] }],
    options: { visibility: "connections", allow_resharing: false },
    check(s) {
      // Reserved characters are escaped when sent, so LinkedIn shows them as written.
      expect(s.text()).toContain("Hiring! (remote) [senior] @Grace <3 #hiring");
      expect(s.text()).toContain("Connections only");
      expect(s.text()).toContain("Resharing is turned off.");
      expect(s.queryByRole("group", { name: "…see more" })).toBeNull();
    },
  },
  {
    provider: "tiktok",
    network: "TikTok",
    items: [{ body: "Behind the scenes #bts", media: [video(1080, 1920)] }],
    options: { privacy_level: "FOLLOWER_OF_CREATOR", disable_comment: false },
    check(s) {
      expect(s.getByRole("region", { name: "TikTok preview" })).toBeDefined();
      expect(s.elements("video")).toHaveLength(1);
      expect(attributeOf(s.elements("video")[0]!, "autoplay")).toBeUndefined();
      expect(s.text()).toContain("@ada");
      expect(s.text()).toContain("Who can see it: Followers.");
      expect(s.text()).toContain("Turned off: duets, stitches.");
    },
  },
  {
    provider: "youtube",
    network: "YouTube",
    items: [
      {
        body: "How Herald schedules posts\nA walk through the queue. #herald #howto\nhttps://example.com/docs",
        media: [video()],
      },
    ],
    options: { privacy_status: "unlisted" },
    check(s) {
      expect(s.text()).toContain("How Herald schedules posts");
      expect(s.text()).toContain("Unlisted");
      expect(s.elements("video")).toHaveLength(1);
      expect(s.namesOf("link")).toEqual(["https://example.com/docs"]);
      const tags = s.elements("p").find((p) => attributeOf(p, "class") === "pv-tags");
      expect(text(tags!)).toBe("#herald #howto");
    },
  },
];

describe("renderPreview, per network", () => {
  for (const scenario of SCENARIOS)
    test(`${scenario.network}: what a person sees`, () => {
      const s = preview(scenario.provider, scenario.items, scenario.options);
      const { inside, posts } = region(s, scenario.network);
      // Every card says it is a preview (a draft, not a post that exists), and has no network logo.
      expect(inside.text()).toContain("Preview");
      expect(names(s, "img").some((n) => /logo/i.test(n))).toBe(false);
      // No external assets: the avatar is the initials box.
      const initials = inside
        .elements("span")
        .filter((el) => attributeOf(el, "class")?.startsWith("pv-avatar"));
      expect(initials.length).toBe(posts.length);
      for (const box of initials) expect(DomUtils.textContent(box)).toMatch(/^AL?$/);
      scenario.check(s, posts);
    });
});

describe("the common preview mistakes", () => {
  test("text and attributes are escaped", () => {
    const s = preview("mastodon", [
      { body: `<script>alert(1)</script> "quoted" & more`, media: [image(`"><img src=x>`)] },
    ]);
    expect(s.elements("script")).toHaveLength(0);
    expect(s.text()).toContain(`<script>alert(1)</script> "quoted" & more`);
    expect(s.namesOf("img")).toEqual([`"><img src=x>`]);
  });

  test("folds count user-perceived characters, not UTF-16 units (X folds at 280)", () => {
    // 280 family emoji (11 UTF-16 units each) show whole; the 281st folds.
    const family = "👨‍👩‍👧‍👦";
    expect(
      preview("x", [{ body: family.repeat(280), media: [] }]).queryByRole("group", { name: "Show more" }),
    ).toBeNull();
    const s = preview("x", [{ body: family.repeat(281), media: [] }]);
    expect(s.getByRole("group", { name: "Show more" })).toBeDefined();
  });

  test("no card Herald will not create: Bluesky and LinkedIn show links without a card", () => {
    for (const provider of ["bluesky", "linkedin"])
      expect(
        preview(provider, [{ body: "See https://example.com", media: [] }]).queryByRole("group", {
          name: /Link card/,
        }),
      ).toBeNull();
  });

  test("cards the network adds are shown: Facebook's link option, Mastodon's and Threads' first link", () => {
    expect(
      preview("facebook", [{ body: "Our news", media: [] }], {
        link: "https://news.example.com/a",
      }).getByRole("group", {
        name: "Link card for news.example.com",
      }),
    ).toBeDefined();
    expect(
      preview("threads", [{ body: "Read https://example.net/x", media: [] }]).getByRole("group", {
        name: "Link card for example.net",
      }),
    ).toBeDefined();
  });

  test("never a card and media together (Mastodon, Facebook, Threads)", () => {
    for (const provider of ["mastodon", "facebook", "threads"]) {
      const s = preview(provider, [{ body: "See https://example.com", media: [image("Photo")] }], {
        link: undefined,
      });
      expect(s.queryByRole("group", { name: /Link card/ })).toBeNull();
      expect(s.namesOf("img")).toEqual(["Photo"]);
    }
  });

  test("links shortened where the network shortens them, whole where Herald sends them whole", () => {
    const body = "https://example.com/a/very/long/path/that/keeps/going";
    expect(preview("x", [{ body, media: [] }]).namesOf("link")).toEqual(["example.com/a/very/long/p…"]);
    expect(preview("mastodon", [{ body, media: [] }]).namesOf("link")).toEqual([
      "example.com/a/very/long/path/t…",
    ]);
    expect(preview("bluesky", [{ body, media: [] }]).namesOf("link")).toEqual([body]);
    // Each keeps the full address as its target.
    expect(attributeOf(preview("x", [{ body, media: [] }]).getByRole("link"), "href")).toBe(body);
  });

  test("folds where the network folds, with its own words", () => {
    const long = `${"word ".repeat(60)}end`;
    const cases: [string, string | null][] = [
      ["linkedin", "…see more"],
      ["instagram", "more"],
      ["facebook", null],
      ["x", "Show more"],
      ["mastodon", null],
    ];
    for (const [provider, more] of cases) {
      const s = preview(provider, [{ body: long, media: provider === "instagram" ? [image("x")] : [] }]);
      const folds = s.getAllByRole("group").filter((g) => g.name === "details");
      expect({ provider, fold: folds.map((g) => s.nameOf(g)) }).toEqual({
        provider,
        fold: more ? [more] : [],
      });
    }
    // LinkedIn folds after three lines even when they are short.
    const lines = preview("linkedin", [{ body: "one\ntwo\nthree\nfour", media: [] }]);
    expect(lines.getByRole("group", { name: "…see more" })).toBeDefined();
    // The folded text is all there, behind the summary.
    expect(lines.text()).toContain("four");
  });

  test("mentions are entities only where the network makes them", () => {
    const body = "Thanks @grace for the help";
    const highlighted = (provider: string) =>
      preview(provider, [{ body, media: provider === "instagram" ? [image("x")] : [] }])
        .elements("span")
        .filter((el) => attributeOf(el, "class") === "pv-entity")
        .map(text);
    expect(highlighted("x")).toEqual(["@grace"]);
    // X usernames are 1–15 ASCII letters, digits or underscores.
    const x = preview("x", [{ body: "hi @élodie and @a_name_that_is_too_long", media: [] }]);
    expect(x.elements("span").filter((el) => attributeOf(el, "class") === "pv-entity")).toHaveLength(0);
    expect(highlighted("mastodon")).toEqual(["@grace"]);
    expect(highlighted("instagram")).toEqual(["@grace"]);
    // Herald makes no LinkedIn or Facebook mentions; Bluesky links only handles (name.domain).
    expect(highlighted("linkedin")).toEqual([]);
    expect(highlighted("facebook")).toEqual([]);
    expect(highlighted("bluesky")).toEqual([]);
  });

  test("X says a link will be refused; an X thread keeps its order", () => {
    const s = preview("x", [
      { body: "one https://example.com", media: [] },
      { body: "two", media: [] },
      { body: "three", media: [] },
    ]);
    expect(s.text()).toContain("X posts from Herald cannot contain links");
    const posts = s.getAllByRole("article");
    expect(posts.map((p) => s.nameOf(p))).toEqual(["X post 1 of 3", "X post 2 of 3", "X post 3 of 3"]);
    expect(s.getAllByRole("listitem").map((li) => textOf(li).split(" ").slice(-1)[0])).toEqual([
      "example.com",
      "two",
      "three",
    ]);
  });

  test("networks of one item per post say the rest is not part of it", () => {
    const s = preview("linkedin", [
      { body: "one", media: [] },
      { body: "two", media: [] },
    ]);
    expect(s.getAllByRole("article")).toHaveLength(1);
    expect(s.text()).toContain("LinkedIn takes one item per post: the next item is not part of it.");
  });

  test("a missing file is a box named like the image; a video never plays by itself", () => {
    const s = preview("x", [
      { body: "", media: [{ kind: "video", url: null, alt: "Demo", width: null, height: null }] },
    ]);
    expect(s.namesOf("img")).toEqual(["Video: Demo"]);
    const g = preview("x", [
      { body: "gif", media: [{ kind: "gif", url: "/a.gif", alt: null, width: 1, height: 1 }] },
    ]);
    expect(g.namesOf("img")).toEqual(["GIF, no alt text"]);
    expect(g.text()).toContain("GIF");
  });

  test("an avatar of Herald's own is shown; another origin's is replaced by initials", () => {
    const own = renderPreview({
      provider: "x",
      author: { ...AUTHOR, avatarUrl: "/avatars/ada.png" },
      items: [{ body: "hi", media: [] }],
      options: {},
      at: null,
    }).text;
    expect(
      screenOf(own)
        .elements("img")
        .map((i) => attributeOf(i, "src")),
    ).toEqual(["/avatars/ada.png"]);
    const external = renderPreview({
      provider: "x",
      author: { ...AUTHOR, avatarUrl: "https://cdn.example.com/ada.png" },
      items: [{ body: "hi", media: [] }],
      options: {},
      at: null,
    }).text;
    const s = screenOf(external);
    expect(s.elements("img")).toHaveLength(0);
    expect(s.text()).toContain("Not scheduled");
  });

  test("a network Herald registers beside the nine gets the plain preview", () => {
    const s = preview("example", [{ body: "Hello https://example.com", media: [image("Pic")] }]);
    expect(s.getByRole("region", { name: "example preview" })).toBeDefined();
    expect(s.namesOf("link")).toEqual(["https://example.com"]);
  });
});
