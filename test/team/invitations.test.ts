import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { tables } from "../helpers/tables.ts";
import { expectProblem } from "../helpers/problems.ts";
import type { TestServer } from "../helpers/server.ts";
import { TestBrowser } from "../helpers/browser.ts";
import { expectPasswordFieldError, STRONG_PASSWORD, weakPasswords } from "../helpers/passwords.ts";
import type { SmtpSink } from "../feedback/smtp-sink.ts";
import { invitationLink, invite, startTeamServer } from "./helpers.ts";

const { mailOutbox, users } = tables;

const DAY = 24 * 60 * 60 * 1000;
let s: TestServer;
let sink: SmtpSink;
let stop: () => Promise<void>;
beforeAll(async () => {
  ({ s, sink, stop } = await startTeamServer());
});
afterAll(async () => {
  await stop();
});

const list = (query = "") => s.request("GET", `/v1/account/invitations${query}`);
const action = (id: string, verb: "resend" | "revoke", key?: string) =>
  s.request("POST", `/v1/account/invitations/${id}/${verb}`, { key, body: { confirmed: true } });
const JOIN = {
  name: "Ada Lovelace",
  password: "correct horse battery",
  password_confirmation: "correct horse battery",
};

describe("listing, resending and revoking", () => {
  test("the listing shows open invitations newest first, pending then expired, paged", async () => {
    const first = (await invite(s, "first@example.com")).body;
    s.clock.advance(8 * DAY);
    const second = (await invite(s, "second@example.com")).body;
    const r = await list();
    expect(r.status).toBe(200);
    const ids = r.body.data.map((i: { id: string }) => i.id);
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
    const byId = Object.fromEntries(r.body.data.map((i: { id: string; status: string }) => [i.id, i.status]));
    expect(byId[first.id]).toBe("expired");
    expect(byId[second.id]).toBe("pending");
    expect(r.body.data[0]).toMatchObject({ object: "account_invitation", role: "member" });

    const page = await list("?limit=1");
    expect(page.body.data.length).toBe(1);
    expect(page.body.has_more).toBe(true);
    expect(page.headers.get("link")).toContain('rel="next"');
    const next = await list(`?limit=1&after=${encodeURIComponent(page.body.next_cursor)}`);
    expect(next.body.data[0].id).toBe(ids[1]);
    expectProblem(await list("?after=bogus"), 400, "public_invalid_request", ["/after"]);
  });

  test("resend: a new e-mail with a new link and a new expiry; the old link stops working", async () => {
    const created = (await invite(s, "again@example.com")).body;
    const oldLink = await invitationLink(s, sink, "again@example.com");
    s.clock.advance(8 * DAY);
    expect((await list()).body.data.find((i: { id: string }) => i.id === created.id).status).toBe("expired");
    const r = await action(created.id, "resend");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: created.id, status: "pending", delivery: { status: "pending" } });
    expect(Date.parse(r.body.expires_at)).toBe(s.clock.now() + 7 * DAY);
    expect(r.body.delivery.requested_at).toBe(new Date(s.clock.now()).toISOString());
    const newLink = await invitationLink(s, sink, "again@example.com");
    expect(newLink).not.toBe(oldLink);
    const browser = new TestBrowser(s);
    expect((await browser.get(oldLink)).status).toBe(404);
    expect((await browser.get(newLink)).status).toBe(200);
  });

  test("a resend withdraws the earlier e-mail when it has not gone out yet", async () => {
    const created = (await invite(s, "twice@example.com")).body;
    await action(created.id, "resend");
    const mails = await s.herald.db
      .select()
      .from(mailOutbox)
      .where(eq(mailOutbox.invitationId, Number(created.id)))
      .orderBy(mailOutbox.id);
    expect(mails.map((m) => [m.status, m.lastError])).toEqual([
      ["failed", "replaced by a newer e-mail"],
      ["pending", null],
    ]);
    const sent = sink.messages.length;
    await s.server.scheduler.runNow("mail-outbox");
    expect(sink.messages.length).toBe(sent + 1);
  });

  test("revoke: the link stops working and the invitation leaves the listing; again is 404", async () => {
    const created = (await invite(s, "gone@example.com")).body;
    const link = await invitationLink(s, sink, "gone@example.com");
    const r = await action(created.id, "revoke");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: created.id,
      object: "account_invitation",
      email: "gone@example.com",
      revoked: true,
    });
    expect((await list()).body.data.some((i: { id: string }) => i.id === created.id)).toBe(false);
    const page = await new TestBrowser(s).get(link);
    expect(page.status).toBe(410);
    expect(page.text).toContain("withdrawn");
    expectProblem(await action(created.id, "revoke"), 404, "public_not_found");
    expectProblem(await action(created.id, "resend"), 404, "public_not_found");
  });

  test("unknown, malformed and other accounts' ids are 404", async () => {
    for (const id of ["999999", "abc", "0", "1e3"])
      expectProblem(await action(id, "resend"), 404, "public_not_found");
    const other = await s.bootstrap();
    const theirs = (await invite(s, "theirs@example.com", { key: other.apiKey })).body;
    expectProblem(await action(theirs.id, "revoke"), 404, "public_not_found");
  });

  test("scopes: team:read lists, team:write resends and revokes", async () => {
    const reader = await s.createKey({ scopes: ["team:read"] });
    expect((await s.request("GET", "/v1/account/invitations", { key: reader })).status).toBe(200);
    const created = (await invite(s, "scoped@example.com")).body;
    expectProblem(await action(created.id, "revoke", reader), 403, "public_scope_missing");
  });
});

describe("roles", () => {
  test("an invitation is for a member unless it says admin or owner", async () => {
    expect((await invite(s, "m@example.com")).body.role).toBe("member");
    expect((await invite(s, "a@example.com", { role: "admin" })).body.role).toBe("admin");
    expect((await invite(s, "o@example.com", { role: "owner" })).body.role).toBe("owner");
  });

  test("a credential can only grant a role whose every scope it holds", async () => {
    const adminLike = await s.createKey({
      scopes: ["team:write", "workspaces:read", "workspaces:write", "posts:read", "posts:write"],
    });
    expect((await invite(s, "member2@example.com", { key: adminLike })).status).toBe(201);
    const r = await invite(s, "boss@example.com", { key: adminLike, role: "owner" });
    expectProblem(r, 403, "public_scope_missing", ["/role"]);
    expect(r.body.detail).toContain("billing:write");
    expectProblem(await invite(s, "x@example.com", { role: "superuser" }), 400, "public_invalid_request", [
      "/role",
    ]);
  });
});

describe("accepting through the e-mailed link", () => {
  test("a new person names themselves, chooses a password and is signed in to the account", async () => {
    const created = (await invite(s, "Ada@Example.com", { role: "admin" })).body;
    const link = await invitationLink(s, sink, "Ada@Example.com");
    const browser = new TestBrowser(s);
    const page = await browser.get(link);
    expect(page.status).toBe(200);
    expect(page.text).toContain("Join Test workspace on Herald");
    expect(page.text).toContain("Ada@Example.com");
    expect(page.text).toContain("admin");
    expect(page.text).not.toContain("<script");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");

    const done = await browser.submit(link, JOIN);
    expect(done.status).toBe(303);
    expect(done.location).toBe("/dashboard");
    expect(done.setCookies.some((c) => c.startsWith("herald_session=") && c.includes("HttpOnly"))).toBe(true);
    const [user] = await s.herald.db.select().from(users).where(eq(users.email, "ada@example.com"));
    expect(user).toMatchObject({ accountId: s.owner.accountId, role: "admin", name: "Ada Lovelace" });
    expect((await browser.get("/dashboard")).status).toBe(200);

    const members = await s.request("GET", "/v1/account/members");
    expect(members.body.data[0]).toMatchObject({
      id: user!.id,
      email: "ada@example.com",
      role: "admin",
      name: "Ada Lovelace",
    });
    expect((await list()).body.data.some((i: { id: string }) => i.id === created.id)).toBe(false);
    const again = await new TestBrowser(s).get(link);
    expect(again.status).toBe(410);
    expect(again.text).toContain("already accepted");
    // The password works on the sign-in page.
    await new TestBrowser(s).signIn("ada@example.com", JOIN.password);
    const audit = await s.request("GET", "/v1/audit-records");
    expect(audit.body.data.some((a: { action: string }) => a.action === "invitation.accepted")).toBe(true);
  });

  test("form errors come back on the page with the name kept; nothing is created", async () => {
    await invite(s, "typo@example.com");
    const link = await invitationLink(s, sink, "typo@example.com");
    const browser = new TestBrowser(s);
    const r = await browser.submit(link, {
      name: "Grace",
      password: "short",
      password_confirmation: "short",
    });
    expect(r.status).toBe(400);
    expect(r.text).toContain('value="Grace"');
    expect(r.text).toContain("at least 10 characters");
    const mismatch = await browser.submit(link, {
      ...JOIN,
      password_confirmation: "something else entirely",
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.text).toContain("The two passwords differ.");
    const blank = await browser.submit(link, { ...JOIN, name: "  " });
    expect(blank.status).toBe(400);
    expect(await s.herald.db.select().from(users).where(eq(users.email, "typo@example.com"))).toEqual([]);
  });

  test("weak passwords are refused next to the field; the invitation stays open for a strong one", async () => {
    await invite(s, "weakling@example.com");
    const link = await invitationLink(s, sink, "weakling@example.com");
    const browser = new TestBrowser(s);
    for (const { what, password, message } of weakPasswords("weakling@example.com")) {
      const r = await browser.submit(link, { name: "Weakling", password, password_confirmation: password });
      expect({ what, status: r.status }).toEqual({ what, status: 400 });
      expectPasswordFieldError(r.text, message);
    }
    expect(await s.herald.db.select().from(users).where(eq(users.email, "weakling@example.com"))).toEqual([]);
    const strong = { name: "Weakling", password: STRONG_PASSWORD, password_confirmation: STRONG_PASSWORD };
    expect((await browser.submit(link, strong)).status).toBe(303);
  });

  test("a form without this browser's CSRF token is refused", async () => {
    await invite(s, "csrf@example.com");
    const link = await invitationLink(s, sink, "csrf@example.com");
    const browser = new TestBrowser(s);
    await browser.get(link);
    const r = await browser.post(link, { ...JOIN, csrf_token: "forged" });
    expect(r.status).toBe(403);
    expect(await s.herald.db.select().from(users).where(eq(users.email, "csrf@example.com"))).toEqual([]);
  });

  test("an address that has an account elsewhere cannot accept: it is told why", async () => {
    await s.bootstrap("taken@example.com", "Elsewhere");
    await invite(s, "taken@example.com");
    const link = await invitationLink(s, sink, "taken@example.com");
    const browser = new TestBrowser(s);
    const page = await browser.get(link);
    expect(page.status).toBe(409);
    expect(page.text).toContain("This address already has a Herald account");
    expect(page.text).toContain("belongs to one account");
  });

  test("expired and unknown links say so", async () => {
    await invite(s, "late@example.com");
    const link = await invitationLink(s, sink, "late@example.com");
    s.clock.advance(7 * DAY);
    const expired = await new TestBrowser(s).get(link);
    expect(expired.status).toBe(410);
    expect(expired.text).toContain("expired");
    expect((await new TestBrowser(s).get("/invitations/nonsense")).status).toBe(404);
  });
});
