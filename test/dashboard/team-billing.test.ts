import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { tables } from "../helpers/tables.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { usageMonth } from "../../src/modules/posts/x-usage.ts";
import { listInvitations } from "../../src/modules/invitations/repo.ts";
import type { Screen } from "../helpers/screen.ts";
import {
  attributeOf,
  badgesIn,
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
  valueOf,
} from "./support.ts";

const { xUsage } = tables;

let world: DashboardWorld;
let owner: TestBrowser;
let member: TestBrowser;
beforeAll(async () => {
  world = await dashboardWorld();
  owner = await world.signedIn();
  member = await world.signedInAs("member", "team-member@example.com");
});
afterAll(() => world.stop());

const invitations = () => listInvitations(world.s.herald.db, world.owner.accountId);
const invite = (browser: TestBrowser, email: string) =>
  submitPairs(world.s, browser, "/dashboard/team", "/dashboard/team/invitations", [["email", email]]);

/** A table of the page by its caption, as records by column, with each record's row element. */
function tableOf(screen: Screen, caption: string) {
  const table = screen.queryByRole("table", { name: caption });
  if (!table) return [];
  const rows = screen.within(table).getAllByRole("row").slice(1);
  return screen.recordsOf(table).map((cells, i) => ({ cells, row: rows[i]! }));
}

/** The navigation entry marked as the current page. */
function currentSection(screen: Screen): string[] {
  const nav = screen.within(screen.getByRole("navigation", { name: "Dashboard" }));
  return nav
    .getAllByRole("link")
    .filter((a) => attributeOf(a, "aria-current") === "page")
    .map((a) => screen.nameOf(a));
}

describe("the team page", () => {
  test("lists the account's people with their roles", async () => {
    const r = await owner.get("/dashboard/team");
    expect(r.status).toBe(200);
    expectDashboardPage("/dashboard/team", r);
    const screen = screenOf(r.text);
    expect(currentSection(screen)).toEqual(["Team"]);
    const people = tableOf(screen, "People").map(({ cells }) => [cells["E-mail"], cells.Role]);
    expect(people).toContainEqual([`${world.owner.email} (you)`, "owner"]);
    expect(people).toContainEqual(["team-member@example.com", "member"]);
    expect(screen.text()).toContain("No invitations.");
    expect(tableOf(screen, "Invitations")).toEqual([]);
    const form = screen.getByRole("form", { name: "Invite someone" });
    expect(attributeOf(form, "action")).toBe("/dashboard/team/invitations");
    expect(screen.getByLabelText("E-mail address")).toBeDefined();
  });

  test("an invitation is sent once per form, then listed as pending", async () => {
    const opened = await owner.get("/dashboard/team");
    const pairs: [string, string][] = [
      ...Object.entries(hiddenFields(opened.text, "/dashboard/team/invitations")),
      ["email", "new.person@example.com"],
    ];
    // This server sends no mail: the answer shows the link to pass on (see invitation-link.test.ts).
    const r = await postPairs(world.s, owner, "/dashboard/team/invitations", pairs);
    expect(r.status).toBe(201);
    // The same form again (double submit): the API replays the first answer, no second invitation.
    const again = await postPairs(world.s, owner, "/dashboard/team/invitations", pairs);
    expect(again.status).toBe(303);
    expect(again.location).toBe("/dashboard/team?notice=invited-link-shown");
    expect((await invitations()).filter((i) => i.email === "new.person@example.com")).toHaveLength(1);

    const page = await owner.get(again.location!);
    expectDashboardPage(again.location!, page);
    expect(noticesOf(page)[0]).toStartWith("The invitation is stored");
    const listed = tableOf(screenOf(page.text), "Invitations").find(
      ({ cells }) => cells["E-mail"] === "new.person@example.com",
    )!;
    expect(listed.cells).toMatchObject({ Role: "member", Status: "pending" });
    expect(badgesIn(listed.row)).toEqual([{ text: "pending", tone: "ok" }]);
  });

  test.each([
    ["an address that is not one", "not-an-address", 400, "must be an e-mail address"],
    ["a member's address", "team-member@example.com", 409, "is already a member"],
  ])("%s is shown next to the field", async (_, email, status, detail) => {
    const before = (await invitations()).length;
    const r = await invite(owner, email);
    expect(r.status).toBe(status);
    expectDashboardPage("invalid invitation", r);
    const screen = screenOf(r.text);
    expect(screen.getByRole("alert", { name: "There is a problem" })).toBeDefined();
    const field = screen.getByLabelText("E-mail address");
    expect(screen.descriptionOf(field)).toContain(detail);
    expect(valueOf(field)).toBe(email);
    expect((await invitations()).length).toBe(before);
  });

  test("a member sees people and invitations without the form, and cannot invite", async () => {
    const r = await member.get("/dashboard/team");
    expect(r.status).toBe(200);
    expectDashboardPage("/dashboard/team (member)", r);
    const screen = screenOf(r.text);
    const listed = tableOf(screen, "Invitations").map(({ cells }) => cells["E-mail"]);
    expect(listed).toContain("new.person@example.com");
    expect(screen.queryByRole("form", { name: "Invite someone" })).toBeNull();
    expect(formActionsOf(screen)).toEqual(["/logout"]);
    const csrf = hiddenFields(r.text, "/logout").csrf_token!;
    const refused = await postPairs(world.s, member, "/dashboard/team/invitations", [
      ["csrf_token", csrf],
      ["idempotency_key", "member-try"],
      ["email", "friend@example.com"],
    ]);
    expect(refused.status).toBe(403);
    expect((await invitations()).some((i) => i.email === "friend@example.com")).toBe(false);
  });

  test("a form without this browser's CSRF token is refused", async () => {
    const r = await postPairs(world.s, owner, "/dashboard/team/invitations", [
      ["email", "forged@example.com"],
    ]);
    expect(r.status).toBe(403);
    expect((await invitations()).some((i) => i.email === "forged@example.com")).toBe(false);
  });
});

describe("managing the team", () => {
  test("an admin invitation, then resent (the earlier link dies) and revoked", async () => {
    const r = await submitPairs(world.s, owner, "/dashboard/team", "/dashboard/team/invitations", [
      ["email", "new-admin@example.com"],
      ["role", "admin"],
    ]);
    // No mail on this server: each answer shows the link to pass on.
    expect(r.status).toBe(201);
    expect(headingOf(r)).toBe("Invitation created");
    const made = (await invitations()).find((i) => i.email === "new-admin@example.com")!;
    expect(made.role).toBe("admin");
    const at = `/dashboard/team/invitations/${made.id}`;
    const resent = await submitPairs(world.s, owner, "/dashboard/team", `${at}/resend`, []);
    expect(resent.status).toBe(200);
    expect(headingOf(resent)).toBe("New invitation link");
    expect(resent.text).toContain("The earlier link no longer works.");
    const revoked = await submitPairs(world.s, owner, "/dashboard/team", `${at}/revoke`, []);
    expect(revoked.location).toBe("/dashboard/team?notice=revoked");
    expect((await invitations()).some((i) => i.id === made.id && i.revokedAt === null)).toBe(false);
    // Revoked already: the API's 404 becomes a page, not a crash.
    const again = await postPairs(world.s, owner, `${at}/revoke`, [
      [
        "csrf_token",
        hiddenFields((await owner.get("/dashboard/team")).text, "/dashboard/team/invitations").csrf_token!,
      ],
    ]);
    expect(again.status).toBe(404);
  });

  test("removing a person needs their address typed; then their sessions end", async () => {
    const leaving = await world.signedInAs("member", "leaving@example.com");
    const page = await owner.get("/dashboard/team");
    const screen = screenOf(page.text);
    const typed = screen.getByLabelText("Type leaving@example.com to remove them");
    const form = formOf(typed)!;
    expect(screen.within(form).getByRole("button", { name: "Remove leaving@example.com" })).toBeDefined();
    const action = attributeOf(form, "action")!;
    expect(action).toMatch(/^\/dashboard\/team\/members\/[^/]+\/remove$/);
    const wrong = await submitPairs(world.s, owner, "/dashboard/team", action, [
      ["confirmation", "x@example.com"],
    ]);
    expect(wrong.status).toBe(400);
    const refusedRemoval = screenOf(wrong.text);
    const alert = refusedRemoval.getAllByRole("alert")[0]!;
    expect(refusedRemoval.within(alert).text()).toStartWith(
      "Not removed: must be the member's e-mail address",
    );
    expect((await leaving.get("/dashboard")).status).toBe(200);
    const right = await submitPairs(world.s, owner, "/dashboard/team", action, [
      ["confirmation", "leaving@example.com"],
    ]);
    expect({ status: right.status, alerts: screenOf(right.text).namesOf("alert") }).toEqual({
      status: 303,
      alerts: [],
    });
    expect(right.location).toBe("/dashboard/team?notice=removed");
    expect((await leaving.get("/dashboard")).status).toBe(303);
    const after = screenOf((await owner.get("/dashboard/team")).text);
    expect(tableOf(after, "People").map(({ cells }) => cells["E-mail"])).not.toContain("leaving@example.com");
    expect(after.text()).not.toContain("leaving@example.com");
  });

  test("a member has no remove, resend or revoke controls, and a forged removal is refused", async () => {
    const r = await member.get("/dashboard/team");
    const screen = screenOf(r.text);
    expect(tableOf(screen, "People").length).toBeGreaterThan(1);
    expect(tableOf(screen, "Invitations").length).toBeGreaterThan(0);
    expect(formActionsOf(screen)).toEqual(["/logout"]);
    expect(screen.queryByRole("button", { name: /^(Remove|Resend|Revoke)/ })).toBeNull();
    const forged = await postPairs(world.s, member, `/dashboard/team/members/anyone/remove`, [
      ["csrf_token", hiddenFields(r.text, "/logout").csrf_token!],
      ["confirmation", world.owner.email],
    ]);
    expect(forged.status).toBe(403);
  });
});

describe("the billing page", () => {
  test("says billing is disabled and shows each workspace's X posts this month", async () => {
    const month = usageMonth(world.s.clock.now());
    await inTransaction(world.s.herald.db, (tx) =>
      tx.insert(xUsage).values({ workspaceId: world.owner.workspaceId, month, used: 3, reserved: 2 }),
    );
    const r = await owner.get("/dashboard/billing");
    expect(r.status).toBe(200);
    expectDashboardPage("/dashboard/billing", r);
    const screen = screenOf(r.text);
    expect(currentSection(screen)).toEqual(["Billing"]);
    expect(screen.text()).toContain("Billing is disabled on this server");
    const usage = tableOf(screen, `X usage in ${month} (UTC)`).map(({ cells }) => Object.values(cells));
    expect(usage).toContainEqual(["Acme", "3", "2", "5 of 50"]);
    expect(r.text).not.toContain(world.foreignWorkspaceId);
  });

  test("an admin sees it; a member without billing:read is refused", async () => {
    const admin = await world.signedInAs("admin");
    expect((await admin.get("/dashboard/billing")).status).toBe(200);
    const r = await member.get("/dashboard/billing");
    expect(r.status).toBe(403);
    expectDashboardPage("/dashboard/billing (member)", r);
    expect(screenOf(r.text).text()).toContain("cannot see billing");
  });
});

describe("invitations over time", () => {
  test("an invitation past its expiry is listed as expired", async () => {
    world.s.clock.advance(8 * 24 * 60 * 60 * 1000);
    // Sessions end sooner than invitations: sign in again.
    const r = await (await world.signedIn()).get("/dashboard/team");
    const listed = tableOf(screenOf(r.text), "Invitations").find(
      ({ cells }) => cells["E-mail"] === "new.person@example.com",
    )!;
    expect(listed.cells).toMatchObject({ Role: "member", Status: "expired" });
    expect(badgesIn(listed.row)).toEqual([{ text: "expired", tone: "neutral" }]);
  });
});
