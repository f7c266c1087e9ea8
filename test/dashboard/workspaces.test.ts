import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Screen } from "../helpers/screen.ts";
import {
  attributeOf,
  dashboardWorld,
  type DashboardWorld,
  expectDashboardPage,
  formActionsOf,
  hiddenFields,
  noticesOf,
  postPairs,
  screenOf,
  submitPairs,
  valueOf,
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

/** A table by its caption as records by column (none when the table is not there). */
function recordsIn(screen: Screen, caption: string): Record<string, string>[] {
  const table = screen.queryByRole("table", { name: caption });
  return table ? screen.recordsOf(table) : [];
}

describe("the workspaces page", () => {
  test("lists the account's workspaces with links to their posts and settings", async () => {
    const r = await owner.get("/dashboard/workspaces");
    expect(r.status).toBe(200);
    expectDashboardPage("/dashboard/workspaces", r);
    const screen = screenOf(r.text);
    const table = screen.within(screen.getByRole("table", { name: "The account's workspaces" }));
    expect(attributeOf(table.getByRole("link", { name: "Acme" }), "href")).toBe(
      `/dashboard/workspaces/${world.owner.workspaceId}/posts`,
    );
    expect(attributeOf(table.getByRole("link", { name: "Settings of Acme" }), "href")).toBe(
      settingsOf(world.owner.workspaceId),
    );
    const zone = screen.getByLabelText("Time zone");
    expect(screen.within(zone).getByRole("option", { name: "Europe/Berlin" })).toBeDefined();
    expect(valueOf(zone)).toBe("UTC");
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
    expect(noticesOf(page)[0]).toStartWith("The workspace is created.");
  });

  test.each([
    ["a blank name", [["name", "   "]], "Name"],
    ["an unknown time zone", [["time_zone", "Mars/Olympus"]], "Time zone"],
  ] as [string, [string, string][], string][])(
    "%s is shown next to its field",
    async (_, changes, fieldName) => {
      const fields = new Map<string, string>([["name", "Kept"], ["time_zone", "UTC"], ...changes]);
      const r = await submitPairs(world.s, owner, "/dashboard/workspaces", "/dashboard/workspaces", [
        ...fields,
      ]);
      expect(r.status).toBe(400);
      expectDashboardPage("POST /dashboard/workspaces (invalid)", r);
      const screen = screenOf(r.text);
      expect(screen.getByRole("alert", { name: "There is a problem" })).toBeDefined();
      const field = screen.getByLabelText(fieldName);
      expect(attributeOf(field, "aria-invalid")).toBe("true");
      expect(screen.descriptionOf(field)).not.toBe("");
      for (const other of ["Name", "Time zone"].filter((name) => name !== fieldName))
        expect(attributeOf(screen.getByLabelText(other), "aria-invalid")).toBeUndefined();
    },
  );

  test("a member sees the list without the form, and the API refuses the POST", async () => {
    const r = await member.get("/dashboard/workspaces");
    expectDashboardPage("/dashboard/workspaces (member)", r);
    const screen = screenOf(r.text);
    expect(screen.queryByRole("form", { name: "Create a workspace" })).toBeNull();
    expect(formActionsOf(screen)).not.toContain("/dashboard/workspaces");
    expect(screen.text()).toContain("cannot create workspaces");
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
    const screen = screenOf(r.text);
    const nav = screen.within(screen.getByRole("navigation", { name: "Dashboard" }));
    expect(attributeOf(nav.getByRole("link", { name: "Settings" }), "aria-current")).toBe("page");
    expect(valueOf(screen.getByLabelText("Name"))).toBe("Acme");
    expect(screen.getByRole("table", { name: "Posting times (UTC)" })).toBeDefined();
    expect(recordsIn(screen, "People who can use this workspace")).toContainEqual({
      "E-mail": world.owner.email,
      Role: "owner",
    });
    expect(recordsIn(screen, "API keys that can use this workspace").map((k) => k.Prefix)).toContain(
      `${world.owner.apiKey.slice(0, 12)}…`,
    );
    expect(screen.text()).toContain("every person of the account can use every workspace");
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
    const staleScreen = screenOf(stale.text);
    expect(staleScreen.within(staleScreen.getByRole("alert")).text()).toContain("changed meanwhile");
    expect((await api("GET", `/workspaces/${world.owner.workspaceId}`)).body.name).toBe("Acme Corp");

    const blank = await submitPairs(world.s, owner, page(), page(), [
      ["name", ""],
      ["time_zone", "UTC"],
    ]);
    expect(blank.status).toBe(400);
    const blankScreen = screenOf(blank.text);
    expect(attributeOf(blankScreen.getByLabelText("Name"), "aria-invalid")).toBe("true");
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
    const grid = screenOf(shown.text);
    expect(valueOf(grid.getByLabelText("Posting time 1"))).toBe("09:00");
    expect(grid.namesOf("checkbox", { checked: true })).toEqual([
      "Monday at 09:00",
      "Wednesday at 09:00",
      "Friday at 17:30",
    ]);
    expect(valueOf(grid.getByLabelText("New posting time"))).toBe("");
    // Two stored rows and the empty new one.
    expect(hiddenFields(shown.text, queuePath).row_count).toBe("3");

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
      "Posting time 2",
      "choose a time",
    ],
    [
      "a time that is not one",
      [
        ["time_1", "25:00"],
        ["day_1", "2"],
      ],
      "Posting time 2",
      "is not a time of day",
    ],
    [
      "a time repeated on the same weekday",
      [
        ["time_1", "17:30"],
        ["day_1", "5"],
      ],
      "Posting time 2",
      "repeats another window",
    ],
  ] as [string, [string, string][], string, string][])(
    "%s is shown on its row, and nothing is saved",
    async (_, row, fieldName, detail) => {
      const before = (await api("GET", `/workspaces/${world.owner.workspaceId}/queue`)).body.windows;
      const r = await submitPairs(world.s, owner, page(), `${page()}/queue`, [
        ["row_count", "2"],
        ["time_0", "17:30"],
        ["day_0", "5"],
        ...row,
      ]);
      expect(r.status).toBe(400);
      expectDashboardPage("invalid queue", r);
      const screen = screenOf(r.text);
      const time = screen.getByLabelText(fieldName);
      expect(attributeOf(time, "aria-invalid")).toBe("true");
      expect(screen.descriptionOf(time)).toContain(detail);
      expect((await api("GET", `/workspaces/${world.owner.workspaceId}/queue`)).body.windows).toEqual(before);
    },
  );

  test("a member edits posting times but cannot rename, and the API refuses a rename", async () => {
    const r = await member.get(page());
    expect(r.status).toBe(200);
    expectDashboardPage("settings (member)", r);
    const screen = screenOf(r.text);
    expect(screen.queryByRole("form", { name: "Name and time zone" })).toBeNull();
    expect(attributeOf(screen.getByRole("form", { name: "Queue posting times" }), "action")).toBe(
      `${page()}/queue`,
    );
    expect(formActionsOf(screen)).not.toContain(page());
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
