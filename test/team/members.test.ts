import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { tables } from "../helpers/tables.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { createApiKey } from "../../src/modules/keys/service.ts";
import { expectProblem } from "../helpers/problems.ts";
import type { TestServer } from "../helpers/server.ts";
import { TestBrowser } from "../helpers/browser.ts";
import type { SmtpSink } from "../feedback/smtp-sink.ts";
import { invitationLink, invite, startTeamServer } from "./helpers.ts";

const { apiKeys, cliAuthorizations, sessions, users } = tables;

let s: TestServer;
let sink: SmtpSink;
let stop: () => Promise<void>;
beforeAll(async () => {
  ({ s, sink, stop } = await startTeamServer());
});
afterAll(async () => {
  await stop();
});

const PASSWORD = "correct horse battery";
const remove = (id: string, body: unknown, key?: string) =>
  s.request("POST", `/v1/account/members/${id}/remove`, { key, body });

/** Someone who joined the owner's account through an invitation, signed in in `browser`. */
async function join(email: string, role = "member"): Promise<{ id: string; browser: TestBrowser }> {
  expect((await invite(s, email, { role })).status).toBe(201);
  const link = await invitationLink(s, sink, email);
  const browser = new TestBrowser(s);
  const done = await browser.submit(link, {
    name: email,
    password: PASSWORD,
    password_confirmation: PASSWORD,
  });
  expect(done.status).toBe(303);
  const [user] = await s.herald.db.select().from(users).where(eq(users.email, email));
  return { id: user!.id, browser };
}

/** A key the person created in the dashboard. */
async function keyCreatedBy(userId: string): Promise<{ apiKey: string; credentialId: string }> {
  return inTransaction(s.herald.db, (tx) =>
    createApiKey(
      tx,
      {
        accountId: s.owner.accountId,
        name: "their key",
        environment: "live",
        scopes: ["posts:read"],
        workspaceAccessMode: "all",
        workspaceIds: [],
        expiresAt: null,
        createdByUserId: userId,
      },
      s.clock.now(),
    ),
  );
}

describe("GET /account/members", () => {
  test("lists the account's people newest first, paged, never another account's", async () => {
    await s.bootstrap("stranger@example.com", "Elsewhere");
    const a = await join("list-a@example.com");
    const b = await join("list-b@example.com", "admin");
    const r = await s.request("GET", "/v1/account/members");
    expect(r.status).toBe(200);
    expect(r.body.has_more).toBe(false);
    const emails = r.body.data.map((m: { email: string }) => m.email);
    expect(emails.slice(0, 2)).toEqual(["list-b@example.com", "list-a@example.com"]);
    expect(emails).not.toContain("stranger@example.com");
    expect(r.body.data[0]).toEqual({
      id: b.id,
      object: "account_member",
      email: "list-b@example.com",
      name: "list-b@example.com",
      role: "admin",
      created_at: "2026-03-01T12:00:00.000Z",
    });
    expect(r.body.data.at(-1)).toMatchObject({ role: "owner", name: null });
    const first = await s.request("GET", "/v1/account/members?limit=1");
    expect(first.body.data[0].id).toBe(b.id);
    expect(first.headers.get("link")).toContain('rel="next"');
    const second = await s.request("GET", `/v1/account/members?limit=1&after=${first.body.next_cursor}`);
    expect(second.body.data[0].id).toBe(a.id);
    expectProblem(await s.request("GET", "/v1/account/members?limit=0"), 400, "public_invalid_request", [
      "/limit",
    ]);
    const reader = await s.createKey({ scopes: ["team:read"] });
    expect((await s.request("GET", "/v1/account/members", { key: reader })).status).toBe(200);
  });
});

describe("POST /account/members/{id}/remove", () => {
  test("needs confirmed: true and the member's address as confirmation", async () => {
    const m = await join("confirm-me@example.com");
    const cases: { body: unknown; pointer: string }[] = [
      { body: { confirmed: false, confirmation: "confirm-me@example.com" }, pointer: "/confirmed" },
      { body: { confirmation: "confirm-me@example.com" }, pointer: "/confirmed" },
      { body: { confirmed: true }, pointer: "/confirmation" },
      { body: { confirmed: true, confirmation: "someone-else@example.com" }, pointer: "/confirmation" },
      { body: { confirmed: true, confirmation: "" }, pointer: "/confirmation" },
      { body: { confirmed: true, confirmation: "confirm-me@example.com", force: true }, pointer: "/force" },
    ];
    for (const c of cases)
      expectProblem(await remove(m.id, c.body), 400, "public_invalid_request", [c.pointer]);
    expect((await s.herald.db.select().from(users).where(eq(users.id, m.id))).length).toBe(1);
    // Letter case and surrounding spaces aside, the address is the confirmation.
    const r = await remove(m.id, { confirmed: true, confirmation: " Confirm-Me@Example.com " });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: m.id,
      object: "account_member",
      email: "confirm-me@example.com",
      removed: true,
      revoked_key_ids: [],
    });
  });

  test("unknown members and other accounts' members are 404", async () => {
    expectProblem(
      await remove("usr_00000000000000000000000000", { confirmed: true, confirmation: "x@example.com" }),
      404,
      "public_not_found",
    );
    const other = await s.bootstrap("other-owner@example.com", "Other");
    const [theirs] = await s.herald.db.select().from(users).where(eq(users.accountId, other.accountId));
    expectProblem(
      await remove(theirs!.id, { confirmed: true, confirmation: "other-owner@example.com" }),
      404,
      "public_not_found",
    );
  });

  test("the last owner cannot be removed; with a second owner, one can", async () => {
    const [owner] = await s.herald.db
      .select()
      .from(users)
      .where(eq(users.accountId, s.owner.accountId))
      .orderBy(users.id);
    const refused = await remove(owner!.id, { confirmed: true, confirmation: owner!.email });
    expectProblem(refused, 409, "public_conflict");
    expect(refused.body.detail).toContain("only owner");
    const second = await join("second-owner@example.com", "owner");
    const r = await remove(second.id, { confirmed: true, confirmation: "second-owner@example.com" });
    expect(r.status).toBe(200);
    expectProblem(
      await remove(owner!.id, { confirmed: true, confirmation: owner!.email }),
      409,
      "public_conflict",
    );
  });

  test("removal signs the person out everywhere and revokes the keys they hold", async () => {
    const m = await join("leaver@example.com", "admin");
    expect((await m.browser.get("/dashboard")).status).toBe(200);
    const own = await keyCreatedBy(m.id);
    // A key minted by their `herald login` approval: no creator, found through the authorization.
    const cli = await keyCreatedBy(m.id);
    await inTransaction(s.herald.db, async (tx) => {
      await tx.update(apiKeys).set({ createdByUserId: null }).where(eq(apiKeys.id, cli.credentialId));
      await tx.insert(cliAuthorizations).values({
        id: "cla_leaver",
        deviceSecretHash: "x".repeat(64),
        userCodeHash: "y".repeat(64),
        deviceName: "laptop",
        cliVersion: null,
        status: "exchanged",
        intervalSeconds: 5,
        lastPolledAt: null,
        createdAt: s.clock.now(),
        expiresAt: s.clock.now() + 600_000,
        decidedAt: s.clock.now(),
        accountId: s.owner.accountId,
        userId: m.id,
        workspaceId: s.owner.workspaceId,
        credentialId: cli.credentialId,
        exchangedAt: s.clock.now(),
      });
    });
    expect((await s.request("GET", "/v1/account", { key: own.apiKey })).status).toBe(200);

    const r = await remove(m.id, { confirmed: true, confirmation: "leaver@example.com" });
    expect(r.status).toBe(200);
    expect([...r.body.revoked_key_ids].sort()).toEqual([own.credentialId, cli.credentialId].sort());
    expect(await s.herald.db.select().from(sessions).where(eq(sessions.userId, m.id))).toEqual([]);
    const after = await m.browser.get("/dashboard");
    expect(after.status).toBe(303);
    expect(after.location).toStartWith("/login");
    for (const key of [own.apiKey, cli.apiKey])
      expectProblem(await s.request("GET", "/v1/account", { key }), 401, "public_authentication_required");
    const [history] = await s.herald.db
      .select()
      .from(cliAuthorizations)
      .where(eq(cliAuthorizations.id, "cla_leaver"));
    expect(history!.userId).toBeNull();
    const [key] = await s.herald.db.select().from(apiKeys).where(eq(apiKeys.id, own.credentialId));
    expect(key).toMatchObject({ createdByUserId: null, revokedAt: s.clock.now() });
    const audit = (await s.request("GET", "/v1/audit-records")).body.data.map((a: any) => [
      a.action,
      a.target.id,
    ]);
    expect(audit).toContainEqual(["account_member.removed", m.id]);
    expect(audit).toContainEqual(["api_key.revoked", own.credentialId]);
    // The address is free again: it can be invited anew.
    expect((await invite(s, "leaver@example.com")).status).toBe(201);
  });

  test("needs team:write; an Idempotency-Key replays the removal", async () => {
    const m = await join("replay@example.com");
    const reader = await s.createKey({ scopes: ["team:read"] });
    expectProblem(
      await remove(m.id, { confirmed: true, confirmation: "replay@example.com" }, reader),
      403,
      "public_scope_missing",
    );
    const send = () =>
      s.request("POST", `/v1/account/members/${m.id}/remove`, {
        headers: { "idempotency-key": "remove-replay" },
        body: { confirmed: true, confirmation: "replay@example.com" },
      });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
  });
});
