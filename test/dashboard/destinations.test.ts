// The destinations page: the list with its states and actions, connecting Bluesky through the form and X
// through OAuth (the network's fake sends the browser back to the dashboard), problems next to their
// network's form, a member's read-only view, another account's workspace, and forms without CSRF.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { tables } from "../helpers/tables.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { startLinkedInFake } from "../fakes/linkedin.ts";
import { startXFake, type XFake, xFakeEnv } from "../fakes/x.ts";
import type { Element } from "domhandler";
import {
  attributeOf,
  badgesIn,
  csrfTokenOf,
  dashboardWorld,
  type DashboardWorld,
  expectDashboardPage,
  formActionsOf,
  formOf,
  headingOf,
  noticesOf,
  screenOf,
  type TestBrowser,
  valueOf,
} from "./support.ts";
import type { Screen } from "../helpers/screen.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

const { destinations } = tables;

let world: DashboardWorld;
let bluesky: BlueskyFake;
let x: XFake;
let owner: TestBrowser;
let page: string;
const formActions = ["https:", "http:"];

beforeAll(async () => {
  bluesky = await startBlueskyFake();
  x = await startXFake({ processingPolls: 0 });
  world = await dashboardWorld({
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      ...xFakeEnv(x),
    },
  });
  x.redirectUris.push(`${world.s.url}/oauth/callback/x`);
  owner = await world.signedIn();
  page = `/dashboard/workspaces/${world.owner.workspaceId}/destinations`;
});
afterAll(async () => {
  await world.stop();
  await bluesky.stop();
  await x.stop();
});

const connectBluesky = (fields: Record<string, string> = {}) =>
  owner.submit(
    page,
    { handle: "alice.test", app_password: "alice-app-pass", instance_origin: bluesky.origin, ...fields },
    `${page}/connect/bluesky`,
  );

/** The path of an absolute URL on the test server. */
const local = (url: string) => url.replace(world.s.url, "");

/** Opens a redirect's target and checks it is a dashboard page. */
async function follow(location: string | null) {
  expect(location).toStartWith(page);
  const r = await owner.get(location!);
  expect(r.status).toBe(200);
  expectDashboardPage(location!, r, { formActions });
  return r;
}

async function destinationId(displayName: string): Promise<string> {
  const r = await world.s.request("GET", `/v1/workspaces/${world.owner.workspaceId}/destinations`, {
    key: world.owner.apiKey,
  });
  return r.body.data.find((d: { display_name: string }) => d.display_name === displayName).id;
}

/** The row of the connected accounts table that names `account`, as cells by column and the row itself. */
function accountRow(screen: Screen, account: string): { cells: Record<string, string>; row: Element } | null {
  const table = screen.queryByRole("table", { name: "Connected accounts" });
  if (!table) return null;
  const index = screen.recordsOf(table).findIndex((cells) => cells.Account === account);
  if (index < 0) return null;
  return {
    cells: screen.recordsOf(table)[index]!,
    row: screen.within(table).getAllByRole("row")[index + 1]!,
  };
}

/** The forms of the page a person can send that post to `prefix` (by their buttons). */
const formsTo = (screen: Screen, prefix: string) =>
  formActionsOf(screen).filter((action) => action.startsWith(prefix));

describe("the destinations page", () => {
  test("renders an empty list and one connect form per network", async () => {
    const r = await owner.get(page);
    expect(r.status).toBe(200);
    expectDashboardPage(page, r, { formActions });
    const screen = screenOf(r.text);
    expect(screen.text()).toContain("No account is connected yet.");
    expect(screen.queryByRole("table", { name: "Connected accounts" })).toBeNull();
    for (const name of [
      "Bluesky",
      "Facebook",
      "Instagram",
      "Threads",
      "Mastodon",
      "X",
      "LinkedIn",
      "TikTok",
      "YouTube",
    ])
      expect(
        attributeOf(formOf(screen.getByRole("button", { name: `Connect ${name}` }))!, "action"),
      ).toStartWith(`${page}/connect/`);
    const nav = screen.within(screen.getByRole("navigation", { name: "Dashboard" }));
    expect(attributeOf(nav.getByRole("link", { name: "Destinations" }), "aria-current")).toBe("page");
  });

  test("Bluesky connects through its form at once, and the page names the account", async () => {
    const r = await connectBluesky();
    expect(r.status).toBe(303);
    expect(r.location).toMatch(/\?notice=connected&connection=conn_/);
    const back = await follow(r.location);
    expect(noticesOf(back)).toContain("Connected Bluesky: alice.test.");
    const alice = accountRow(screenOf(back.text), "alice.test")!;
    expect(alice.cells).toMatchObject({ Network: "Bluesky", Status: "Ready" });
    expect(badgesIn(alice.row)[0]).toEqual({ text: "Ready", tone: "ok" });
  });

  test("a refused connection comes back with the problem next to its field, the values kept", async () => {
    const r = await connectBluesky({ handle: "bob.test", app_password: "wrong" });
    expect([400, 422]).toContain(r.status);
    expectDashboardPage(page, r, { formActions });
    const screen = screenOf(r.text);
    const password = screen.getByLabelText("App password");
    expect(attributeOf(password, "aria-invalid")).toBe("true");
    const hint = "Create one in Bluesky under Settings, Privacy and security, App passwords.";
    expect(screen.descriptionOf(password)).toStartWith(`${hint} `);
    expect(screen.descriptionOf(password).length).toBeGreaterThan(hint.length + 1);
    // The summary leads to the field.
    const summary = screen.within(screen.getByRole("alert", { name: "There is a problem" }));
    const links = summary.getAllByRole("link").map((a) => attributeOf(a, "href"));
    expect(links).toContain(`#${attributeOf(password, "id")}`);
    expect(valueOf(screen.getByLabelText("Handle"))).toBe("bob.test");
    expect(valueOf(password)).toBe("");
    expect(r.text).not.toContain("wrong"); // the password is never sent back
  });

  test("a network whose app is not configured says what the operator must set, at its form", async () => {
    const r = await owner.submit(page, {}, `${page}/connect/threads`);
    expect(r.status).toBe(422);
    expectDashboardPage(page, r, { formActions });
    const screen = screenOf(r.text);
    const threads = screen.within(screen.getByRole("region", { name: "Threads" }));
    expect(threads.text()).toContain("HERALD_THREADS_CLIENT_ID and HERALD_THREADS_CLIENT_SECRET");
    expect(screen.within(screen.getByRole("region", { name: "X" })).text()).not.toContain("HERALD_");
  });

  test("X connects through OAuth: to X's authorize page, and the callback lands back here", async () => {
    const r = await owner.submit(page, {}, `${page}/connect/x`);
    expect(r.status).toBe(303);
    expect(r.location).toStartWith(`${x.origin}/i/oauth2/authorize?`);
    const consent = await fetch(r.location!, { redirect: "manual" });
    expect(consent.status).toBe(302);
    const callback = await owner.get(local(consent.headers.get("location")!));
    expect(callback.status).toBe(303);
    const back = await follow(callback.location);
    expect(callback.location).toContain("notice=connected");
    expect(noticesOf(back)).toContain("Connected X: Herald Dev.");
  });

  test("an authorization the person refused lands back here saying why", async () => {
    const r = await owner.submit(page, {}, `${page}/connect/x`);
    const state = new URL(r.location!).searchParams.get("state")!;
    const callback = await owner.get(`/oauth/callback/x?state=${state}&error=access_denied`);
    expect(callback.status).toBe(303);
    expect(callback.location).toContain("notice=not_connected");
    const back = await follow(callback.location);
    expect(noticesOf(back)).toContain("X was not connected: access_denied. Connect it again below.");
  });

  test("a connection started with an API key keeps the callback's own pages (confirm, then connected)", async () => {
    const started = await world.s.request(
      "POST",
      `/v1/workspaces/${world.owner.workspaceId}/destination-connections`,
      { key: world.owner.apiKey, body: { provider: "x" } },
    );
    const consent = await fetch(started.body.authorization_url, { redirect: "manual" });
    // The confirmation page first (test/destinations-oauth-binding.test.ts), then the outcome.
    const done = await returnFromOAuth(consent.headers.get("location")!);
    expect(done.status).toBe(200);
    expect(headingOf({ text: await done.text() })).toBe("Connected");
  });

  test("disable, enable, make default and disconnect, each back to the list with a notice", async () => {
    const id = await destinationId("alice.test");
    const steps = [
      ["disable", "is disabled", { text: "Disabled", tone: "neutral" }],
      ["enable", "is enabled", { text: "Ready", tone: "ok" }],
      ["default", "now the default", { text: "Default", tone: "ok" }],
    ] as const;
    for (const [action, text, badge] of steps) {
      const r = await owner.submit(page, {}, `${page}/${id}/${action}`);
      expect({ action, status: r.status, location: r.location }).toEqual({
        action,
        status: 303,
        location: `${page}?notice=${action === "default" ? "default" : `${action}d`}`,
      });
      const back = await follow(r.location);
      expect(noticesOf(back).join(" ")).toContain(text);
      expect(badgesIn(accountRow(screenOf(back.text), "alice.test")!.row)).toContainEqual(badge);
    }
    const list = screenOf((await owner.get(page)).text);
    const disconnect = formOf(list.getByRole("button", { name: "Disconnect Bluesky alice.test" }))!;
    expect(attributeOf(disconnect, "action")).toBe(`${page}/${id}/disconnect`);
    expect(attributeOf(disconnect, "data-confirm")).toStartWith("Disconnect Bluesky alice.test?");
    const r = await owner.submit(page, {}, `${page}/${id}/disconnect`);
    expect(r.location).toBe(`${page}?notice=disconnected`);
    const back = await follow(r.location);
    const after = screenOf(back.text);
    expect(accountRow(after, "alice.test")).toBeNull();
    expect(formsTo(after, `${page}/${id}/`)).toEqual([]);
  });

  test("a destination needing reauthorization says so and offers to reauthorize", async () => {
    const id = await destinationId("Herald Dev");
    await inTransaction(world.s.herald.db, (tx) =>
      tx
        .update(destinations)
        .set({ unavailableReason: "reauthorization_required" })
        .where(eq(destinations.id, id)),
    );
    const r = await owner.get(page);
    expectDashboardPage(page, r, { formActions });
    const screen = screenOf(r.text);
    expect(accountRow(screen, "Herald Dev")!.cells.Status).toBe(
      "Unavailable X no longer accepts Herald's access: reauthorize the account.",
    );
    const reauthorize = formOf(screen.getByRole("button", { name: "Reauthorize X Herald Dev" }))!;
    expect(attributeOf(reauthorize, "action")).toBe(`${page}/connect/x`);
    const again = await owner.submit(page, {}, `${page}/connect/x`);
    expect(again.location).toStartWith(`${x.origin}/i/oauth2/authorize?`);
  });
});

describe("a network setting the network refused", () => {
  test("a retired LinkedIn API version: each LinkedIn account says which variable the operator must change", async () => {
    const linkedin = await startLinkedInFake({ organizations: [] });
    const own = await dashboardWorld({
      env: {
        HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
        HERALD_LINKEDIN_CLIENT_ID: linkedin.clientId,
        HERALD_LINKEDIN_CLIENT_SECRET: linkedin.clientSecret,
        HERALD_LINKEDIN_API_BASE: linkedin.origin,
        HERALD_LINKEDIN_AUTH_BASE: linkedin.origin,
        HERALD_LINKEDIN_TOKEN_BASE: linkedin.origin,
        HERALD_LINKEDIN_API_VERSION: "202609",
      },
    });
    try {
      const workspace = own.owner.workspaceId;
      const key = own.owner.apiKey;
      const started = await own.s.request("POST", `/v1/workspaces/${workspace}/destination-connections`, {
        key,
        body: { provider: "linkedin" },
      });
      const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
      expect((await returnFromOAuth(authorize.headers.get("location")!)).status).toBe(200);
      const done = await own.s.request(
        "GET",
        `/v1/workspaces/${workspace}/destination-connections/${started.body.id}`,
        { key },
      );
      linkedin.activeVersions = { oldest: "202610", newest: "202611" };
      const created = await own.s.request("POST", `/v1/workspaces/${workspace}/posts`, {
        key,
        headers: { "idempotency-key": "dashboard-retired-version" },
        body: {
          when: "now",
          confirmed: true,
          group: "dashboard-retired-version",
          posts: [{ destination_id: done.body.destination_id, body: ["On a retired version"] }],
        },
      });
      expect(created.status).toBe(202);
      await own.s.server.engine.runUntilIdle();
      const browser = await own.signedIn();
      const listPage = `/dashboard/workspaces/${workspace}/destinations`;
      const screen = screenOf((await browser.get(listPage)).text);
      expect(accountRow(screen, "Alice Example")!.cells.Status).toBe(
        "Unavailable LinkedIn no longer accepts the API version Herald sends: the operator must set " +
          "HERALD_LINKEDIN_API_VERSION to a current one.",
      );
    } finally {
      await own.stop();
      await linkedin.stop();
    }
  });
});

describe("who may use the page", () => {
  test("a member sees the list without forms, and a forged form is refused by the API", async () => {
    const member = await world.signedInAs("member");
    const r = await member.get(page);
    expect(r.status).toBe(200);
    expectDashboardPage(page, r);
    const screen = screenOf(r.text);
    expect(accountRow(screen, "Herald Dev")).not.toBeNull();
    expect(formsTo(screen, `${page}/`)).toEqual([]);
    expect(screen.getAllByRole("button").length).toBeGreaterThan(0); // the header's sign-out
    const csrf_token = csrfTokenOf(r.text);
    const id = await destinationId("Herald Dev");
    for (const action of ["connect/x", `${id}/disable`, `${id}/disconnect`]) {
      const forged = await member.post(`${page}/${action}`, { csrf_token, idempotency_key: `k-${action}` });
      expect({ action, status: forged.status }).toEqual({ action, status: 403 });
      expectDashboardPage(`${page}/${action}`, forged);
    }
  });

  test("another account's workspace is not found, page and forms alike", async () => {
    const foreign = `/dashboard/workspaces/${world.foreignWorkspaceId}/destinations`;
    const r = await owner.get(foreign);
    expect(r.status).toBe(404);
    expectDashboardPage(foreign, r);
    const csrf_token = csrfTokenOf(r.text);
    expect((await owner.post(`${foreign}/connect/bluesky`, { csrf_token })).status).toBe(404);
  });

  test("a form without this browser's CSRF token is refused and changes nothing", async () => {
    const id = await destinationId("Herald Dev");
    for (const action of ["connect/x", `${id}/disable`]) {
      const r = await owner.post(`${page}/${action}`, { csrf_token: "forged" });
      expect({ action, status: r.status }).toEqual({ action, status: 403 });
      expect(headingOf(r)).toBe("This form cannot be used");
    }
  });
});
