import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { xUsage } from "../helpers/tables.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { usageMonth } from "../../src/modules/posts/x-usage.ts";
import { listInvitations } from "../../src/modules/invitations/repo.ts";
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
  member = await world.signedInAs("member", "team-member@example.com");
});
afterAll(() => world.stop());

const invitations = () => listInvitations(world.s.herald.db, world.owner.accountId);
const invite = (browser: TestBrowser, email: string) =>
  submitPairs(world.s, browser, "/dashboard/team", "/dashboard/team/invitations", [["email", email]]);

describe("the team page", () => {
  test("lists the account's people with their roles", async () => {
    const r = await owner.get("/dashboard/team");
    expect(r.status).toBe(200);
    expectDashboardPage("/dashboard/team", r);
    expect(r.text).toContain('aria-current="page">Team</a>');
    expect(r.text).toContain(`<td>${world.owner.email} <span class="muted">(you)</span></td><td>owner</td>`);
    expect(r.text).toContain("<td>team-member@example.com</td><td>member</td>");
    expect(r.text).toContain("No invitations.");
    expect(r.text).toContain('action="/dashboard/team/invitations"');
  });

  test("an invitation is sent once per form, then listed as pending", async () => {
    const opened = await owner.get("/dashboard/team");
    const pairs: [string, string][] = [
      ...Object.entries(hiddenFields(opened.text, "/dashboard/team/invitations")),
      ["email", "new.person@example.com"],
    ];
    const r = await postPairs(world.s, owner, "/dashboard/team/invitations", pairs);
    expect(r.status).toBe(303);
    expect(r.location).toBe("/dashboard/team?notice=invited");
    // The same form again (double submit): the API replays the first answer, no second invitation.
    const again = await postPairs(world.s, owner, "/dashboard/team/invitations", pairs);
    expect(again.status).toBe(303);
    expect((await invitations()).filter((i) => i.email === "new.person@example.com")).toHaveLength(1);

    const page = await owner.get(r.location!);
    expectDashboardPage(r.location!, page);
    expect(page.text).toContain("The invitation is stored");
    expect(page.text).toMatch(
      /<td>new\.person@example\.com<\/td><td>member<\/td><td><span class="badge ok">pending<\/span>/,
    );
  });

  test.each([
    ["an address that is not one", "not-an-address", 400, "must be an e-mail address"],
    ["a member's address", "team-member@example.com", 409, "is already a member"],
  ])("%s is shown next to the field", async (_, email, status, detail) => {
    const before = (await invitations()).length;
    const r = await invite(owner, email);
    expect(r.status).toBe(status);
    expectDashboardPage("invalid invitation", r);
    expect(r.text).toContain('<div class="errors" role="alert"');
    expect(r.text).toMatch(new RegExp(`<p class="error" id="f-email-error">${detail}`));
    expect(r.text).toContain(`value="${email}"`);
    expect((await invitations()).length).toBe(before);
  });

  test("a member sees people and invitations without the form, and cannot invite", async () => {
    const r = await member.get("/dashboard/team");
    expect(r.status).toBe(200);
    expectDashboardPage("/dashboard/team (member)", r);
    expect(r.text).toContain("new.person@example.com");
    expect(r.text).not.toContain('action="/dashboard/team/invitations"');
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
    expect(r.location).toBe("/dashboard/team?notice=invited");
    const made = (await invitations()).find((i) => i.email === "new-admin@example.com")!;
    expect(made.role).toBe("admin");
    const at = `/dashboard/team/invitations/${made.id}`;
    const resent = await submitPairs(world.s, owner, "/dashboard/team", `${at}/resend`, []);
    expect(resent.location).toBe("/dashboard/team?notice=resent");
    expect((await owner.get(resent.location!)).text).toContain("A new invitation e-mail is on its way");
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
    const id = /<label for="remove-([^"]+)">Type leaving@example\.com to remove them/.exec(page.text)?.[1];
    expect(id).toBeDefined();
    const action = `/dashboard/team/members/${id}/remove`;
    const wrong = await submitPairs(world.s, owner, "/dashboard/team", action, [
      ["confirmation", "x@example.com"],
    ]);
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain("Not removed:");
    expect((await leaving.get("/dashboard")).status).toBe(200);
    const right = await submitPairs(world.s, owner, "/dashboard/team", action, [
      ["confirmation", "leaving@example.com"],
    ]);
    expect({
      status: right.status,
      text: right.text.match(/<div class="errors"[\s\S]*?<\/div>/)?.[0],
    }).toEqual({ status: 303, text: undefined });
    expect(right.location).toBe("/dashboard/team?notice=removed");
    expect((await leaving.get("/dashboard")).status).toBe(303);
    expect((await owner.get("/dashboard/team")).text).not.toContain("leaving@example.com");
  });

  test("a member has no remove, resend or revoke controls, and a forged removal is refused", async () => {
    const r = await member.get("/dashboard/team");
    expect(r.text).not.toContain('/remove"');
    expect(r.text).not.toContain('/resend"');
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
    expect(r.text).toContain('aria-current="page">Billing</a>');
    expect(r.text).toContain("Billing is disabled on this server");
    expect(r.text).toContain(`<caption>X usage in ${month} (UTC)</caption>`);
    expect(r.text).toContain("<td>Acme</td><td>3</td><td>2</td><td>5 of 50</td>");
    expect(r.text).not.toContain(world.foreignWorkspaceId);
  });

  test("an admin sees it; a member without billing:read is refused", async () => {
    const admin = await world.signedInAs("admin");
    expect((await admin.get("/dashboard/billing")).status).toBe(200);
    const r = await member.get("/dashboard/billing");
    expect(r.status).toBe(403);
    expectDashboardPage("/dashboard/billing (member)", r);
    expect(r.text).toContain("cannot see billing");
  });
});

describe("invitations over time", () => {
  test("an invitation past its expiry is listed as expired", async () => {
    world.s.clock.advance(8 * 24 * 60 * 60 * 1000);
    // Sessions end sooner than invitations: sign in again.
    const r = await (await world.signedIn()).get("/dashboard/team");
    expect(r.text).toMatch(
      /<td>new\.person@example\.com<\/td><td>member<\/td><td><span class="badge neutral">expired<\/span>/,
    );
  });
});
