// The posts listing shows a group sent to several destinations as one row with each destination and
// its state; paging by the API's cursor neither splits a group across pages nor loses one.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { idem } from "../posts/helpers.ts";
import { attributeOf, badgesIn, expectDashboardPage, screenOf } from "./support.ts";
import { pathIn, postsWorld, type PostsWorld } from "./posts-world.ts";

let w: PostsWorld;
let bob: string;
beforeAll(async () => {
  w = await postsWorld();
  const connected = await w.call("POST", `/v1/workspaces/${w.ws}/destination-connections`, {
    provider: "bluesky",
    instance_origin: w.bluesky.origin,
    handle: "bob.test",
    app_password: "bob-app-pass",
  });
  expect({ status: connected.status, text: connected.text }).toMatchObject({ status: 201 });
  bob = connected.body.destination_id;
});
afterAll(() => w.stop());

/** Create Post with the owner's key: `posts` (destination id, text) into `group` at `when`. */
async function send(group: string, when: string, posts: [string, string][]): Promise<{ id: string }[]> {
  const r = await w.call(
    "POST",
    `/v1/workspaces/${w.ws}/posts`,
    {
      when,
      confirmed: true,
      group,
      posts: posts.map(([destination_id, text]) => ({ destination_id, body: [text] })),
    },
    idem(),
  );
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
  return r.body.posts;
}

/** The rows of a listing page as a person reads them, and each row's links (text → href). */
function rowsOf(text: string, view = "All") {
  const screen = screenOf(text);
  const table = screen.queryByRole("table", { name: new RegExp(`^${view} posts`) });
  if (!table) return [];
  const records = screen.recordsOf(table);
  return screen
    .within(table)
    .getAllByRole("row")
    .slice(1)
    .map((row, i) =>
      Object.assign({}, records[i]!, {
        links: screen
          .within(row)
          .getAllByRole("link")
          .map((a) => [screen.nameOf(a), attributeOf(a, "href")!]),
        badges: badgesIn(row).map((b) => b.text),
      }),
    );
}

describe("groups in the posts listing", () => {
  test("a group longer than a page is one whole row; the next page says its posts were shown", async () => {
    for (let i = 0; i < 27; i++)
      await send("bulk", `2026-03-20T${String(10 + (i % 10)).padStart(2, "0")}:${10 + i}:00Z`, [
        [w.destinationId, `bulk ${i}`],
      ]);
    const browser = await w.signedIn();
    const first = await browser.get(pathIn(w.ws, "posts?view=all"));
    const rows = rowsOf(first.text);
    expect(rows.map((row) => row.Group)).toEqual(["bulk (27 posts)"]);
    expect(rows[0]!.badges).toHaveLength(27);
    const older = attributeOf(screenOf(first.text).getByRole("link", { name: "Older" }), "href")!;
    const second = await browser.get(older);
    expectDashboardPage(older, second);
    expect(rowsOf(second.text)).toEqual([]);
    const screen = screenOf(second.text);
    expect(screen.text()).toContain("The posts of this page belong to groups shown on earlier pages.");
    expect(screen.queryByRole("link", { name: "Older" })).toBeNull();
  });

  test("a post sent to two destinations is one row naming both, each with its state and link", async () => {
    const [toAlice, toBob] = await send("launch-both", "2026-03-10T09:00:00Z", [
      [w.destinationId, "launch on two accounts"],
      [bob, "launch on two accounts"],
    ]);
    await w.call("POST", `/v1/workspaces/${w.ws}/posts/${toBob!.id}/cancel`, { confirmed: true }, idem());
    const browser = await w.signedIn();
    const path = pathIn(w.ws, "posts");
    const r = await browser.get(path);
    expect(r.status).toBe(200);
    expectDashboardPage(path, r);
    const rows = rowsOf(r.text).filter((row) => row.Group!.startsWith("launch-both"));
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row).toMatchObject({ Post: "launch on two accounts", Group: "launch-both (2 posts)" });
    expect(row.Destinations).toMatch(/^bluesky · .+ scheduled bluesky · .+ cancelled$/);
    expect(row.badges).toEqual(["scheduled", "cancelled"]);
    // The row leads to the group's first post; each destination to its own post; the group to its list.
    expect(row.links.map(([, href]) => href)).toEqual([
      pathIn(w.ws, `posts/${toAlice!.id}`),
      pathIn(w.ws, `posts/${toAlice!.id}`),
      pathIn(w.ws, `posts/${toBob!.id}`),
      pathIn(w.ws, "posts?view=all&group=launch-both"),
    ]);
    // The group's own listing: one row per post.
    const own = await browser.get(pathIn(w.ws, "posts?view=all&group=launch-both"));
    const screen = screenOf(own.text);
    const table = screen.getByRole("table", { name: "All posts (filtered), one row per post, times in UTC" });
    expect(screen.recordsOf(table).map((rec) => rec.Destinations)).toHaveLength(2);
    // A filter keeps only the group's posts it matches: Bob's account alone.
    const bobs = rowsOf((await browser.get(pathIn(w.ws, `posts?view=all&destination_id=${bob}`))).text);
    expect(bobs.find((x) => x.Group!.startsWith("launch-both"))).toMatchObject({
      Group: "launch-both",
      badges: ["cancelled"],
    });
    // A view keeps only the group's posts in it: scheduled shows the row with one destination.
    const scheduled = rowsOf((await browser.get(pathIn(w.ws, "posts?view=scheduled"))).text, "Scheduled");
    expect(scheduled.find((x) => x.Group!.startsWith("launch-both"))).toMatchObject({
      Group: "launch-both",
      badges: ["scheduled"],
    });
  });

  test("a group whose posts are far apart in the listing is one row on the page of its newest post", async () => {
    // The group's first post, then 25 other groups, then a second post of the group: newest first,
    // the listing's first page (25) holds the second post and its last page the first one.
    const [older] = await send("spread", "2026-03-11T09:00:00Z", [[w.destinationId, "spread, first"]]);
    for (let i = 0; i < 25; i++)
      await send(`filler-${i}`, "2026-03-12T09:00:00Z", [[w.destinationId, `filler ${i}`]]);
    const [newer] = await send("spread", "2026-03-11T10:00:00Z", [[bob, "spread, second"]]);
    const browser = await w.signedIn();
    const seen: string[] = [];
    let path: string | undefined = pathIn(w.ws, "posts?view=all");
    const pages: ReturnType<typeof rowsOf>[] = [];
    while (path) {
      const page = await browser.get(path);
      expect(page.status).toBe(200);
      expectDashboardPage(path, page);
      pages.push(rowsOf(page.text));
      seen.push(...pages.at(-1)!.map((row) => row.Group!.replace(/ \(\d+ posts\)$/, "")));
      const older = screenOf(page.text).queryByRole("link", { name: "Older" });
      path = older ? attributeOf(older, "href") : undefined;
    }
    expect(pages.length).toBeGreaterThan(1);
    // Every group once: no group split, none lost.
    expect(seen.filter((g) => g === "spread")).toHaveLength(1);
    expect(new Set(seen).size).toBe(seen.length);
    for (let i = 0; i < 25; i++) expect(seen).toContain(`filler-${i}`);
    expect(seen).toContain("launch-both");
    const spread = pages[0]!.find((row) => row.Group === "spread (2 posts)")!;
    expect(spread.links.slice(1, 3).map(([, href]) => href)).toEqual([
      pathIn(w.ws, `posts/${older!.id}`),
      pathIn(w.ws, `posts/${newer!.id}`),
    ]);
    expect(spread.Time).toBe("11 Mar 2026, 09:00");
  });
});
