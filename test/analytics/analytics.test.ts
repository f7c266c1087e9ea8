// Analytics through the real server with the Mastodon and Bluesky fakes: a published group starts
// `pending`, the refresh job reads the numbers on their cadence (injected clock), failures leave the
// last good numbers `stale` without holding up other destinations, coverage counts what each network
// offers, on-demand refresh is rate-limited, and the group 404s until something is published.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engineOf } from "../../src/db/engine.ts";
import { REFRESHES_PER_HOUR } from "../../src/modules/analytics/service.ts";
import { expectProblem } from "../helpers/problems.ts";
import { herald } from "../cli/helpers.ts";
import { startEngineWorld, type EngineWorld } from "../posts/engine-helpers.ts";
import { idem } from "../posts/helpers.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
let w: EngineWorld;
let n = 0;

beforeAll(async () => {
  w = await startEngineWorld();
});
afterAll(async () => {
  await w.stop();
});

/** Publishes one group now: a post per destination (each a thread of `body`); returns group and ids. */
async function publishGroup(body: string[], destinations = [w.destinationId, w.blueskyId]) {
  const group = `analytics-${++n}`;
  const r = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, {
    headers: idem(),
    body: {
      when: "now",
      confirmed: true,
      group,
      posts: destinations.map((destination_id) => ({ destination_id, body })),
    },
  });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 202 });
  await w.s.server.engine.runUntilIdle();
  return { group, ids: r.body.posts.map((p: { id: string }) => p.id) as string[] };
}

const analytics = (group: string) =>
  w.s.request("GET", `/v1/workspaces/${w.ws}/analytics/post-groups/${group}`);
const refresh = () => w.s.server.scheduler.runNow("analytics-refresh");

/** Sets the counts the fakes report for the first item of the group's posts. */
function setCounts(
  mastodonText: string,
  counts: { replies: number; likes: number; shares: number; saves: number },
) {
  const status = w.mastodon.statuses.find((s) => s.text === mastodonText)!;
  status.counts = { replies: counts.replies, favourites: counts.likes, reblogs: counts.shares, quotes: 1 };
  const record = w.bluesky.records.find((r) => r.record.text === mastodonText)!;
  record.counts = {
    replies: counts.replies,
    likes: counts.likes,
    reposts: counts.shares,
    bookmarks: counts.saves,
  };
}

describe("a published group", () => {
  test("starts pending with zeros and its first read ten minutes after publication", async () => {
    const published = w.s.clock.now();
    const { group, ids } = await publishGroup(["pending numbers"]);
    const r = await analytics(group);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: "post_group_analytics", group });
    expect(r.body.posts.map((p: any) => [p.post, p.state, p.fetched_at])).toEqual([
      [ids[0], "pending", null],
      [ids[1], "pending", null],
    ]);
    for (const p of r.body.posts) {
      expect(p.metrics).toEqual({
        views: 0,
        impressions: 0,
        comments: 0,
        reactions: 0,
        shares: 0,
        saves: 0,
        link_clicks: 0,
      });
      expect(p.next_automatic_refresh_at).toBe(new Date(published + 10 * MINUTE).toISOString());
    }
    expect(r.body.totals.comments).toEqual({
      value: 0,
      coverage: { total_posts: 2, fetched_posts: 0, failed_posts: 0 },
    });
  });

  test("the job reads both networks; coverage counts only the metrics each network offers", async () => {
    const { group } = await publishGroup(["counted numbers"]);
    setCounts("counted numbers", { replies: 2, likes: 5, shares: 3, saves: 4 });
    await refresh(); // not due yet: nothing read
    expect((await analytics(group)).body.posts.every((p: any) => p.state === "pending")).toBe(true);
    w.s.clock.advance(10 * MINUTE);
    await refresh();
    const r = await analytics(group);
    expect(r.body.posts.map((p: any) => p.state)).toEqual(["fresh", "fresh"]);
    const [mastodon, bluesky] = r.body.posts;
    // Mastodon: reblogs + quotes are shares; Bluesky adds bookmarks as saves.
    expect(mastodon.metrics).toMatchObject({ comments: 2, reactions: 5, shares: 4, saves: 0, views: 0 });
    expect(bluesky.metrics).toMatchObject({ comments: 2, reactions: 5, shares: 3, saves: 4, views: 0 });
    expect(mastodon.fetched_at).toBe(new Date(w.s.clock.now()).toISOString());
    expect(mastodon.next_automatic_refresh_at).toBe(new Date(w.s.clock.now() + HOUR).toISOString());
    expect(r.body.totals).toMatchObject({
      comments: { value: 4, coverage: { total_posts: 2, fetched_posts: 2, failed_posts: 0 } },
      shares: { value: 7, coverage: { total_posts: 2, fetched_posts: 2, failed_posts: 0 } },
      saves: { value: 4, coverage: { total_posts: 2, fetched_posts: 1, failed_posts: 0 } },
      views: { value: 0, coverage: { total_posts: 2, fetched_posts: 0, failed_posts: 0 } },
    });
    const snapshots = await engineOf(w.s.herald.db).query<{ n: number }>(
      "SELECT count(*) AS n FROM analytics_snapshots WHERE post_id IN (?, ?)",
      r.body.posts.map((p: any) => p.post),
    );
    expect(Number(snapshots[0]!.n)).toBe(2);
  });

  test("a thread counts as one post: its first item's numbers", async () => {
    const { group } = await publishGroup(["thread head", "thread reply"], [w.destinationId]);
    w.mastodon.statuses.find((s) => s.text === "thread head")!.counts = { favourites: 7 };
    w.mastodon.statuses.find((s) => s.text === "thread reply")!.counts = { favourites: 100 };
    w.s.clock.advance(10 * MINUTE);
    await refresh();
    expect((await analytics(group)).body.totals.reactions.value).toBe(7);
  });

  test("a failing network keeps its last numbers (stale) and holds up no other destination", async () => {
    const { group } = await publishGroup(["failing numbers"]);
    setCounts("failing numbers", { replies: 1, likes: 1, shares: 1, saves: 1 });
    w.s.clock.advance(10 * MINUTE);
    await refresh();
    setCounts("failing numbers", { replies: 9, likes: 9, shares: 9, saves: 9 });
    const reset = Math.ceil((w.s.clock.now() + 3 * HOUR) / 1000) * 1000;
    w.mastodon.failNext(1, {
      status: 429,
      path: "/api/v1/statuses/",
      headers: { "x-ratelimit-reset": new Date(reset).toISOString() },
    });
    w.s.clock.advance(HOUR);
    await refresh();
    const r = await analytics(group);
    const [mastodon, bluesky] = r.body.posts;
    expect(mastodon).toMatchObject({ state: "stale", metrics: { comments: 1, reactions: 1 } });
    expect(mastodon.last_error).toMatchObject({
      code: "provider_rate_limited",
      at: new Date(w.s.clock.now()).toISOString(),
    });
    expect(mastodon.next_automatic_refresh_at).toBe(new Date(reset).toISOString());
    expect(bluesky).toMatchObject({
      state: "fresh",
      metrics: { comments: 9, reactions: 9 },
      last_error: null,
    });
    expect(r.body.totals.comments).toEqual({
      value: 10,
      coverage: { total_posts: 2, fetched_posts: 2, failed_posts: 1 },
    });
    // Once the network answers again the error is gone and the numbers current.
    w.s.clock.set(reset);
    await refresh();
    expect((await analytics(group)).body.posts[0]).toMatchObject({
      state: "fresh",
      last_error: null,
      metrics: { comments: 9 },
    });
  });

  test("a post deleted on the network is reported missing; a never-read post stays pending", async () => {
    const { group } = await publishGroup(["deleted later"], [w.destinationId]);
    w.mastodon.statuses = w.mastodon.statuses.filter((s) => s.text !== "deleted later");
    w.s.clock.advance(10 * MINUTE);
    await refresh();
    const [post] = (await analytics(group)).body.posts;
    expect(post).toMatchObject({ state: "pending", last_error: { code: "provider_post_missing" } });
  });

  test("cadence: hourly for two days, then daily, the last read just before thirty days", async () => {
    const published = w.s.clock.now();
    const { group } = await publishGroup(["cadence"], [w.destinationId]);
    const next = async () => (await analytics(group)).body.posts[0].next_automatic_refresh_at;
    w.s.clock.set(published + 10 * MINUTE);
    await refresh();
    expect(await next()).toBe(new Date(published + 70 * MINUTE).toISOString());
    w.s.clock.set(published + 2 * DAY + MINUTE);
    await refresh();
    expect(await next()).toBe(new Date(published + 3 * DAY + MINUTE).toISOString());
    // The last read comes an hour before the 30-day mark (X's non-public numbers end at 30 days).
    w.s.clock.set(published + 29 * DAY + 12 * HOUR);
    await refresh();
    expect(await next()).toBe(new Date(published + 30 * DAY - HOUR).toISOString());
    w.s.clock.set(published + 30 * DAY - HOUR);
    await refresh();
    expect(await next()).toBeNull();
  });

  test("two refresh passes at once read each post once (the rows are leased)", async () => {
    const { group } = await publishGroup(["read once"], [w.destinationId]);
    w.s.clock.advance(10 * MINUTE);
    const reads = () =>
      w.mastodon.requests.filter((r) => r.method === "GET" && r.path.startsWith("/api/v1/statuses/")).length;
    const before = reads();
    await Promise.all([refresh(), refresh()]);
    expect(reads() - before).toBeGreaterThanOrEqual(1);
    const statuses = w.mastodon.requests
      .filter((r) => r.method === "GET" && r.path.startsWith("/api/v1/statuses/"))
      .slice(before);
    const id = w.mastodon.statuses.find((s) => s.text === "read once")!.id;
    expect(statuses.filter((r) => r.path.endsWith(`/${id}`))).toHaveLength(1);
    expect((await analytics(group)).body.posts[0].state).toBe("fresh");
  });
});

describe("group errors and on-demand refresh", () => {
  test("a group with no published post is 404", async () => {
    expectProblem(await analytics("no-such-group"), 404, "public_not_found");
    const draft = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, {
      headers: idem(),
      body: {
        when: "draft",
        group: "only-drafts",
        posts: [{ destination_id: w.destinationId, body: ["d"] }],
      },
    });
    expect(draft.status).toBe(201);
    expectProblem(await analytics("only-drafts"), 404, "public_not_found");
  });

  test(`refresh makes the group due now; more than ${REFRESHES_PER_HOUR} in an hour is 429 with Retry-After`, async () => {
    const { group } = await publishGroup(["on demand"], [w.destinationId]);
    const path = `/v1/workspaces/${w.ws}/analytics/post-groups/${group}/refresh`;
    const first = await w.s.request("POST", path);
    expect(first.status).toBe(202);
    expect(first.body.posts[0].next_automatic_refresh_at).toBe(new Date(w.s.clock.now()).toISOString());
    await refresh();
    expect((await analytics(group)).body.posts[0].state).toBe("fresh");
    for (let i = 1; i < REFRESHES_PER_HOUR; i++) expect((await w.s.request("POST", path)).status).toBe(202);
    const limited = await w.s.request("POST", path);
    expectProblem(limited, 429, "public_rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    w.s.clock.advance(HOUR);
    expect((await w.s.request("POST", path)).status).toBe(202);
    expectProblem(
      await w.s.request("POST", `/v1/workspaces/${w.ws}/analytics/post-groups/nothing-here/refresh`),
      404,
      "public_not_found",
    );
  });
});

describe("herald analytics GROUP", () => {
  const cli = (args: string[]) =>
    herald(["analytics", ...args], { HERALD_API_URL: w.s.url, HERALD_API_KEY: w.s.owner.apiKey });

  test("prints the totals as a table, or the resource with --json", async () => {
    const { group } = await publishGroup(["cli numbers"]);
    setCounts("cli numbers", { replies: 1200, likes: 3, shares: 0, saves: 2 });
    w.s.clock.advance(10 * MINUTE);
    await refresh();
    const table = await cli([group]);
    expect(table).toMatchObject({ code: 0, stderr: "" });
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toBe(`group ${group}`);
    expect(lines[1]).toMatch(/^metric\s+value\s+reported by\s+failed$/);
    expect(lines.find((l) => l.startsWith("comments"))).toMatch(/^comments\s+2,400\s+2 of 2 posts\s+0$/);
    expect(lines.find((l) => l.startsWith("saves"))).toMatch(/^saves\s+2\s+1 of 2 posts\s+0$/);
    expect(lines).toHaveLength(9);
    const json = await cli([group, "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ object: "post_group_analytics", group });
  });

  test("an unknown group exits 1 with the API's problem; a missing GROUP is a usage error", async () => {
    const missing = await cli(["no-such-group"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("herald:");
    const usage = await cli([]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("give exactly one GROUP");
  });
});
