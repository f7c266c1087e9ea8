import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { listApiKeys } from "../../src/modules/keys/repo.ts";
import type { Screen } from "../helpers/screen.ts";
import {
  attributeOf,
  dashboardWorld,
  type DashboardWorld,
  expectDashboardPage,
  formActionsOf,
  formOf,
  headingOf,
  hiddenFields,
  noticesOf,
  postPairs,
  screenOf,
  submitPairs,
  type TestBrowser,
  textOf,
  valueOf,
} from "./support.ts";

let world: DashboardWorld;
let owner: TestBrowser;
let secondWorkspaceId: string;

beforeAll(async () => {
  world = await dashboardWorld();
  owner = await world.signedIn();
  const made = await world.s.request("POST", "/v1/workspaces", {
    key: world.owner.apiKey,
    body: { name: "Second" },
  });
  secondWorkspaceId = made.body.id;
});
afterAll(() => world.stop());

const NEW_KEY = /hk_(?:live|test)_[A-Za-z0-9]{40}/;

/** Posts the create form of /dashboard/keys with `pairs` (repeating names allowed). */
const create = (browser: TestBrowser, pairs: [string, string][]) =>
  submitPairs(world.s, browser, "/dashboard/keys", "/dashboard/keys", pairs);

const bearer = (key: string, method: string, path: string, body?: unknown) =>
  fetch(`${world.s.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** The keys table as shown: a record per key, by column. */
function keyRows(text: string): Record<string, string>[] {
  const screen = screenOf(text);
  const table = screen.queryByRole("table", { name: /API keys$/ });
  return table ? screen.recordsOf(table) : [];
}

/** A control found by its label, or a group of choices by its legend's start. */
const field = (screen: Screen, name: string) =>
  screen.queryByLabelText(name) ?? screen.getByRole("group", { name: new RegExp(`^${name}`) });

const accountKeys = () => listApiKeys(world.s.herald.db, world.owner.accountId);

describe("the API keys page", () => {
  test("lists the account's keys without secrets, with a create form and revoke buttons", async () => {
    const r = await owner.get("/dashboard/keys");
    expect(r.status).toBe(200);
    expectDashboardPage("/dashboard/keys", r);
    const screen = screenOf(r.text);
    const nav = screen.within(screen.getByRole("navigation", { name: "Dashboard" }));
    expect(attributeOf(nav.getByRole("link", { name: "API keys" }), "aria-current")).toBe("page");
    expect(keyRows(r.text).map((k) => k.Prefix)).toContain(`${world.owner.apiKey.slice(0, 12)}… live`);
    expect(r.text).not.toContain(world.owner.apiKey);
    const form = screen.getByRole("form", { name: "Create a key" });
    expect([attributeOf(form, "method"), attributeOf(form, "action")]).toEqual(["post", "/dashboard/keys"]);
    const revokes = screen.getAllByRole("button", { name: /^Revoke / }).map((b) => formOf(b)!);
    expect(revokes.length).toBeGreaterThan(0);
    for (const revoke of revokes) {
      expect(attributeOf(revoke, "action")).toMatch(/^\/dashboard\/keys\/key_[^/]+\/revoke$/);
      expect(attributeOf(revoke, "data-confirm")).toStartWith("Revoke");
    }
    // The owner may grant every scope, billing included.
    expect(screen.getByRole("checkbox", { name: "billing:write" })).toBeDefined();
  });

  test("a key made here is shown once, works within its workspaces and scopes, and never again", async () => {
    const page = await owner.get("/dashboard/keys");
    const fields = hiddenFields(page.text, "/dashboard/keys");
    const pairs: [string, string][] = [
      ...Object.entries(fields),
      ["name", "Reporting"],
      ["environment", "live"],
      ["scopes", "workspaces:read"],
      ["scopes", "posts:read"],
      ["workspace_access", "selected"],
      ["workspace_ids", world.owner.workspaceId],
      ["expiry", "30"],
    ];
    const r = await postPairs(world.s, owner, "/dashboard/keys", pairs);
    expect(r.status).toBe(201);
    expectDashboardPage("POST /dashboard/keys", r);
    const secret = NEW_KEY.exec(r.text)?.[0];
    expect(secret).toBeDefined();
    const shown = screenOf(r.text);
    // A copy button (revealed by the script) copies the key and says so in a live region.
    const copy = shown.getByRole("button", { name: "Copy", hidden: true });
    expect(textOf(shown.byId(attributeOf(copy, "data-copy")!)!)).toBe(secret!);
    expect(shown.getAllByRole("status").map((s) => attributeOf(s, "id"))).toContain(
      `${attributeOf(copy, "data-copy")}-status`,
    );
    expect(shown.text()).toContain("Copy the key now: it will not be shown again.");

    // The key: its selected workspace, not the other one (404), and only its scopes (403).
    expect((await bearer(secret!, "GET", `/workspaces/${world.owner.workspaceId}`)).status).toBe(200);
    expect((await bearer(secret!, "GET", `/workspaces/${world.owner.workspaceId}/queue`)).status).toBe(200);
    expect((await bearer(secret!, "GET", `/workspaces/${secondWorkspaceId}`)).status).toBe(404);
    expect(
      (await bearer(secret!, "PATCH", `/workspaces/${world.owner.workspaceId}`, { name: "X" })).status,
    ).toBe(403);
    const row = (await accountKeys()).find((k) => k.name === "Reporting")!;
    expect(row.workspaceIds).toEqual([world.owner.workspaceId]);
    expect(row.expiresAt).toBe(world.s.clock.now() + 30 * 24 * 60 * 60 * 1000);

    // The same form again (a reload, a double click): no second key, and no secret.
    const again = await postPairs(world.s, owner, "/dashboard/keys", pairs);
    expect(again.status).toBe(200);
    expectDashboardPage("POST /dashboard/keys again", again);
    expect(headingOf(again)).toBe("This key was already created");
    expect(again.text).not.toMatch(NEW_KEY);
    expect((await accountKeys()).filter((k) => k.name === "Reporting")).toHaveLength(1);

    const list = await owner.get("/dashboard/keys");
    expect(list.text).not.toContain(secret!);
    expect(keyRows(list.text).find((k) => k.Name === "Reporting")).toMatchObject({
      Prefix: `${secret!.slice(0, 12)}… live`,
      Scopes: "workspaces: read; posts: read",
      // An account page: times in UTC, named.
      Created: "1 Mar 2026, 12:00 UTC",
    });
  });

  // Each case changes the valid defaults (null drops a field) and names the error's element.
  test.each([
    ["a missing name", { name: " " }, "Name", "is required"],
    ["a name too long", { name: "x".repeat(101) }, "Name", "at most 100"],
    ["no scope", { scopes: null }, "Scopes", "choose at least one scope"],
    ["an unknown scope", { scopes: "everything:write" }, "Scopes", "not a scope"],
    [
      "selected access without a workspace",
      { workspace_access: "selected" },
      "Selected workspaces",
      "at least one",
    ],
    [
      "another account's workspace",
      { workspace_access: "selected", workspace_ids: "FOREIGN" },
      "Selected workspaces",
      "not yours",
    ],
    [
      "an expiry date in the past",
      { expiry: "date", expires_on: "2020-01-01" },
      "Expiry date",
      "today or later",
    ],
    ["a malformed expiry date", { expiry: "date", expires_on: "tomorrow" }, "Expiry date", "YYYY-MM-DD"],
    ["an unknown expiry", { expiry: "forever" }, "Expiry", "must be never"],
    ["an unknown environment", { environment: "staging" }, "Environment", "live or test"],
  ] as [string, Record<string, string | null>, string, string][])(
    "%s is shown next to its field, with the values kept",
    async (_, changes, fieldName, detail) => {
      const fields: Record<string, string | null> = {
        name: "Kept name",
        environment: "live",
        scopes: "posts:read",
        workspace_access: "all",
        expiry: "never",
        ...changes,
      };
      const pairs = Object.entries(fields)
        .filter((pair): pair is [string, string] => pair[1] !== null)
        .map(([n, v]): [string, string] => [n, v === "FOREIGN" ? world.foreignWorkspaceId : v]);
      const before = (await accountKeys()).length;
      const r = await create(owner, pairs);
      expect(r.status).toBe(400);
      expectDashboardPage("POST /dashboard/keys (invalid)", r);
      const screen = screenOf(r.text);
      expect(screen.getByRole("alert", { name: "There is a problem" })).toBeDefined();
      expect(screen.descriptionOf(field(screen, fieldName))).toContain(detail);
      if (!("name" in changes)) expect(valueOf(screen.getByLabelText("Name"))).toBe("Kept name");
      expect(r.text).not.toMatch(NEW_KEY);
      expect((await accountKeys()).length).toBe(before);
    },
  );

  test("a form without this browser's CSRF token is refused and creates nothing", async () => {
    const before = (await accountKeys()).length;
    const r = await postPairs(world.s, owner, "/dashboard/keys", [
      ["csrf_token", "forged"],
      ["name", "Forged"],
      ["environment", "live"],
      ["scopes", "posts:read"],
      ["workspace_access", "all"],
      ["expiry", "never"],
    ]);
    expect(r.status).toBe(403);
    expect((await accountKeys()).length).toBe(before);
  });

  test("revoking ends the key at once; revoking it again says so; others' keys are not found", async () => {
    const r = await create(owner, [
      ["name", "Short-lived"],
      ["environment", "test"],
      ["scopes", "workspaces:read"],
      ["workspace_access", "all"],
      ["expiry", "never"],
    ]);
    const secret = NEW_KEY.exec(r.text)![0];
    expect(secret).toStartWith("hk_test_");
    const id = (await accountKeys()).find((k) => k.name === "Short-lived")!.id;
    const action = `/dashboard/keys/${id}/revoke`;
    const revoked = await submitPairs(world.s, owner, "/dashboard/keys", action, []);
    expect(revoked.status).toBe(303);
    expect(revoked.location).toBe("/dashboard/keys?notice=revoked");
    expect((await bearer(secret, "GET", "/workspaces")).status).toBe(401);

    const list = await owner.get("/dashboard/keys?notice=revoked");
    expect(noticesOf(list)[0]).toStartWith("The key is revoked");
    expect(formActionsOf(screenOf(list.text))).not.toContain(action);
    // Revoked keys come after active ones.
    const rows = keyRows(list.text);
    expect(rows.findIndex((k) => k.Name === "Short-lived")).toBeGreaterThan(
      rows.findIndex((k) => k.Prefix === `${world.owner.apiKey.slice(0, 12)}… live`),
    );
    expect(rows.find((k) => k.Name === "Short-lived")?.Status).toBe("revoked");

    const fields = hiddenFields(list.text, "/dashboard/keys");
    const again = await postPairs(world.s, owner, action, Object.entries(fields));
    expect(again.location).toBe("/dashboard/keys?notice=already-revoked");

    const other = await world.s.bootstrap("keys-other@example.com", "Other");
    const foreign = await postPairs(
      world.s,
      owner,
      `/dashboard/keys/${other.credentialId}/revoke`,
      Object.entries(fields),
    );
    expect(foreign.status).toBe(404);
    expectDashboardPage("revoke foreign key", foreign);
    expect((await bearer(other.apiKey, "GET", "/workspaces")).status).toBe(200);

    const forged = await postPairs(world.s, owner, `/dashboard/keys/${world.s.owner.credentialId}/revoke`, [
      ["csrf_token", "forged"],
    ]);
    expect(forged.status).toBe(403);
  });
});

describe("a member", () => {
  let member: TestBrowser;
  beforeAll(async () => {
    member = await world.signedInAs("member");
  });

  test("sees only the keys they created, and may grant only a member's scopes", async () => {
    const r = await member.get("/dashboard/keys");
    expect(r.status).toBe(200);
    expectDashboardPage("/dashboard/keys (member)", r);
    expect(r.text).not.toContain(world.owner.apiKey.slice(0, 12));
    const screen = screenOf(r.text);
    expect(screen.getByRole("checkbox", { name: "posts:write" })).toBeDefined();
    expect(screen.queryByRole("checkbox", { name: "workspaces:write" })).toBeNull();
    expect(screen.queryByRole("checkbox", { name: "billing:read" })).toBeNull();

    const refused = await create(member, [
      ["name", "Too much"],
      ["environment", "live"],
      ["scopes", "posts:read"],
      ["scopes", "workspaces:write"],
      ["workspace_access", "all"],
      ["expiry", "never"],
    ]);
    expect(refused.status).toBe(400);
    const problems = screenOf(refused.text);
    expect(problems.descriptionOf(field(problems, "Scopes"))).toContain(
      "your role (member) cannot grant workspaces:write",
    );
    expect((await accountKeys()).some((k) => k.name === "Too much")).toBe(false);
  });

  test("cannot send a form key someone else used: refused, and the other key is not named", async () => {
    const valid: [string, string][] = [
      ["name", "Owner's CI"],
      ["environment", "live"],
      ["scopes", "posts:read"],
      ["workspace_access", "all"],
      ["expiry", "never"],
    ];
    const ownerForm = hiddenFields((await owner.get("/dashboard/keys")).text, "/dashboard/keys");
    expect(
      (await postPairs(world.s, owner, "/dashboard/keys", [...Object.entries(ownerForm), ...valid])).status,
    ).toBe(201);
    const memberForm = hiddenFields((await member.get("/dashboard/keys")).text, "/dashboard/keys");
    const r = await postPairs(world.s, member, "/dashboard/keys", [
      ["csrf_token", memberForm.csrf_token!],
      ["idempotency_key", ownerForm.idempotency_key!],
      ...valid,
    ]);
    expect(r.status).toBe(409);
    expectDashboardPage("reused form key", r);
    expect(screenOf(r.text).text()).not.toContain("Owner's CI");
    expect((await accountKeys()).filter((k) => k.name === "Owner's CI")).toHaveLength(1);
  });

  test("creates a key within the member scopes, sees and revokes it, but not the owner's", async () => {
    const made = await create(member, [
      ["name", "Member bot"],
      ["environment", "live"],
      ["scopes", "posts:write"],
      ["workspace_access", "selected"],
      ["workspace_ids", secondWorkspaceId],
      ["expiry", "365"],
    ]);
    expect(made.status).toBe(201);
    const secret = NEW_KEY.exec(made.text)![0];
    expect((await bearer(secret, "GET", `/workspaces/${secondWorkspaceId}/queue`)).status).toBe(403);

    const list = await member.get("/dashboard/keys");
    expect(keyRows(list.text).map((k) => k.Name)).toEqual(["Member bot"]);
    expect(screenOf(list.text).text()).not.toContain("Reporting");
    const ownerList = await owner.get("/dashboard/keys");
    expect(keyRows(ownerList.text).map((k) => k.Name)).toContain("Member bot");

    const fields = Object.entries(hiddenFields(list.text, "/dashboard/keys"));
    const ownersKeyId = (await accountKeys()).find((k) => k.createdByUserId === null)!.id;
    const ownersKey = await postPairs(world.s, member, `/dashboard/keys/${ownersKeyId}/revoke`, fields);
    expect(ownersKey.status).toBe(404);
    const mine = (await accountKeys()).find((k) => k.name === "Member bot")!;
    const revoked = await postPairs(world.s, member, `/dashboard/keys/${mine.id}/revoke`, fields);
    expect(revoked.location).toBe("/dashboard/keys?notice=revoked");
  });
});
