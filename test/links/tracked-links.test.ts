// Tracked links (issue 31) through the real server and HTTP: the workspace's settings, posts whose
// URLs are published as short links (Bluesky facets too), the same codes on retries and after a
// crash, the per-post opt-out, the redirect with UTM parameters, clicks counted exactly under
// concurrent requests, analytics' link_clicks, and the length rules judged on the text as sent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { inTransaction } from "../../src/db/transaction.ts";
import { PublishingEngine } from "../../src/modules/publishing/engine.ts";
import { expectProblem } from "../helpers/problems.ts";
import { screenOf } from "../helpers/screen.ts";
import { tables } from "../helpers/tables.ts";
import { getPost, idem } from "../posts/helpers.ts";
import { onNth, startEngineWorld, waitFor, type EngineWorld } from "../posts/engine-helpers.ts";

let w: EngineWorld;
beforeAll(async () => {
  w = await startEngineWorld({ HERALD_PROVIDER_TIMEOUT_SECONDS: "1" });
});
afterAll(async () => {
  await w.stop();
});

const run = () => w.s.server.engine.runUntilIdle();
const workspacePath = () => `/v1/workspaces/${w.ws}`;
const patchTracking = (link_tracking: unknown) =>
  w.s.request("PATCH", workspacePath(), { body: { link_tracking } });
const SHORT = () =>
  new RegExp(`${w.s.herald.config.baseUrl.replace(/[.]/g, "\\.")}/l/([0-9A-Za-z]{10})`, "g");
const codesIn = (text: string) => [...text.matchAll(SHORT())].map((m) => m[1]!);
const recordWith = (marker: string) => w.bluesky.records.filter((r) => r.record.text.includes(marker));
const links = async (postId: string) => {
  const r = await w.s.request("GET", `${workspacePath()}/posts/${postId}/links`);
  expect(r.status).toBe(200);
  return r.body.data as any[];
};
let groups = 0;
async function create(destinationId: string, body: string[], extra: Record<string, unknown> = {}) {
  const r = await w.s.request("POST", `${workspacePath()}/posts`, {
    body: {
      when: "now",
      confirmed: true,
      group: `links-${++groups}`,
      posts: [{ destination_id: destinationId, body, ...extra }],
    },
    headers: idem(),
  });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 202 });
  return r.body.posts[0];
}
/** GET (or HEAD) a short link without following the redirect. */
const follow = (code: string, method = "GET") =>
  fetch(`${w.s.url}/l/${code}`, { method, redirect: "manual" });

describe("the workspace's link_tracking", () => {
  test("off by default; PATCH merges the fields sent", async () => {
    const before = await w.s.request("GET", workspacePath());
    expect(before.body.link_tracking).toEqual({
      enabled: false,
      utm_source: null,
      utm_medium: null,
      utm_campaign: null,
    });
    const on = await patchTracking({ enabled: true });
    expect(on.status).toBe(200);
    expect(on.body.link_tracking).toEqual({
      enabled: true,
      utm_source: null,
      utm_medium: null,
      utm_campaign: null,
    });
    const presets = await patchTracking({
      utm_source: " herald ",
      utm_medium: "social",
      utm_campaign: "launch",
    });
    expect(presets.body.link_tracking).toEqual({
      enabled: true,
      utm_source: "herald",
      utm_medium: "social",
      utm_campaign: "launch",
    });
    const cleared = await patchTracking({ utm_medium: null });
    expect(cleared.body.link_tracking).toMatchObject({
      enabled: true,
      utm_source: "herald",
      utm_medium: null,
    });
    const back = await patchTracking({ utm_medium: "social" });
    expect(back.body.link_tracking.utm_medium).toBe("social");
    expect((await w.s.request("GET", workspacePath())).body.link_tracking).toEqual(back.body.link_tracking);
  });

  test("bad values are refused with pointers, nothing stored", async () => {
    const stored = (await w.s.request("GET", workspacePath())).body.link_tracking;
    expectProblem(await patchTracking({ utm_source: "   " }), 400, "public_invalid_request", [
      "/link_tracking/utm_source",
    ]);
    expectProblem(await patchTracking({ utm_campaign: "a\u0007b" }), 400, "public_invalid_request", [
      "/link_tracking/utm_campaign",
    ]);
    expectProblem(await patchTracking({ enabled: "yes" }), 400, "public_invalid_request", [
      "/link_tracking/enabled",
    ]);
    expectProblem(await patchTracking({ utm_term: "x" }), 400, "public_invalid_request");
    expectProblem(await patchTracking({ utm_medium: "m".repeat(101) }), 400, "public_invalid_request", [
      "/link_tracking/utm_medium",
    ]);
    expectProblem(await patchTracking({}), 400, "public_invalid_request");
    expect((await w.s.request("GET", workspacePath())).body.link_tracking).toEqual(stored);
  });
});

describe("publishing with tracked links", () => {
  test("Bluesky receives the short URL in the text and in the link facet; the post lists it", async () => {
    const body = ["Read bsky-one https://example.com/guide?ref=a#part and tell us."];
    const created = await create(w.blueskyId, body);
    expect(created.link_tracking).toBe(true);
    await run();
    const post = await getPost(w, created.id);
    expect(post.state).toBe("published");
    expect(post.payload.body).toEqual(body); // the post keeps what was written
    const [record] = recordWith("bsky-one");
    expect(record!.record.text).not.toContain("example.com");
    const [code] = codesIn(record!.record.text);
    const short = `${w.s.herald.config.baseUrl}/l/${code}`;
    expect(record!.record.text).toBe(`Read bsky-one ${short} and tell us.`);
    const uris = (record!.record.facets ?? []).flatMap((f: any) => f.features.map((x: any) => x.uri));
    expect(uris).toEqual([short]);
    expect(await links(created.id)).toEqual([
      {
        object: "tracked_link",
        code,
        short_url: short,
        url: "https://example.com/guide?ref=a#part",
        target:
          "https://example.com/guide?ref=a&utm_source=herald&utm_medium=social&utm_campaign=launch#part",
        clicks: 0,
        created_at: expect.any(String),
      },
    ]);
  });

  test("Mastodon: one code per URL of the post, the same URL in two items shares it", async () => {
    const body = ["masto-two https://example.org/a and https://example.org/b", "again https://example.org/a"];
    const created = await create(w.destinationId, body);
    await run();
    const statuses = w.mastodon.statuses.filter(
      (s) => s.text.includes("masto-two") || s.text.startsWith("again"),
    );
    const listed = await links(created.id);
    expect(listed.map((l) => l.url)).toEqual(["https://example.org/a", "https://example.org/b"]);
    const [a, b] = listed.map((l) => l.short_url);
    expect(statuses.slice(-2).map((s) => s.text)).toEqual([`masto-two ${a} and ${b}`, `again ${a}`]);
  });

  test("a post with link_tracking: false is published as written and has no links", async () => {
    const body = ["opt-out https://example.com/as-written"];
    const created = await create(w.blueskyId, body, { link_tracking: false });
    expect(created.link_tracking).toBe(false);
    await run();
    expect(recordWith("opt-out")[0]!.record.text).toBe(body[0]);
    expect(await links(created.id)).toEqual([]);
  });

  test("a transient failure is retried with the same short URL", async () => {
    w.bluesky.failNext(1, { path: "createRecord", status: 503 });
    const created = await create(w.blueskyId, ["retry-same https://example.com/retry"]);
    await run();
    const waiting = await getPost(w, created.id);
    expect(waiting.state).toBe("ready");
    expect(recordWith("retry-same")).toHaveLength(0);
    const [link] = await links(created.id);
    w.s.clock.set(Date.parse(waiting.next_action_at) + 1000);
    await run();
    expect((await getPost(w, created.id)).state).toBe("published");
    const sent = recordWith("retry-same");
    expect(sent.map((r) => r.record.text)).toEqual([`retry-same ${link.short_url}`]);
    expect((await links(created.id)).map((l) => l.code)).toEqual([link.code]);
  });

  test("a publisher died after item 1 was stored: the recovery finds it (same text), item 2 sent once", async () => {
    const body = ["crash-one https://example.com/c1", "crash-two https://example.com/c2"];
    const created = await create(w.blueskyId, body);
    onNth(w.bluesky, "createRecord", 1, () => (w.bluesky.hangAfterReceive = true));
    const other = new PublishingEngine(w.s.herald);
    await other.tick();
    other.stop();
    await waitFor("item 1 on the PDS", () => (recordWith("crash-one").length > 0 ? true : undefined));
    w.bluesky.hangAfterReceive = false;
    w.s.clock.advance(w.s.herald.config.engine.leaseMs + 1000);
    await run();
    const post = await getPost(w, created.id, true);
    expect(post.state).toBe("published");
    const [l1, l2] = await links(created.id);
    // The record of the dead run holds the same code the recovery compared it with.
    expect(recordWith("crash-one").map((r) => r.record.text)).toEqual([`crash-one ${l1.short_url}`]);
    expect(recordWith("crash-two").map((r) => r.record.text)).toEqual([`crash-two ${l2.short_url}`]);
    await other.drain();
  });
});

describe("GET /l/{code}", () => {
  let code: string;
  let postId: string;
  beforeAll(async () => {
    const created = await create(w.blueskyId, [
      "redirect https://shop.example/item?utm_source=newsletter&q=a%20b#reviews",
    ]);
    postId = created.id;
    await run();
    code = (await links(postId))[0].code;
  });

  test("302 to the URL with the UTM presets; its own parameters and fragment kept; not cached", async () => {
    const r = await follow(code);
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toBe(
      "https://shop.example/item?utm_source=newsletter&q=a%20b&utm_medium=social&utm_campaign=launch#reviews",
    );
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
    expect(r.headers.get("set-cookie")).toBeNull();
    expect((await links(postId))[0].clicks).toBe(1);
  });

  test("HEAD answers the same redirect and is not counted", async () => {
    const before = (await links(postId))[0].clicks;
    const r = await follow(code, "HEAD");
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toContain("https://shop.example/item?");
    expect((await links(postId))[0].clicks).toBe(before);
  });

  test("50 concurrent clicks are all counted", async () => {
    const before = (await links(postId))[0].clicks;
    const answers = await Promise.all(Array.from({ length: 50 }, () => follow(code)));
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(302));
    expect((await links(postId))[0].clicks).toBe(before + 50);
  });

  test("an unknown code is a 404 page in the site's style", async () => {
    for (const unknown of ["ZZZZZZZZZZ", "short", "bad-code!!"]) {
      const r = await follow(unknown);
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toContain("text/html");
      const screen = screenOf(await r.text());
      expect(screen.namesOf("heading", { level: 1 })).toEqual(["This link does not exist"]);
      expect(screen.getByRole("link", { name: "Herald" })).toBeDefined();
    }
  });

  test("analytics: the clicks are the post's link_clicks where the network reports none", async () => {
    const clicks = (await links(postId))[0].clicks;
    const group = (await getPost(w, postId)).group;
    const r = await w.s.request("GET", `${workspacePath()}/analytics/post-groups/${group}`);
    expect(r.status).toBe(200);
    expect(r.body.posts[0].metrics.link_clicks).toBe(clicks);
    expect(r.body.totals.link_clicks).toEqual({
      value: clicks,
      coverage: { total_posts: 1, fetched_posts: 1, failed_posts: 0 },
    });
    const series = await w.s.request(
      "GET",
      `${workspacePath()}/analytics/posts?from=2026-02-28&until=2026-03-31&bucket=week`,
    );
    expect(series.status).toBe(200);
    const total = series.body.series.reduce((sum: number, b: any) => sum + b.metrics.link_clicks, 0);
    expect(total).toBeGreaterThanOrEqual(clicks);
  });

  test("analytics: a network that reports link clicks keeps its own number", async () => {
    const { postAnalytics } = tables;
    await inTransaction(w.s.herald.db, (tx) =>
      tx
        .update(postAnalytics)
        .set({
          state: "fresh",
          fetchedAt: w.s.clock.now(),
          offered: ["link_clicks"],
          metrics: {
            views: 0,
            impressions: 0,
            comments: 0,
            reactions: 0,
            shares: 0,
            saves: 0,
            link_clicks: 7,
          },
        })
        .where(eq(postAnalytics.postId, postId)),
    );
    const group = (await getPost(w, postId)).group;
    const r = await w.s.request("GET", `${workspacePath()}/analytics/post-groups/${group}`);
    expect(r.body.posts[0].metrics.link_clicks).toBe(7);
    expect(r.body.totals.link_clicks.value).toBe(7);
  });
});

describe("length rules judge the text as sent", () => {
  const check = (body: string[], extra: Record<string, unknown> = {}) =>
    w.s.request("POST", `${workspacePath()}/posts`, {
      body: {
        when: "now",
        confirmed: true,
        group: `len-${++groups}`,
        posts: [{ destination_id: w.blueskyId, body, ...extra }],
      },
      headers: idem(),
    });

  test("Bluesky: a long URL that is short once tracked is accepted; a short one that grows past 300 is refused", async () => {
    const longUrl = `https://example.com/${"p".repeat(300)}`;
    expect((await check([`long ${longUrl}`])).status).toBe(202);
    expectProblem(await check([`long ${longUrl}`], { link_tracking: false }), 422, "public_unpublishable", [
      "/posts/0/body/0",
    ]);
    const grows = `${"g".repeat(280)} https://a.co`;
    expectProblem(await check([grows]), 422, "public_unpublishable", ["/posts/0/body/0"]);
    expect((await check([grows], { link_tracking: false })).status).toBe(202);
  });

  test("the validation's counters count the short URL", async () => {
    const r = await w.s.request("POST", `${workspacePath()}/posts/validate`, {
      body: {
        when: "now",
        confirmed: true,
        group: `len-${++groups}`,
        posts: [{ destination_id: w.blueskyId, body: [`x https://example.com/${"c".repeat(400)}`] }],
      },
    });
    expect(r.status).toBe(200);
    const short = `${w.s.herald.config.baseUrl}/l/0123456789`;
    const graphemes = r.body.lengths.find((l: any) => l.unit === "characters");
    expect(graphemes).toMatchObject({ pointer: "/posts/0/body/0", used: 2 + short.length, limit: 300 });
  });

  test("Mastodon counts every URL as 23 either way", async () => {
    const text = `${"m".repeat(470)} https://example.com/${"q".repeat(200)}`;
    const r = await w.s.request("POST", `${workspacePath()}/posts`, {
      body: {
        when: "now",
        confirmed: true,
        group: `len-${++groups}`,
        posts: [{ destination_id: w.destinationId, body: [text] }],
      },
      headers: idem(),
    });
    expect(r.status).toBe(202);
  });
});

describe("unknown codes are limited per address, valid ones never", () => {
  test("past 30 unknown codes a minute: a 429 page; a valid code still redirects", async () => {
    w.s.clock.advance(60_000); // a window of its own
    const statuses: number[] = [];
    for (let i = 0; i < 32; i++) statuses.push((await follow(`Unknown${String(i).padStart(3, "0")}`)).status);
    expect(statuses).toEqual([...Array(30).fill(404), 429, 429]);
    const limited = await follow("UnknownXYZ");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("60");
    expect(screenOf(await limited.text()).namesOf("heading", { level: 1 })).toEqual([
      "Too many unknown links",
    ]);
    const created = await create(w.blueskyId, ["limited https://example.com/still-works"]);
    await run();
    const [link] = await links(created.id);
    expect((await follow(link.code)).status).toBe(302);
  });
});
