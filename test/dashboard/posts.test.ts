// The posts listing of the dashboard: one tab per view of the contract, each listing exactly its posts,
// an empty state per view, filters, paging, roles and a foreign workspace.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Element } from "domhandler";
import { attributeOf, badgesIn, expectDashboardPage, formOf, headingOf, screenOf } from "./support.ts";
import { pathIn, postsWorld, type PostsWorld } from "./posts-world.ts";

let w: PostsWorld;
beforeAll(async () => {
  w = await postsWorld();
});
afterAll(() => w.stop());

const VIEWS = ["all", "drafts", "scheduled", "published", "attention", "failed"] as const;
const TABS: Record<(typeof VIEWS)[number], string> = {
  all: "All",
  drafts: "Drafts",
  scheduled: "Scheduled",
  published: "Published",
  attention: "Needs attention",
  failed: "Failed",
};
const EMPTY: Record<(typeof VIEWS)[number], string> = {
  all: "No posts yet.",
  drafts: "No drafts.",
  scheduled: "Nothing is scheduled or on its way.",
  published: "Nothing has been published yet.",
  attention: "No post needs your attention.",
  failed: "No post failed.",
};

/** The ids of the posts a listing page shows, each row's first link leading to its post. */
function listed(text: string): string[] {
  const screen = screenOf(text);
  const table = screen.queryByRole("table", { name: / posts/ });
  if (!table) return [];
  return screen
    .within(table)
    .getAllByRole("row")
    .slice(1)
    .map((row) => {
      const href = attributeOf(screen.within(row).getAllByRole("link")[0]!, "href")!;
      expect(href).toMatch(/^\/dashboard\/workspaces\/[^/]+\/posts\/send_[A-Za-z0-9_]+$/);
      return href.split("/").at(-1)!;
    });
}

describe("the posts listing", () => {
  test("each view has a clear empty state before anything exists", async () => {
    const browser = await w.signedIn();
    for (const view of VIEWS) {
      const path = pathIn(w.ws, `posts?view=${view}`);
      const r = await browser.get(path);
      expect({ view, status: r.status }).toEqual({ view, status: 200 });
      expectDashboardPage(path, r);
      const screen = screenOf(r.text);
      expect({ view, empty: screen.text().includes(EMPTY[view]) }).toEqual({ view, empty: true });
      expect(listed(r.text)).toEqual([]);
      expect(attributeOf(screen.getByRole("link", { name: "New post" }), "href")).toBe(
        pathIn(w.ws, "posts/new"),
      );
    }
    // "New post" is the compose page, not a post whose id is "new".
    const compose = await browser.get(pathIn(w.ws, "posts/new"));
    expect(compose.status).toBe(200);
    expect(headingOf(compose)).not.toBe("Post not found");
  });

  test("each view lists exactly its posts, with state, network and local time", async () => {
    const draft = await w.create("draft", "a draft to finish");
    const scheduled = await w.create("2026-03-10T09:00:00Z", "scheduled for later");
    const published = await w.create("now", "out already");
    await w.run();
    w.bluesky.failNext(1, {
      path: "createRecord",
      status: 400,
      body: { error: "InvalidRequest", message: "no" },
    });
    const failed = await w.create("now", "refused by the network");
    await w.run();
    expect((await w.post(published.id)).state).toBe("published");
    expect((await w.post(failed.id)).state).toBe("failed");
    const expected: Record<(typeof VIEWS)[number], string[]> = {
      all: [draft.id, scheduled.id, published.id, failed.id],
      drafts: [draft.id],
      scheduled: [scheduled.id],
      published: [published.id],
      attention: [failed.id],
      failed: [failed.id],
    };
    const browser = await w.signedIn();
    for (const view of VIEWS) {
      const path = pathIn(w.ws, `posts?view=${view}`);
      const r = await browser.get(path);
      expectDashboardPage(path, r);
      expect({ view, ids: listed(r.text).sort() }).toEqual({ view, ids: expected[view].sort() });
      const screen = screenOf(r.text);
      const tabs = screen.within(screen.getByRole("navigation", { name: "Views" }));
      const current = tabs.getAllByRole("link").filter((a) => attributeOf(a, "aria-current") === "page");
      expect({ view, current: current.map((a) => screen.nameOf(a)) }).toEqual({
        view,
        current: [TABS[view]],
      });
    }
    const all = screenOf((await browser.get(pathIn(w.ws, "posts"))).text);
    const table = all.getByRole("table", { name: "All posts, one row per group, times in UTC" });
    const records = all.recordsOf(table);
    const recordOf = (text: string) => records.find((row) => row.Post!.includes(text))!;
    expect(recordOf("scheduled for later")).toMatchObject({ Time: "10 Mar 2026, 09:00" });
    expect(recordOf("scheduled for later").Destinations).toMatch(/^bluesky · .+ scheduled$/);
    expect(recordOf("refused by the network").Destinations).toEndWith(" failed");
    // The state is a badge whose tone says how it stands.
    const rowOf = (text: string) =>
      all.within(
        all
          .within(table)
          .getAllByRole("row")
          .find((row) => all.nameOf(row).includes(text))!,
      );
    const badgeTone = (text: string) => badgesIn(rowOf(text).getAllByRole("cell")[1]!)[0]!.tone;
    expect(badgeTone("scheduled for later")).toBe("warn");
    expect(badgeTone("refused by the network")).toBe("danger");
    // 09:00Z in the workspace's zone (UTC here), in a <time> with the instant.
    expect(attributeOf(rowOf("scheduled for later").getByRole("time"), "datetime")).toBe(
      "2026-03-10T09:00:00.000Z",
    );
  });

  test("filters narrow the listing through a GET form; the group link lists the group", async () => {
    const browser = await w.signedIn();
    const one = await w.create("draft", "filtered draft");
    const path = pathIn(w.ws, `posts?view=all&group=${one.group}`);
    const r = await browser.get(path);
    expectDashboardPage(path, r);
    expect(listed(r.text)).toEqual([one.id]);
    const screen = screenOf(r.text);
    const group = screen.getByLabelText("Group");
    expect(attributeOf(group, "value")).toBe(one.group);
    expect(attributeOf(formOf(group)!, "method")).toBe("get");
    expect(attributeOf(formOf(screen.getByLabelText("Network"))!, "method")).toBe("get");
    const none = await browser.get(pathIn(w.ws, "posts?view=published&group=nothing-here"));
    expect(listed(none.text)).toEqual([]);
    expect(screenOf(none.text).text()).toContain("No posts match these filters.");
  });

  test("an invalid filter shows the API's problem instead of a list", async () => {
    const browser = await w.signedIn();
    const path = pathIn(w.ws, "posts?channel=carrier-pigeon");
    const r = await browser.get(path);
    expect(r.status).toBe(400);
    expectDashboardPage(path, r);
    const screen = screenOf(r.text);
    expect(screen.getByRole("alert", { name: "There is a problem" })).toBeDefined();
    expect(screen.queryByRole("table")).toBeNull();
  });

  test("a long listing pages with the API's cursor", async () => {
    for (let i = 0; i < 26; i++) await w.create("draft", `paged draft ${i}`);
    const browser = await w.signedIn();
    const first = await browser.get(pathIn(w.ws, "posts?view=drafts"));
    expect(listed(first.text)).toHaveLength(25);
    const older = attributeOf(screenOf(first.text).getByRole("link", { name: "Older" }), "href");
    expect(older).toStartWith(pathIn(w.ws, "posts?"));
    const second = await browser.get(older!);
    expectDashboardPage(older!, second);
    const all = [...listed(first.text), ...listed(second.text)];
    expect(new Set(all).size).toBe(28); // 26 + the two earlier drafts
  });

  test("a member sees the listing; a foreign workspace is 404", async () => {
    const member = await w.signedInAs("member");
    const r = await member.get(pathIn(w.ws, "posts?view=drafts"));
    expect(r.status).toBe(200);
    const foreign = await member.get(pathIn(w.foreignWorkspaceId, "posts"));
    expect(foreign.status).toBe(404);
    const owner = await w.signedIn();
    const path = pathIn(w.foreignWorkspaceId, "posts?view=all");
    const asOwner = await owner.get(path);
    expect(asOwner.status).toBe(404);
    expectDashboardPage(path, asOwner);
  });
});
