import { afterAll, describe, expect, test } from "bun:test";
import { engineOf } from "../src/db/engine.ts";
import { newId } from "../src/db/ids.ts";
import { inTransaction } from "../src/db/transaction.ts";
import { tables } from "./helpers/tables.ts";
import { ALL_SCOPES, type Scope } from "../src/core/scopes.ts";
import { sha256Hex } from "../src/lib/crypto.ts";
import { setWebhookTransport } from "../src/modules/webhooks/transport.ts";
import { expectProblem } from "./helpers/problems.ts";
import { startTestServer, type RequestOptions, type TestResponse } from "./helpers/server.ts";
import { inline } from "./fuzz/document.ts";
import { insertPostAnalytics } from "../src/modules/analytics/repo.ts";
import { findPostById, type PostRow } from "../src/modules/posts/repo.ts";
import { requestApprovals } from "../src/modules/approvals/request.ts";
import type { Actor } from "../src/core/actor.ts";
import { insertAsset, insertXDestination, X_APP_ENV } from "./posts/fixtures.ts";

const { destinationConnections, users } = tables;

// The auth matrix walks every operation of the server's own OpenAPI document, so a new route is
// covered the moment it is documented: no key, a bad key, a missing scope, a foreign workspace.

// Hundreds of 401s from one address by design: the failed-authentication limit is raised out of the way.
const s = await startTestServer({ env: { HERALD_AUTH_FAILURES_PER_MINUTE: "1000000", ...X_APP_ENV } });
afterAll(async () => {
  await s.stop();
});
// Webhook URLs resolve through a stub DNS: hooks.example.com is a public address.
setWebhookTransport(s.herald, { resolve: async () => ["93.184.216.34"] });

// With its named schemas inlined: the bodies below are sampled from the schemas themselves.
const named = (await s.request("GET", "/v1/openapi.json", { key: null })).body;
const doc = inline(named, named);

interface Operation {
  method: string;
  path: string;
  scope: string;
  spec: any;
}

const HTTP_METHODS = ["get", "put", "post", "patch", "delete"];
const allOperations: Operation[] = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(
  ([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, spec]) => ({
        method: method.toUpperCase(),
        path,
        scope: spec["x-required-scope"],
        spec,
      })),
);
const operations = allOperations.filter((op) => op.scope !== "none");

// Fixtures: a second workspace of the owner's account, a key selected on it only, another account.
const otherWorkspaceId = (await s.request("POST", "/v1/workspaces", { body: { name: "Second" } })).body
  .id as string;
const selectedKey = await s.createKey({ workspaceIds: [otherWorkspaceId] });
const foreign = await s.bootstrap();

/** Minimal valid bodies where the document's schema is not enough (this table wins over the schema). */
const MINIMAL_BODIES: Record<string, unknown> = {
  "POST /workspaces": { name: "Auth matrix" },
  "PATCH /workspaces/{workspace_id}": { name: "Auth matrix" },
  "POST /account/invitations": { email: "auth-matrix@example.com" },
  "POST /workspaces/{workspace_id}/post-imports": {
    csv: "when,channel,body\ndraft,mastodon,Hi\n",
    dry_run: true,
  },
  "POST /workspaces/{workspace_id}/webhook-endpoints": {
    name: "Auth matrix",
    url: "https://hooks.example.com/matrix",
    event_types: ["post.published"],
  },
  "POST /workspaces/{workspace_id}/asset-uploads": {
    kind: "card",
    file_name: "a.png",
    content_type: "image/png",
    byte_size: 10,
    parts: [{ part_number: 1, checksum_crc64nvme: "AAAAAAAAAAA=" }],
  },
};

const owner = (ws: string) => `/v1/workspaces/${ws}`;
const ownerIdem = () => ({ "idempotency-key": `auth-matrix-fixture-${++idempotencyCounter}` });
let groups = 0;

/** The body of a post on a fresh X destination of the workspace, in a group of its own. */
async function postBody(ws: string, when: string): Promise<Record<string, unknown>> {
  const destination = await insertXDestination(s, ws);
  const posts = [{ destination_id: destination, body: ["Hi"] }];
  return { when, confirmed: true, group: `matrix-${++groups}`, posts };
}

const SCHEDULED_AT = "2030-01-01T09:00:00.000Z";

/** A post of the workspace, made by the owner: a draft, scheduled at SCHEDULED_AT, or in the queue. */
async function postOf(ws: string, when: "draft" | "queue" | typeof SCHEDULED_AT): Promise<any> {
  const r = await s.request("POST", `${owner(ws)}/posts`, {
    body: await postBody(ws, when),
    headers: ownerIdem(),
  });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
  return r.body.posts[0];
}

/** Path ids, a body and a query string made for one call. */
type Fixture = { ids?: Record<string, string>; body?: unknown; query?: string };
/** Operations whose call needs a post in a given state, and the body that goes with it. */
const OPERATION_FIXTURES: Record<string, (ws: string) => Promise<Fixture>> = {
  "POST /workspaces/{workspace_id}/posts": async (ws) => ({ body: await postBody(ws, "draft") }),
  "POST /workspaces/{workspace_id}/posts/publish": async (ws) => {
    const draft = await postOf(ws, "draft");
    const posts = [{ id: draft.id, version: draft.version, destination_id: draft.destination_id }];
    return { body: { when: SCHEDULED_AT, confirmed: true, posts } };
  },
  "POST /workspaces/{workspace_id}/posts/move": async (ws) => {
    // Daily windows at 09:00 (the walk's PUT /queue may have cleared them); the test clock is 2026-03-01.
    const windows = [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, local_time: "09:00" }));
    expect((await s.request("PUT", `${owner(ws)}/queue`, { body: { windows } })).status).toBe(200);
    const post = await postOf(ws, "queue");
    const posts = [{ id: post.id, expected_scheduled_at: post.scheduled_at }];
    return { body: { confirmed: true, local_date: "2026-03-05", posts } };
  },
  "POST /workspaces/{workspace_id}/posts/{post_id}/cancel": async (ws) => ({
    ids: { post_id: (await postOf(ws, SCHEDULED_AT)).id },
    body: { confirmed: true },
  }),
  "POST /workspaces/{workspace_id}/posts/{post_id}/reschedule": async (ws) => ({
    ids: { post_id: (await postOf(ws, SCHEDULED_AT)).id },
    body: { confirmed: true, scheduled_at: "2030-02-01T09:00:00Z" },
  }),
  "GET /workspaces/{workspace_id}/analytics/posts": async () => ({
    query: "from=2026-03-01&until=2026-03-08",
  }),
  "POST /account/members/{member_id}/remove": async () => {
    // A member of the owner's account, added as accepting an invitation would.
    const id = newId("usr");
    const email = `${id}@example.com`;
    await inTransaction(s.herald.db, (tx) =>
      tx
        .insert(users)
        .values({ id, accountId: s.owner.accountId, email, role: "member", createdAt: s.clock.now() }),
    );
    return { ids: { member_id: id }, body: { confirmed: true, confirmation: email } };
  },
  "POST /workspaces/{workspace_id}/posts/{post_id}/approve": async (ws) => {
    const post = await awaitingApprovalOf(ws);
    return { ids: { post_id: post.id }, body: { confirmed: true, version: post.version } };
  },
  "POST /workspaces/{workspace_id}/posts/{post_id}/reject": async (ws) => ({
    ids: { post_id: (await awaitingApprovalOf(ws)).id },
    body: { confirmed: true, comment: "Not yet" },
  }),
  "POST /workspaces/{workspace_id}/review-links": async (ws) => ({
    body: { group: (await postOf(ws, "draft")).group },
  }),
  "POST /workspaces/{workspace_id}/posts/{post_id}/retry": async (ws) => {
    // A failed post, as the engine would leave it.
    const post = await postOf(ws, SCHEDULED_AT);
    await engineOf(s.herald.db).query("UPDATE posts SET state = 'failed' WHERE id = ?", [post.id]);
    return { ids: { post_id: post.id }, body: { confirmed: true } };
  },
};

/** A draft awaiting approval, as a request from a credential without posts:approve leaves it. */
async function awaitingApprovalOf(ws: string): Promise<PostRow> {
  const draft = await postOf(ws, "draft");
  const row = (await findPostById(s.herald.db, draft.id))!;
  const actor = {
    kind: "api_key",
    name: "member key",
    credentialId: "key_member",
    accountId: s.owner.accountId,
    requestId: newId("req"),
  } as Actor;
  const requested = { when: SCHEDULED_AT };
  const [after] = await inTransaction(s.herald.db, (tx) =>
    requestApprovals(tx, {
      posts: [{ post: row, destinationId: row.destinationId }],
      requested,
      actor,
      now: s.clock.now(),
    }),
  );
  return after!;
}

/** A webhook endpoint of the workspace, created by the owner. */
async function endpointOf(ws: string): Promise<string> {
  const body = MINIMAL_BODIES["POST /workspaces/{workspace_id}/webhook-endpoints"];
  const r = await s.request("POST", `${owner(ws)}/webhook-endpoints`, { body, headers: ownerIdem() });
  expect(r.status).toBe(201);
  return r.body.id;
}

/**
 * Real ids for an operation's path parameters, made fresh in the workspace for each call (a DELETE
 * or an action may consume them). A parameter without a factory stays a dummy id.
 */
const PATH_FIXTURES: Record<string, (ws: string, ids: Record<string, string>) => Promise<string> | string> = {
  destination_id: (ws) => insertXDestination(s, ws),
  asset_id: (ws) => insertAsset(s, ws),
  endpoint_id: (ws) => endpointOf(ws),
  delivery_id: async (ws, ids) => {
    const r = await s.request("POST", `${owner(ws)}/webhook-endpoints/${ids.endpoint_id}/test`, { body: {} });
    expect(r.status).toBe(202);
    return r.body.id;
  },
  post_id: async (ws) => (await postOf(ws, "draft")).id,
  invitation_id: async () => {
    const email = `matrix-${++idempotencyCounter}@example.com`;
    const r = await s.request("POST", "/v1/account/invitations", { body: { email }, headers: ownerIdem() });
    expect(r.status).toBe(201);
    return r.body.id;
  },
  group: async (ws) => {
    // A published post, as the engine leaves it, with the analytics row publishing starts.
    const post = await postOf(ws, SCHEDULED_AT);
    await engineOf(s.herald.db).query("UPDATE posts SET state = 'published', published_at = ? WHERE id = ?", [
      s.clock.now(),
      post.id,
    ]);
    const row = (await findPostById(s.herald.db, post.id))!;
    await inTransaction(s.herald.db, (tx) => insertPostAnalytics(tx, row, s.clock.now()));
    return post.group;
  },
  connection_id: async (ws) => {
    const id = newId("conn");
    const now = s.clock.now();
    await inTransaction(s.herald.db, (tx) =>
      tx.insert(destinationConnections).values({
        id,
        workspaceId: ws,
        provider: "mastodon",
        status: "pending",
        origin: "https://mastodon.example",
        state: `state-${id}`,
        expiresAt: now + 600_000,
        createdAt: now,
      }),
    );
    return id;
  },
  review_link_id: async (ws) => {
    const body = { group: (await postOf(ws, "draft")).group };
    const r = await s.request("POST", `${owner(ws)}/review-links`, { body });
    expect(r.status).toBe(201);
    return r.body.id;
  },
  upload_id: async (ws) => {
    const body = MINIMAL_BODIES["POST /workspaces/{workspace_id}/asset-uploads"];
    const r = await s.request("POST", `${owner(ws)}/asset-uploads`, { body, headers: ownerIdem() });
    expect(r.status).toBe(201);
    return r.body.id;
  },
};

const SAMPLE_STRINGS: Record<string, string> = {
  email: "someone@example.com",
  "date-time": "2030-01-01T00:00:00Z",
  date: "2030-01-01",
  uri: "https://example.com/",
};

/** A small value a JSON schema accepts, for the common shapes (patterns are not attempted). */
function sampleOf(schema: any): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf) {
    // Skip null and Elysia's numeric-string coercion branch when a plainer option exists.
    const plain = schema.anyOf.filter(
      (o: any) => o.type !== "null" && !(o.type === "string" && ["integer", "numeric"].includes(o.format)),
    );
    return sampleOf(plain[0] ?? schema.anyOf[0]);
  }
  switch (schema.type) {
    case "object": {
      const keys: string[] = [...(schema.required ?? [])];
      for (const k of Object.keys(schema.properties ?? {}))
        if (keys.length < (schema.minProperties ?? 0) && !keys.includes(k)) keys.push(k);
      return Object.fromEntries(keys.map((k) => [k, sampleOf(schema.properties[k])]));
    }
    case "array":
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleOf(schema.items));
    case "string":
      return SAMPLE_STRINGS[schema.format] ?? "x".repeat(Math.max(1, schema.minLength ?? 1));
    case "integer":
    case "number":
      return schema.minimum ?? 1;
    case "boolean":
      return true;
    default:
      return null;
  }
}

function minimalBody(op: Operation): unknown {
  if (!op.spec.requestBody) return undefined;
  const schema = op.spec.requestBody.content?.["application/json"]?.schema;
  return MINIMAL_BODIES[`${op.method} ${op.path}`] ?? (schema ? sampleOf(schema) : {});
}

const hasParameter = (op: Operation, name: string, requiredOnly = false) =>
  (op.spec.parameters ?? []).some((p: any) => p.name === name && (!requiredOnly || p.required));

/** The operation's URL with `{workspace_id}` set and any other path parameter from `ids` or a dummy id. */
function urlOf(op: Operation, workspaceId: string, ids: Record<string, string> = {}): string {
  const path = op.path.replace("{workspace_id}", workspaceId);
  return "/v1" + path.replace(/\{([^}]+)\}/g, (_, name: string) => ids[name] ?? "dummy_00000000");
}

let idempotencyCounter = 0;

/** Options of `call`; `fixtures` gives the call real path ids and bodies that need resources. */
interface CallOptions {
  workspaceId?: string;
  rawAuthorization?: string;
  fixtures?: boolean;
}

/** Sends the operation with a valid body and the headers it documents, as `key`. */
async function call(op: Operation, key: string | null, options: CallOptions = {}): Promise<TestResponse> {
  const workspaceId = options.workspaceId ?? s.owner.workspaceId;
  const headers: Record<string, string> = {};
  if (hasParameter(op, "Idempotency-Key")) headers["idempotency-key"] = `auth-matrix-${++idempotencyCounter}`;
  if (hasParameter(op, "If-Match", true)) headers["if-match"] = "*";
  let ids: Record<string, string> = {};
  let body = minimalBody(op);
  let query = "";
  const special = OPERATION_FIXTURES[`${op.method} ${op.path}`];
  if (options.fixtures && special) {
    const made = await special(workspaceId);
    ids = made.ids ?? ids;
    body = made.body ?? body;
    query = made.query ? `?${made.query}` : "";
  } else if (options.fixtures) {
    for (const [, name] of op.path.matchAll(/\{([^}]+)\}/g)) {
      const make = PATH_FIXTURES[name!];
      if (make) ids[name!] = await make(workspaceId, ids);
    }
  }
  const request: RequestOptions = { key, headers, body };
  if (options.rawAuthorization !== undefined) {
    request.key = null;
    headers.authorization = options.rawAuthorization;
  }
  return s.request(op.method, urlOf(op, workspaceId, ids) + query, request);
}

/**
 * Allowed calls that cannot succeed on a fresh fixture, with the exact answer they give instead and
 * why. Every other allowed call must answer the operation's documented success status.
 */
const NOT_SUCCESS: Record<string, { status: number; code: string; pointers: string[]; why: string }> = {
  "POST /feedback": {
    status: 503,
    code: "public_unavailable",
    pointers: [],
    why: "the matrix server has no SMTP, so the message is stored but not e-mailed; test/feedback sends it",
  },
  "POST /billing/checkout-sessions": {
    status: 409,
    code: "public_conflict",
    pointers: [],
    why: "billing is disabled on the matrix server; test/billing runs the processor mode against a Stripe fake",
  },
  "POST /billing/portal-sessions": {
    status: 409,
    code: "public_conflict",
    pointers: [],
    why: "billing is disabled on the matrix server; test/billing/stripe.test.ts opens the portal",
  },
  "POST /billing/conversion": {
    status: 409,
    code: "public_conflict",
    pointers: [],
    why: "billing is disabled on the matrix server; test/billing/stripe.test.ts converts a trial",
  },
  "POST /workspaces/{workspace_id}/subscription/cancel": {
    status: 400,
    code: "public_invalid_request",
    pointers: ["/confirmation"],
    why: "the phrase names the workspace (CANCEL <name>); test/billing cancels with the right phrase",
  },
  "POST /workspaces/{workspace_id}/destination-connections": {
    status: 400,
    code: "public_invalid_request",
    pointers: ["/handle"],
    why: "connecting needs a network (a fake PDS or instance); test/providers and test/posts connect",
  },
  "POST /workspaces/{workspace_id}/asset-uploads/{upload_id}/complete": {
    status: 400,
    code: "public_invalid_request",
    pointers: ["/byte_size", "/parts/0/checksum_crc64nvme", "/checksum_crc64nvme"],
    why: "completing needs the parts uploaded first; test/assets/flow.test.ts completes real uploads",
  },
};

/** The lowest 2xx status the document gives for the operation. */
function documentedSuccess(op: Operation): number {
  const statuses = Object.keys(op.spec.responses ?? {})
    .filter((k) => /^2\d\d$/.test(k))
    .map(Number);
  expect(statuses.length).toBeGreaterThan(0);
  return Math.min(...statuses);
}

/** An allowed call answers exactly what it should: the documented success, or its NOT_SUCCESS entry. */
function expectAllowed(op: Operation, r: TestResponse): void {
  const exception = NOT_SUCCESS[`${op.method} ${op.path}`];
  if (exception) {
    expectProblem(r, exception.status, exception.code, exception.pointers);
    return;
  }
  const answer = { status: r.status, text: r.status < 300 ? "" : r.text };
  expect(answer).toEqual({ status: documentedSuccess(op), text: "" });
}

function expectUnauthenticated(r: Awaited<ReturnType<typeof call>>): void {
  expectProblem(r, 401, "public_authentication_required");
  expect(r.headers.get("www-authenticate")).toStartWith("Bearer");
  expect(r.body.category).toBe("authentication");
  expect(r.body.user_action).toBe("check_credentials");
}

async function revokedKey(): Promise<string> {
  const key = await s.createKey({});
  await engineOf(s.herald.db).query("UPDATE api_keys SET revoked_at = ? WHERE secret_hash = ?", [
    s.clock.now() - 1000,
    sha256Hex(key),
  ]);
  return key;
}

const isWorkspaceScoped = (op: Operation) => op.path.startsWith("/workspaces/{workspace_id}");

describe("the walk covers the API", () => {
  test("the document lists the known operations, authenticated ones among them", () => {
    expect(operations.length).toBeGreaterThan(0);
    const walkedPaths = new Set(operations.map((op) => op.path));
    for (const path of [
      "/account",
      "/me",
      "/workspaces",
      "/workspaces/{workspace_id}",
      "/account/invitations",
      "/audit-records",
    ]) {
      expect(walkedPaths).toContain(path);
    }
  });

  test("every exception to the documented success names a walked operation", () => {
    const walked = new Set(operations.map((op) => `${op.method} ${op.path}`));
    for (const key of Object.keys(NOT_SUCCESS)) expect(walked).toContain(key);
  });

  test("every operation declares a scope the server knows", () => {
    for (const op of allOperations) expect(["none", "authenticated", ...ALL_SCOPES]).toContain(op.scope);
  });
});

describe("401 comes before body validation", () => {
  test("no key and an invalid body is 401, not 400", async () => {
    const r = await s.request("POST", "/v1/workspaces", { key: null, body: { name: 5, unknown: true } });
    expectUnauthenticated(r);
  });
});

for (const op of operations) {
  describe(`${op.method} ${op.path} (${op.scope})`, () => {
    const unauthenticated: { name: string; send: () => ReturnType<typeof call> }[] = [
      { name: "no Authorization header", send: () => call(op, null) },
      {
        name: "a malformed Authorization header",
        send: () => call(op, null, { rawAuthorization: "Basic abc" }),
      },
      {
        name: "a valid key under another scheme",
        send: () => call(op, null, { rawAuthorization: `Basic ${s.owner.apiKey}` }),
      },
      {
        name: "a valid key with trailing text",
        send: () => call(op, null, { rawAuthorization: `Bearer ${s.owner.apiKey} extra` }),
      },
      { name: "Bearer without a key", send: () => call(op, null, { rawAuthorization: "Bearer" }) },
      { name: "an unknown key", send: () => call(op, `hk_live_${"x".repeat(40)}`) },
      { name: "a revoked key", send: async () => call(op, await revokedKey()) },
      {
        name: "an expired key",
        send: async () => call(op, await s.createKey({ expiresAt: s.clock.now() - 1 })),
      },
      {
        name: "a key expiring this very millisecond",
        send: async () => call(op, await s.createKey({ expiresAt: s.clock.now() })),
      },
    ];
    for (const c of unauthenticated) {
      test(`${c.name} is 401 with a Bearer challenge`, async () => {
        expectUnauthenticated(await c.send());
      });
    }

    if (op.scope === "authenticated") {
      test("a key with no scopes is accepted", async () => {
        expectAllowed(op, await call(op, await s.createKey({ scopes: [] }), { fixtures: true }));
      });
    } else {
      test(`a key with every scope but ${op.scope} is 403 public_scope_missing`, async () => {
        const r = await call(
          op,
          await s.createKey({ scopes: ALL_SCOPES.filter((x) => x !== op.scope) as Scope[] }),
        );
        expectProblem(r, 403, "public_scope_missing");
        expect(r.body.detail).toContain(op.scope);
      });

      test(`a key with only ${op.scope} is accepted`, async () => {
        const key = await s.createKey({ scopes: [op.scope as Scope] });
        expectAllowed(op, await call(op, key, { fixtures: true }));
      });
    }

    test("a key that has not expired yet is accepted", async () => {
      const key = await s.createKey({ expiresAt: s.clock.now() + 60_000 });
      expectAllowed(op, await call(op, key, { fixtures: true }));
    });

    if (isWorkspaceScoped(op)) {
      test("another account's key is 404 public_not_found", async () => {
        expectProblem(await call(op, foreign.apiKey), 404, "public_not_found");
      });

      test("another account's workspace id is 404 for the owner", async () => {
        expectProblem(
          await call(op, s.owner.apiKey, { workspaceId: foreign.workspaceId }),
          404,
          "public_not_found",
        );
      });

      test("a selected-access key is 404 on a workspace it was not given", async () => {
        expectProblem(await call(op, selectedKey), 404, "public_not_found");
      });

      test("a selected-access key may use the workspace it was given", async () => {
        expectAllowed(op, await call(op, selectedKey, { workspaceId: otherWorkspaceId, fixtures: true }));
      });
    }
  });
}
