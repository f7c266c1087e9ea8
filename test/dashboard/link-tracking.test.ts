// The dashboard's link tracking (issue 31): the workspace settings' form (on/off and UTM presets,
// saved through PATCH link_tracking) and a published post's page listing its short links and clicks.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { idem } from "../posts/helpers.ts";
import {
  attributeOf,
  connectOwnersBluesky,
  dashboardWorld,
  type DashboardWorld,
  expectDashboardPage,
  noticesOf,
  screenOf,
  submitPairs,
  valueOf,
  type TestBrowser,
} from "./support.ts";

let world: DashboardWorld;
let owner: TestBrowser;
let bluesky: BlueskyFake;
let alice: string;
beforeAll(async () => {
  world = await dashboardWorld({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  owner = await world.signedIn();
  bluesky = await startBlueskyFake();
  alice = await connectOwnersBluesky(world, bluesky);
});
afterAll(async () => {
  await world.stop();
  await bluesky.stop();
});

const ws = () => world.owner.workspaceId;
const settings = () => `/dashboard/workspaces/${ws()}/settings`;
const api = (method: string, path: string, body?: unknown) =>
  world.s.request(method, `/v1${path}`, { key: world.owner.apiKey, body, headers: idem() });

describe("the settings' link tracking form", () => {
  test("off at first; saving turns it on with UTM presets", async () => {
    const page = await owner.get(settings());
    expectDashboardPage(settings(), page);
    const screen = screenOf(page.text);
    expect(screen.getByRole("heading", { name: "Link tracking" })).toBeDefined();
    expect(screen.queryByRole("checkbox", { name: /Track links/, checked: true })).toBeNull();
    const r = await submitPairs(world.s, owner, settings(), `${settings()}/links`, [
      ["enabled", "true"],
      ["utm_source", "herald"],
      ["utm_medium", ""],
      ["utm_campaign", "spring"],
    ]);
    expect(r.status).toBe(303);
    expect(r.location).toBe(`${settings()}?notice=links-saved`);
    expect((await api("GET", `/workspaces/${ws()}`)).body.link_tracking).toEqual({
      enabled: true,
      utm_source: "herald",
      utm_medium: null,
      utm_campaign: "spring",
    });
    const saved = await owner.get(r.location!);
    expect(noticesOf(saved)).toContain("Link tracking is saved.");
    const after = screenOf(saved.text);
    expect(after.getByRole("checkbox", { name: /Track links/, checked: true })).toBeDefined();
    expect(valueOf(after.getByLabelText("UTM source"))).toBe("herald");
    expect(valueOf(after.getByLabelText("UTM campaign"))).toBe("spring");
  });

  test("a refused value comes back on its field", async () => {
    const r = await submitPairs(world.s, owner, settings(), `${settings()}/links`, [
      ["enabled", "true"],
      ["utm_source", "m".repeat(101)],
    ]);
    expect(r.status).toBe(400);
    const screen = screenOf(r.text);
    expect(screen.getByRole("alert", { name: "There is a problem" })).toBeDefined();
    expect(attributeOf(screen.getByLabelText("UTM source"), "aria-invalid")).toBe("true");
  });
});

describe("a post's page", () => {
  test("lists its short links with their clicks", async () => {
    const created = await api("POST", `/workspaces/${ws()}/posts`, {
      when: "now",
      confirmed: true,
      group: "links-page",
      posts: [{ destination_id: alice, body: ["See https://example.com/spring"] }],
    });
    expect(created.status).toBe(202);
    const postId = created.body.posts[0].id;
    await world.s.server.engine.runUntilIdle();
    const links = await api("GET", `/workspaces/${ws()}/posts/${postId}/links`);
    const [link] = links.body.data;
    for (let i = 0; i < 2; i++)
      expect((await fetch(link.short_url, { redirect: "manual" })).status).toBe(302);
    const path = `/dashboard/workspaces/${ws()}/posts/${postId}`;
    const page = await owner.get(path);
    expectDashboardPage(path, page);
    const screen = screenOf(page.text);
    expect(screen.getByRole("heading", { name: "Tracked links" })).toBeDefined();
    const table = screen.getByRole("table", { name: "Tracked links and their clicks" });
    expect(screen.recordsOf(table)).toEqual([
      {
        "Short link": link.short_url,
        "Leads to": "https://example.com/spring?utm_source=herald&utm_campaign=spring",
        Clicks: "2",
      },
    ]);
  });
});

describe("the compose page", () => {
  const compose = () => `/dashboard/workspaces/${ws()}/posts/new`;
  const asWritten = /Publish this post's links as written/;
  const tracking = (enabled: boolean) =>
    world.s.request("PATCH", `/v1/workspaces/${ws()}`, {
      key: world.owner.apiKey,
      body: { link_tracking: { enabled } },
      headers: { ...idem(), "if-match": "*" },
    });
  const composed = async (extra: [string, string][]) => {
    const r = await submitPairs(world.s, owner, compose(), compose(), [
      ["destination_ids", alice],
      ["item_0_text", "Read https://example.com/launch"],
      ["when", "draft"],
      ["op", "create"],
      ...extra,
    ]);
    const id = /\/posts\/([^/?]+)\?notice=created$/.exec(r.location ?? "")?.[1];
    expect({ status: r.status, id: typeof id }).toEqual({ status: 303, id: "string" });
    return (await api("GET", `/workspaces/${ws()}/posts/${id}`)).body;
  };

  test("offers links as written only while the workspace tracks links; the choice reaches the post", async () => {
    expect((await tracking(false)).status).toBe(200);
    expect(
      screenOf((await owner.get(compose())).text).queryByRole("checkbox", { name: asWritten }),
    ).toBeNull();
    expect((await tracking(true)).status).toBe(200);
    const screen = screenOf((await owner.get(compose())).text);
    expect(screen.getByRole("checkbox", { name: asWritten }).attribs.checked).toBeUndefined();
    expect((await composed([["link_tracking", "off"]])).link_tracking).toBe(false);
    expect((await composed([])).link_tracking).toBe(true);
  });
});
