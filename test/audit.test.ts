import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ALL_SCOPES, type Scope } from "../src/core/scopes.ts";
import { engineOf } from "../src/db/engine.ts";
import { expectProblem } from "./helpers/problems.ts";
import { startTestServer, type TestResponse, type TestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

interface AuditRecord {
  id: string;
  object: string;
  action: string;
  credential_id: string | null;
  workspace_id: string | null;
  target: { type: string; id: string };
  request_id: string | null;
  client_request_id: string | null;
  created_at: string;
}

let requestCounter = 0;
const newRequestId = () => `audit-test-${++requestCounter}`;

/** Every audit record the owner can see, newest first (all pages). */
async function allRecords(key = s.owner.apiKey): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  let path: string | null = "/v1/audit-records?limit=100";
  while (path) {
    const r: TestResponse = await s.request("GET", path, { key });
    expect(r.status).toBe(200);
    out.push(...r.body.data);
    path = r.body.next_cursor
      ? `/v1/audit-records?limit=100&after=${encodeURIComponent(r.body.next_cursor)}`
      : null;
  }
  return out;
}

/** The credential id of a key, as GET /account reports it. */
async function credentialIdOf(key: string): Promise<string> {
  return (await s.request("GET", "/v1/account", { key })).body.authentication.credential_id;
}

/** The one record written by the request with this Service-Request-Id (the caller's, kept apart). */
async function recordOf(requestId: string): Promise<AuditRecord> {
  const matches = (await allRecords()).filter((r) => r.client_request_id === requestId);
  expect(matches).toHaveLength(1);
  return matches[0]!;
}

const withRequestId = (requestId: string, headers: Record<string, string> = {}) => ({
  ...headers,
  "service-request-id": requestId,
});

describe("successful writes are recorded", () => {
  const writes: {
    name: string;
    run: (requestId: string, key: string) => Promise<TestResponse>;
    expected: (r: TestResponse) => {
      action: string;
      workspace_id: string | null;
      target: { type: string; id: string };
    };
  }[] = [
    {
      name: "create workspace",
      run: (id, key) =>
        s.request("POST", "/v1/workspaces", { key, body: { name: "Audited" }, headers: withRequestId(id) }),
      expected: (r) => ({
        action: "workspace.created",
        workspace_id: r.body.id,
        target: { type: "workspace", id: r.body.id },
      }),
    },
    {
      name: "patch workspace",
      run: (id, key) =>
        s.request("PATCH", `/v1/workspaces/${s.owner.workspaceId}`, {
          key,
          body: { name: `Renamed ${id}` },
          headers: withRequestId(id),
        }),
      expected: () => ({
        action: "workspace.updated",
        workspace_id: s.owner.workspaceId,
        target: { type: "workspace", id: s.owner.workspaceId },
      }),
    },
    {
      name: "invite to the account",
      run: (id, key) =>
        s.request("POST", "/v1/account/invitations", {
          key,
          body: { email: `${id}@example.com` },
          headers: withRequestId(id, { "idempotency-key": id }),
        }),
      expected: (r) => ({
        action: "invitation.created",
        workspace_id: null,
        target: { type: "account_invitation", id: r.body.id },
      }),
    },
  ];

  for (const w of writes) {
    test(`${w.name}: action, credential, workspace, target and request id`, async () => {
      const key = await s.createKey({});
      const credentialId = await credentialIdOf(key);
      s.clock.advance(1_000);
      const requestId = newRequestId();
      const r = await w.run(requestId, key);
      expect(r.status).toBeLessThan(300);
      const record = await recordOf(requestId);
      expect(record).toEqual({
        id: expect.stringMatching(/^aud_/),
        object: "audit_record",
        ...w.expected(r),
        credential_id: credentialId,
        request_id: expect.stringMatching(/^req_[a-z0-9]+$/),
        client_request_id: requestId,
        created_at: new Date(s.clock.now()).toISOString(),
      });
      // The answer echoes the caller's id, as the contract says; the record keeps Herald's own apart.
      expect(r.headers.get("service-request-id")).toBe(requestId);
      expect(record.request_id).not.toBe(requestId);
    });
  }

  test("without a Service-Request-Id the generated one is recorded", async () => {
    const r = await s.request("POST", "/v1/workspaces", { body: { name: "Generated id" } });
    const generated = r.headers.get("service-request-id")!;
    expect(generated).toMatch(/^req_/);
    const [record] = (await allRecords()).filter((a) => a.request_id === generated);
    expect(record).toMatchObject({ client_request_id: null, target: { id: r.body.id } });
  });

  test("a caller cannot make its record carry another request's id", async () => {
    const earlier = await s.request("PATCH", `/v1/workspaces/${s.owner.workspaceId}`, {
      body: { name: "First" },
    });
    const victimId = earlier.headers.get("service-request-id")!;
    const forged = await s.request("PATCH", `/v1/workspaces/${s.owner.workspaceId}`, {
      body: { name: "Second" },
      headers: withRequestId(victimId),
    });
    expect(forged.headers.get("service-request-id")).toBe(victimId);
    const records = (await allRecords()).filter((a) => a.request_id === victimId);
    expect(records).toHaveLength(1);
    expect(records[0]!.client_request_id).toBeNull();
    const theirs = (await allRecords()).filter((a) => a.client_request_id === victimId);
    expect(theirs).toHaveLength(1);
    expect(theirs[0]!.request_id).not.toBe(victimId);
  });

  test("an idempotent replay records nothing more", async () => {
    const requestId = newRequestId();
    const send = () =>
      s.request("POST", "/v1/account/invitations", {
        body: { email: "replayed@example.com" },
        headers: { "idempotency-key": requestId },
      });
    expect((await send()).status).toBe(201);
    const before = (await allRecords()).length;
    expect((await send()).headers.get("idempotent-replayed")).toBe("true");
    expect((await allRecords()).length).toBe(before);
  });
});

describe("failed writes record nothing", () => {
  const failures: { name: string; status: number; run: (requestId: string) => Promise<TestResponse> }[] = [
    {
      name: "invalid body",
      status: 400,
      run: (id) => s.request("POST", "/v1/workspaces", { body: { name: "" }, headers: withRequestId(id) }),
    },
    {
      name: "refused time zone",
      status: 400,
      run: (id) =>
        s.request("POST", "/v1/workspaces", {
          body: { name: "x", time_zone: "Mars/Base" },
          headers: withRequestId(id),
        }),
    },
    {
      name: "no key",
      status: 401,
      run: (id) =>
        s.request("POST", "/v1/workspaces", { key: null, body: { name: "x" }, headers: withRequestId(id) }),
    },
    {
      name: "missing scope",
      status: 403,
      run: async (id) =>
        s.request("POST", "/v1/workspaces", {
          key: await s.createKey({ scopes: ["workspaces:read"] }),
          body: { name: "x" },
          headers: withRequestId(id),
        }),
    },
    {
      name: "foreign workspace",
      status: 404,
      run: async (id) =>
        s.request("PATCH", `/v1/workspaces/${(await s.bootstrap()).workspaceId}`, {
          body: { name: "x" },
          headers: withRequestId(id),
        }),
    },
    {
      name: "stale If-Match",
      status: 412,
      run: (id) =>
        s.request("PATCH", `/v1/workspaces/${s.owner.workspaceId}`, {
          body: { name: "x" },
          headers: withRequestId(id, { "if-match": '"stale"' }),
        }),
    },
    {
      name: "invitation without Idempotency-Key",
      status: 400,
      run: (id) =>
        s.request("POST", "/v1/account/invitations", {
          body: { email: "a@example.com" },
          headers: withRequestId(id),
        }),
    },
    {
      name: "invitation of an existing member",
      status: 409,
      run: async (id) =>
        s.request("POST", "/v1/account/invitations", {
          body: { email: await ownerEmail() },
          headers: withRequestId(id, { "idempotency-key": id }),
        }),
    },
  ];
  for (const f of failures) {
    test(`${f.name} (${f.status})`, async () => {
      const before = await countAuditRows();
      const requestId = newRequestId();
      expect((await f.run(requestId)).status).toBe(f.status);
      expect(await countAuditRows()).toBe(before);
      expect((await allRecords()).some((r) => r.client_request_id === requestId)).toBe(false);
    });
  }
});

/** The owner account's audit rows, counted in the database. */
async function countAuditRows(): Promise<number> {
  const sql = "SELECT count(*) AS n FROM audit_records WHERE account_id = ?";
  const [row] = await engineOf(s.herald.db).query<{ n: number | string }>(sql, [s.owner.accountId]);
  return Number(row!.n); // PostgreSQL answers a bigint count as text
}

/** The owner's address (inviting it is a conflict). */
async function ownerEmail(): Promise<string> {
  const sql = "SELECT email FROM users WHERE account_id = ?";
  const [row] = await engineOf(s.herald.db).query<{ email: string }>(sql, [s.owner.accountId]);
  return row!.email;
}

describe("reading the audit log", () => {
  test("needs audit:read: 403 without it, 200 with only it", async () => {
    const without = await s.createKey({ scopes: ALL_SCOPES.filter((x) => x !== "audit:read") as Scope[] });
    expectProblem(await s.request("GET", "/v1/audit-records", { key: without }), 403, "public_scope_missing");
    const only = await s.createKey({ scopes: ["audit:read"] });
    expect((await s.request("GET", "/v1/audit-records", { key: only })).status).toBe(200);
  });

  test("records are newest first and never show another account's", async () => {
    const foreign = await s.bootstrap();
    await s.request("POST", "/v1/workspaces", { key: foreign.apiKey, body: { name: "Theirs" } });
    const records = await allRecords();
    const ids = records.map((r) => r.id);
    expect(ids).toEqual([...ids].sort().reverse());
    const theirs = await allRecords(foreign.apiKey);
    expect(theirs.length).toBeGreaterThan(0);
    for (const r of theirs) expect(ids).not.toContain(r.id);
    expect(records.map((r) => r.target.id)).not.toContain(foreign.accountId);
  });

  test("a selected-access key sees account-level records and its workspaces' records only", async () => {
    const selected = (await s.request("POST", "/v1/workspaces", { body: { name: "Visible" } })).body.id;
    const hidden = (await s.request("POST", "/v1/workspaces", { body: { name: "Hidden" } })).body.id;
    await s.request("PATCH", `/v1/workspaces/${hidden}`, { body: { name: "Hidden 2" } });
    await s.request("POST", "/v1/account/invitations", {
      body: { email: "visible@example.com" },
      headers: { "idempotency-key": newRequestId() },
    });

    const key = await s.createKey({ scopes: ["audit:read"], workspaceIds: [selected] });
    const seen = await allRecords(key);
    const everything = await allRecords();
    const expected = everything.filter((r) => r.workspace_id === null || r.workspace_id === selected);
    expect(seen).toEqual(expected);
    expect(seen.some((r) => r.workspace_id === selected)).toBe(true);
    expect(seen.some((r) => r.action === "invitation.created")).toBe(true);
    expect(seen.some((r) => r.action === "account.bootstrapped")).toBe(true);
    expect(seen.some((r) => r.workspace_id === hidden)).toBe(false);
    expect(everything.some((r) => r.workspace_id === hidden)).toBe(true);
  });
});
