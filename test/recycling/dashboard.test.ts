// Recycling in the dashboard: an original's page shows its plan, copies published and the next copy
// (linked, with "Stop recycling", which cancels it); a copy's page links to its original; the compose
// page's "Recycling" fields make a post with `recycle`, and the API's errors land next to them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  attributeOf,
  expectDashboardPage,
  hiddenFields,
  noticesOf,
  screenOf,
  type TestBrowser,
} from "../dashboard/support.ts";
import { pathIn, postsWorld, type PostsWorld } from "../dashboard/posts-world.ts";

let w: PostsWorld;
let browser: TestBrowser;
beforeAll(async () => {
  w = await postsWorld();
  browser = await w.signedIn();
});
afterAll(() => w.stop());

const detail = (id: string) => pathIn(w.ws, `posts/${id}`);

describe("a recycled post's page", () => {
  test("the original shows the plan and the next copy; Stop recycling cancels that copy", async () => {
    const recycle = { every_days: 7, count: 2, variations: [["Take two"]] };
    const created = await w.create("now", "Evergreen on the dashboard", {
      posts: [{ destination_id: w.destinationId, body: ["Evergreen on the dashboard"], recycle }],
    });
    await w.run();
    const original = await w.post(created.id);
    const copyId = original.recycle.next_copy_id;
    expect(copyId).toBeTruthy();

    const path = detail(original.id);
    const page = await browser.get(path);
    expect(page.status).toBe(200);
    expectDashboardPage(path, page);
    const screen = screenOf(page.text);
    const heading = screen.getByRole("heading", { level: 2, name: "Recycling" });
    expect(heading).toBeDefined();
    const text = screen.text();
    expect(text).toContain("2 copies, one every 7 days after the publication before; 0 published.");
    expect(text).toContain("Take two");
    const links = screen.getAllByRole("link").map((a) => attributeOf(a, "href"));
    expect(links).toContain(detail(copyId));
    const stop = screen.getByRole("button", { name: "Stop recycling (cancel the next copy)" });
    expect(stop).toBeDefined();

    const copyPage = screenOf((await browser.get(detail(copyId))).text);
    expect(copyPage.text()).toContain("Copy 1 of an evergreen post.");
    const back = copyPage.getByRole("link", { name: "evergreen post" });
    expect(attributeOf(back, "href")).toBe(path);

    const stopped = await browser.submit(path, {}, `${detail(copyId)}/cancel`);
    expect(stopped.status).toBe(303);
    expect(noticesOf(await browser.get(stopped.headers.get("location")!))).toContain(
      "The post was cancelled.",
    );
    expect((await w.post(copyId)).state).toBe("cancelled");
    const after = screenOf((await browser.get(path)).text);
    expect(after.text()).toContain("No copy is waiting.");
    expect(after.queryByRole("button", { name: "Stop recycling (cancel the next copy)" })).toBeNull();
  });
});

describe("the compose page's recycling fields", () => {
  const compose = () => pathIn(w.ws, "posts/new");

  /** Sends the compose form urlencoded, as a browser without the script does. */
  async function send(from: string, fields: Record<string, string>) {
    const body = new URLSearchParams({ ...hiddenFields(from, compose()), ...fields });
    body.append("destination_ids", w.destinationId);
    const cookie = [...browser.cookies].map(([n, v]) => `${n}=${v}`).join("; ");
    const r = await fetch(w.s.url + compose(), {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
      body: body.toString(),
      redirect: "manual",
    });
    return { status: r.status, text: await r.text(), location: r.headers.get("location") };
  }

  test("copies, days and variations make a post with recycle", async () => {
    const opened = await browser.get(compose());
    const screen = screenOf(opened.text);
    expect(screen.getByRole("group", { name: "Recycling (optional)" })).toBeDefined();
    expect(screen.getByLabelText("Copies")).toBeDefined();
    expect(screen.getByLabelText("Every (days)")).toBeDefined();
    expect(screen.getByLabelText("Variations")).toBeDefined();
    const created = await send(opened.text, {
      item_0_text: "Composed evergreen",
      when: "draft",
      recycle_count: "3",
      recycle_every: "14",
      recycle_variations: "First variation\n---\nSecond variation",
      op: "create",
    });
    expect({ status: created.status, text: created.status === 303 ? "" : created.text }).toEqual({
      status: 303,
      text: "",
    });
    const id = /posts\/([^/?]+)/.exec(created.location!)![1]!;
    expect((await w.post(id)).recycle).toMatchObject({
      every_days: 14,
      count: 3,
      variations: [["First variation"], ["Second variation"]],
    });
  });

  test("a number out of range comes back next to its field", async () => {
    const opened = await browser.get(compose());
    const refused = await send(opened.text, {
      item_0_text: "Too many copies",
      when: "draft",
      recycle_count: "99",
      recycle_every: "7",
      op: "create",
    });
    expect(refused.status).toBe(400);
    const screen = screenOf(refused.text);
    const field = screen.getByLabelText("Copies");
    expect(screen.descriptionOf(field)).toContain("must be at most 52");
    expect(field.attribs["aria-invalid"]).toBe("true");
  });
});
