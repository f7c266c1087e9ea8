import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engineOf } from "../src/db/engine.ts";
import { inTransaction } from "../src/db/transaction.ts";
import { insertInFlightKey } from "../src/modules/idempotency/repo.ts";
import { IDEMPOTENCY_TTL_MS, idempotencyRequestHash } from "../src/modules/idempotency/service.ts";
import { expectProblem } from "./helpers/problems.ts";
import { startTestServer, type TestAccount, type TestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

/** The two idempotent operations we have: one requires the key, one takes it optionally. */
const OPERATIONS = [
  {
    name: "POST /account/invitations",
    path: "/v1/account/invitations",
    table: "invitations",
    required: true,
    body: (n: number) => ({ email: `person${n}@example.com` }),
  },
  {
    name: "POST /workspaces",
    path: "/v1/workspaces",
    table: "workspaces",
    required: false,
    body: (n: number) => ({ name: `Workspace ${n}` }),
  },
];

let unique = 0;
const newKey = () => `idem-${++unique}-${crypto.randomUUID()}`;

/** POSTs `body` with an Idempotency-Key (none when null), as the owner unless `account` is given. */
function send(path: string, body: unknown, idempotencyKey: string | null, account?: TestAccount) {
  const headers: Record<string, string> =
    idempotencyKey === null ? {} : { "idempotency-key": idempotencyKey };
  return s.request("POST", path, { body, headers, key: account?.apiKey });
}

/** Rows of a table that belong to an account. */
async function count(table: string, accountId = s.owner.accountId): Promise<number> {
  const sql = `SELECT count(*) AS n FROM ${table} WHERE account_id = ?`;
  const [row] = await engineOf(s.herald.db).query<{ n: number | string }>(sql, [accountId]);
  return Number(row!.n); // PostgreSQL answers a bigint count as text
}

describe("the Idempotency-Key header", () => {
  test("is required on POST /account/invitations: a missing key is 400 naming the header", async () => {
    const before = await count("invitations");
    const r = await send("/v1/account/invitations", { email: "nokey@example.com" }, null);
    expectProblem(r, 400, "public_invalid_request");
    expect(r.body.errors[0].parameter).toBe("Idempotency-Key");
    expect(r.body.detail).toContain("Idempotency-Key");
    expect(await count("invitations")).toBe(before);
  });

  test("is optional on POST /workspaces: without one each request creates", async () => {
    const before = await count("workspaces");
    for (let i = 0; i < 2; i++) {
      const r = await send("/v1/workspaces", { name: "No key" }, null);
      expect(r.status).toBe(201);
      expect(r.headers.get("idempotent-replayed")).toBeNull();
    }
    expect(await count("workspaces")).toBe(before + 2);
  });

  const lengths = [
    { name: "1 character", key: "k", ok: true },
    { name: "200 characters", key: "k".repeat(200), ok: true },
    { name: "201 characters", key: "k".repeat(201), ok: false },
    { name: "empty", key: "", ok: false },
  ];
  for (const op of OPERATIONS) {
    for (const c of lengths) {
      test(`${op.name}: a key of ${c.name} is ${c.ok ? "accepted" : "400"}`, async () => {
        const account = await s.bootstrap(); // a fresh account, so the short key is unused
        const before = await count(op.table, account.accountId);
        const r = await send(op.path, op.body(++unique), c.key, account);
        if (c.ok) {
          expect(r.status).toBe(201);
          expect(await count(op.table, account.accountId)).toBe(before + 1);
        } else {
          expectProblem(r, 400, "public_invalid_request");
          expect(r.body.errors[0].parameter).toBe("Idempotency-Key");
          expect(await count(op.table, account.accountId)).toBe(before);
        }
      });
    }
  }
});

for (const op of OPERATIONS) {
  describe(`${op.name}: same key`, () => {
    test("same body replays the first status, body and ETag without creating again", async () => {
      const key = newKey();
      const body = op.body(++unique);
      const first = await send(op.path, body, key);
      expect(first.status).toBe(201);
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      const before = await count(op.table);
      s.clock.advance(60_000); // a replay is the stored answer, not a fresh one with a new time
      const again = await send(op.path, body, key);
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.headers.get("content-type")).toStartWith("application/json");
      // Less what is shown once: an invitation's link to pass on (no mail here; invitation-link.test.ts).
      const { invitation_url: _shownOnce, ...rest } = first.body;
      expect(again.body).toEqual(rest);
      expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
      expect(await count(op.table)).toBe(before);
    });

    test("a different body is 409 public_idempotency_key_reused", async () => {
      const key = newKey();
      expect((await send(op.path, op.body(++unique), key)).status).toBe(201);
      const before = await count(op.table);
      const r = await send(op.path, op.body(++unique), key);
      expectProblem(r, 409, "public_idempotency_key_reused");
      expect(r.body.category).toBe("conflict");
      expect(r.body.retryable).toBe(false);
      expect(await count(op.table)).toBe(before);
    });

    test("the same key on another operation is 409 public_idempotency_key_reused", async () => {
      const key = newKey();
      expect((await send(op.path, op.body(++unique), key)).status).toBe(201);
      const other = OPERATIONS.find((o) => o !== op)!;
      expectProblem(await send(other.path, other.body(++unique), key), 409, "public_idempotency_key_reused");
    });

    test("a key left in flight by a crashed request is 409 public_idempotency_outcome_unknown", async () => {
      const key = newKey();
      const body = op.body(++unique);
      // What runIdempotent stores before running the operation; a crash leaves it like this.
      const requestHash = idempotencyRequestHash("POST", op.path, s.owner.accountId, body);
      const now = s.clock.now();
      await inTransaction(s.herald.db, (tx) =>
        insertInFlightKey(tx, {
          accountId: s.owner.accountId,
          key,
          requestHash,
          createdAt: now,
          expiresAt: now + IDEMPOTENCY_TTL_MS,
        }),
      );
      const before = await count(op.table);
      for (let i = 0; i < 2; i++) {
        const r = await send(op.path, body, key);
        expectProblem(r, 409, "public_idempotency_outcome_unknown");
        expect(r.body.retryable).toBe(false);
        expect(r.body.retry.safety).toBe("not_retryable");
        expect(r.body.user_action).toBe("inspect_resource");
        expect(r.body.category).toBe("conflict");
      }
      expect(await count(op.table)).toBe(before);
    });

    test("keys are per account: another account may use the same key", async () => {
      const key = newKey();
      const body = op.body(++unique);
      const mine = await send(op.path, body, key);
      const other = await s.bootstrap();
      const before = await count(op.table, other.accountId);
      const theirs = await send(op.path, body, key, other);
      expect(theirs.status).toBe(201);
      expect(theirs.headers.get("idempotent-replayed")).toBeNull();
      expect(theirs.body.id).not.toBe(mine.body.id);
      expect(await count(op.table, other.accountId)).toBe(before + 1);
    });

    test("a key is remembered for 24 h, then free for new work", async () => {
      const key = newKey();
      const body = op.body(++unique);
      const first = await send(op.path, body, key);
      s.clock.advance(IDEMPOTENCY_TTL_MS - 1);
      expect((await send(op.path, body, key)).headers.get("idempotent-replayed")).toBe("true");
      expectProblem(await send(op.path, op.body(++unique), key), 409, "public_idempotency_key_reused");
      s.clock.advance(1);
      const before = await count(op.table);
      const reused = await send(op.path, op.body(++unique), key);
      expect(reused.status).toBe(201);
      expect(reused.headers.get("idempotent-replayed")).toBeNull();
      expect(reused.body.id).not.toBe(first.body.id);
      expect(await count(op.table)).toBe(before + 1);
      // ...and the new work is what the key now replays.
      const replay = await send(
        op.path,
        reused.body.email ? { email: reused.body.email } : { name: reused.body.name },
        key,
      );
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body.id).toBe(reused.body.id);
    });
  });
}

describe("a refused request does not burn its key", () => {
  const refusals = [
    {
      name: "schema validation (POST /workspaces)",
      path: "/v1/workspaces",
      bad: { name: "" },
      good: { name: "Fixed" },
      status: 400,
    },
    {
      name: "a time zone the service refuses (POST /workspaces)",
      path: "/v1/workspaces",
      bad: { name: "TZ", time_zone: "Mars/Base" },
      good: { name: "TZ", time_zone: "Europe/Paris" },
      status: 400,
    },
    {
      name: "schema validation (POST /account/invitations)",
      path: "/v1/account/invitations",
      bad: { email: "not-an-address" },
      good: { email: "fixed@example.com" },
      status: 400,
    },
  ];
  for (const c of refusals) {
    test(c.name, async () => {
      const key = newKey();
      const refused = await send(c.path, c.bad, key);
      expect(refused.status).toBe(c.status);
      const ok = await send(c.path, c.good, key);
      expect(ok.status).toBe(201);
      expect(ok.headers.get("idempotent-replayed")).toBeNull();
    });
  }

  test("an invitation refused as a conflict (already a member) frees its key too", async () => {
    const key = newKey();
    const sql = "SELECT email FROM users WHERE account_id = ?";
    const [owner] = await engineOf(s.herald.db).query<{ email: string }>(sql, [s.owner.accountId]);
    const ownerEmail = owner!.email;
    expectProblem(await send("/v1/account/invitations", { email: ownerEmail }, key), 409, "public_conflict");
    expect((await send("/v1/account/invitations", { email: "after-conflict@example.com" }, key)).status).toBe(
      201,
    );
  });
});

describe("the request hash ignores key order", () => {
  test("the same body with its keys in another order replays, it is not a conflict", async () => {
    const s = await startTestServer();
    try {
      const headers = { "idempotency-key": "order-1" };
      const first = await s.request("POST", "/v1/workspaces", {
        body: '{"name":"Ordered","time_zone":"UTC"}',
        headers,
      });
      expect(first.status).toBe(201);
      const again = await s.request("POST", "/v1/workspaces", {
        body: '{"time_zone":"UTC","name":"Ordered"}',
        headers,
      });
      expect(again.status).toBe(201);
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(again.body.id).toBe(first.body.id);
    } finally {
      await s.stop();
    }
  });
});
