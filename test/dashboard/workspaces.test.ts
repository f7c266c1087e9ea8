import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  dashboardWorld,
  type DashboardWorld,
  expectDashboardPage,
  hiddenFields,
  postPairs,
  submitPairs,
  type TestBrowser,
} from "./support.ts";

let world: DashboardWorld;
let owner: TestBrowser;
let member: TestBrowser;
beforeAll(async () => {
  world = await dashboardWorld();
  owner = await world.signedIn();
  member = await world.signedInAs("member");
});
afterAll(() => world.stop());

const settingsOf = (id: string) => `/dashboard/workspaces/${id}/settings`;
const api = (method: string, path: string, body?: unknown) =>
  world.s.request(method, `/v1${path}`, { key: world.owner.apiKey, body });

describe("the workspaces page", () => {
  test("lists the account's workspaces with links to their posts and settings", async () => {
    const r = await owner.get("/dashboard/workspaces");
    expect(r.status).toBe(200);
    expectDashboardPage("/dashboard/workspaces", r);
    expect(r.text).toContain(`<a href="/dashboard/workspaces/${world.owner.workspaceId}/posts">Acme</a>`);
    expect(r.text).toContain(`href="${settingsOf(world.owner.workspaceId)}"`);
    expect(r.text).toContain('<option value="Europe/Berlin">Europe/Berlin</option>');
    expect(r.text).toContain('<option value="UTC" selected>UTC</option>');
    expect(r.text).not.toContain(world.foreignWorkspaceId);
  });

  test("creating one leads to its settings", async () => {
    const r = await submitPairs(world.s, owner, "/dashboard/workspaces", "/dashboard/workspaces", [
      ["name", "  Launch  "],
      ["time_zone", "America/New_York"],
    ]);
    expect(r.status).toBe(303);
    const id = /^\/dashboard\/workspaces\/(ws_[^/]+)\/settings\?notice=created$/.exec(r.location!)?.[1];
    expect(id).toBeDefined();
    const made = await api("GET", `/workspaces/${id}`);
    expect(made.body).toMatchObject({ name: "Launch", time_zone: "America/New_York" });
    const page = await owner.get(r.location!);
    expectDashboardPage(r.location!, page);
    expect(page.text).toContain("The workspace is created.");
  });

  test.each([
    ["a blank name", [["name", "   "]], "f-name-error"],
    ["an unknown time zone", [["time_zone", "Mars/Olympus"]], "f-time_zone-error"],
  ] as [string, [string, string][], string][])(
    "%s is shown next to its field",
    async (_, changes, errorId) => {
      const fields = new Map<string, string>([["name", "Kept"], ["time_zone", "UTC"], ...changes]);
      const r = await submitPairs(world.s, owner, "/dashboard/workspaces", "/dashboard/workspaces", [
        ...fields,
      ]);
      expect(r.status).toBe(400);
      expectDashboardPage("POST /dashboard/workspaces (invalid)", r);
      expect(r.text).toContain('<div class="errors" role="alert"');
      expect(r.text).toContain(`<p class="error" id="${errorId}">`);
    },
  );

  test("a member sees the list without the form, and the API refuses the POST", async () => {
    const r = await member.get("/dashboard/workspaces");
    expectDashboardPage("/dashboard/workspaces (member)", r);
    expect(r.text).not.toContain('action="/dashboard/workspaces"');
    expect(r.text).toContain("cannot create workspaces");
    const fields = hiddenFields(r.text, "/logout");
    const refused = await postPairs(world.s, member, "/dashboard/workspaces", [
      ["csrf_token", fields.csrf_token!],
      ["name", "Nope"],
      ["time_zone", "UTC"],
    ]);
    expect(refused.status).toBe(403);
    expectDashboardPage("POST /dashboard/workspaces (member)", refused);
  });

  test("a form without this browser's CSRF token is refused", async () => {
    const r = await postPairs(world.s, owner, "/dashboard/workspaces", [["name", "Forged"]]);
    expect(r.status).toBe(403);
  });
});

describe("a workspace's settings", () => {
  const page = () => settingsOf(world.owner.workspaceId);

  test("show the name, the posting times and who can use the workspace", async () => {
    const r = await owner.get(page());
    expect(r.status).toBe(200);
    expectDashboardPage(page(), r);
    expect(r.text).toContain('aria-current="page">Settings</a>');
    expect(r.text).toContain('value="Acme"');
    expect(r.text).toContain("<caption>Posting times (UTC)</caption>");
    expect(r.text).toContain(world.owner.email);
    expect(r.text).toContain(`<code>${world.owner.apiKey.slice(0, 12)}…</code>`);
    expect(r.text).toContain("every person of the account can use every workspace");
  });

  test("another account's workspace is not found, for the page and its forms", async () => {
    const r = await owner.get(settingsOf(world.foreignWorkspaceId));
    expect(r.status).toBe(404);
    expectDashboardPage("foreign settings", r);
    const csrf = hiddenFields((await owner.get(page())).text, "/logout").csrf_token!;
    for (const path of [
      settingsOf(world.foreignWorkspaceId),
      `${settingsOf(world.foreignWorkspaceId)}/queue`,
    ]) {
      const posted = await postPairs(world.s, owner, path, [
        ["csrf_token", csrf],
        ["name", "Taken"],
      ]);
      expect({ path, status: posted.status }).toEqual({ path, status: 404 });
    }
  });

  test("renaming uses the page's ETag; a change made meanwhile is reported, not overwritten", async () => {
    const opened = await owner.get(page());
    const fields = hiddenFields(opened.text, page());
    const renamed = await postPairs(world.s, owner, page(), [
      ...Object.entries(fields),
      ["name", "Acme Corp"],
      ["time_zone", "Europe/Berlin"],
    ]);
    expect(renamed.status).toBe(303);
    expect(renamed.location).toBe(`${page()}?notice=saved`);
    expect((await api("GET", `/workspaces/${world.owner.workspaceId}`)).body).toMatchObject({
      name: "Acme Corp",
      time_zone: "Europe/Berlin",
    });

    // The same (now stale) form again, with another name: 412, shown as "changed meanwhile".
    const stale = await postPairs(world.s, owner, page(), [
      ...Object.entries(fields),
      ["name", "Stale"],
      ["time_zone", "UTC"],
    ]);
    expect(stale.status).toBe(412);
    expectDashboardPage("stale rename", stale);
    expect(stale.text).toContain("changed meanwhile");
    expect((await api("GET", `/workspaces/${world.owner.workspaceId}`)).body.name).toBe("Acme Corp");

    const blank = await submitPairs(world.s, owner, page(), page(), [
      ["name", ""],
      ["time_zone", "UTC"],
    ]);
    expect(blank.status).toBe(400);
    expect(blank.text).toContain('<p class="error" id="f-name-error">');
  });

  test("posting times are edited as a weekday grid: add, change, remove", async () => {
    const queuePath = `${page()}/queue`;
    const add = await submitPairs(world.s, owner, page(), queuePath, [
      ["row_count", "1"],
      ["time_0", "09:00"],
      ["day_0", "1"],
      ["day_0", "3"],
    ]);
    expect(add.status).toBe(303);
    expect(add.location).toBe(`${page()}?notice=queue-saved`);
    const more = await submitPairs(world.s, owner, page(), queuePath, [
      ["row_count", "2"],
      ["time_0", "09:00"],
      ["day_0", "1"],
      ["day_0", "3"],
      ["time_1", "17:30"],
      ["day_1", "5"],
    ]);
    expect(more.status).toBe(303);
    const windows = async () =>
      (await api("GET", `/workspaces/${world.owner.workspaceId}/queue`)).body.windows.map(
        (w: { weekday: number; local_time: string }) => `${w.weekday} ${w.local_time}`,
      );
    expect(await windows()).toEqual(["1 09:00", "3 09:00", "5 17:30"]);

    const shown = await owner.get(page());
    expectDashboardPage("settings with windows", shown);
    expect(shown.text).toContain('id="f-queue-0" name="time_0" type="time" value="09:00"');
    expect(shown.text).toContain('id="q-0-3" type="checkbox" name="day_0" value="3" checked');
    expect(shown.text).toContain('<input type="hidden" name="row_count" value="3">');

    const removed = await submitPairs(world.s, owner, page(), queuePath, [
      ["row_count", "3"],
      ["time_0", "09:00"],
      ["day_0", "1"],
      ["remove_0", "1"],
      ["time_1", "17:30"],
      ["day_1", "5"],
      ["day_1", "6"],
      ["time_2", ""],
    ]);
    expect(removed.status).toBe(303);
    expect(await windows()).toEqual(["5 17:30", "6 17:30"]);
  });

  test.each([
    [
      "weekdays ticked without a time",
      [
        ["time_1", ""],
        ["day_1", "2"],
      ],
      "f-queue-1-error",
      "choose a time",
    ],
    [
      "a time that is not one",
      [
        ["time_1", "25:00"],
        ["day_1", "2"],
      ],
      "f-queue-1-error",
      "is not a time of day",
    ],
    [
      "a time repeated on the same weekday",
      [
        ["time_1", "17:30"],
        ["day_1", "5"],
      ],
      "f-queue-1-error",
      "repeats another window",
    ],
  ] as [string, [string, string][], string, string][])(
    "%s is shown on its row, and nothing is saved",
    async (_, row, errorId, detail) => {
      const before = (await api("GET", `/workspaces/${world.owner.workspaceId}/queue`)).body.windows;
      const r = await submitPairs(world.s, owner, page(), `${page()}/queue`, [
        ["row_count", "2"],
        ["time_0", "17:30"],
        ["day_0", "5"],
        ...row,
      ]);
      expect(r.status).toBe(400);
      expectDashboardPage("invalid queue", r);
      expect(r.text).toMatch(new RegExp(`<p class="error" id="${errorId}">[^<]*${detail}`));
      expect(r.text).toContain('aria-describedby="f-queue-1-error"');
      expect((await api("GET", `/workspaces/${world.owner.workspaceId}/queue`)).body.windows).toEqual(before);
    },
  );

  test("a member edits posting times but cannot rename, and the API refuses a rename", async () => {
    const r = await member.get(page());
    expect(r.status).toBe(200);
    expectDashboardPage("settings (member)", r);
    expect(r.text).not.toContain(`action="${page()}"`);
    expect(r.text).toContain(`action="${page()}/queue"`);
    const csrf = hiddenFields(r.text, `${page()}/queue`).csrf_token!;
    const refused = await postPairs(world.s, member, page(), [
      ["csrf_token", csrf],
      ["name", "Members' now"],
      ["time_zone", "UTC"],
    ]);
    expect(refused.status).toBe(403);
    expect((await api("GET", `/workspaces/${world.owner.workspaceId}`)).body.name).toBe("Acme Corp");
  });

  test("forms without this browser's CSRF token are refused", async () => {
    for (const path of [page(), `${page()}/queue`]) {
      const r = await postPairs(world.s, owner, path, [
        ["csrf_token", "forged"],
        ["row_count", "0"],
      ]);
      expect({ path, status: r.status }).toEqual({ path, status: 403 });
    }
  });
});
