import { afterAll, describe, expect, test } from "bun:test";
import { ALL_SCOPES, type Scope } from "../src/core/scopes.ts";
import { sha256Hex } from "../src/lib/crypto.ts";
import { expectProblem } from "./helpers/problems.ts";
import { startTestServer, type RequestOptions } from "./helpers/server.ts";

// The auth matrix walks every operation of the server's own OpenAPI document, so a new route is
// covered the moment it is documented: no key, a bad key, a missing scope, a foreign workspace.

// Hundreds of 401s from one address by design: the failed-authentication limit is raised out of the way.
const s = await startTestServer({ env: { HERALD_AUTH_FAILURES_PER_MINUTE: "1000000" } });
afterAll(async () => { await s.stop(); });

const doc = (await s.request("GET", "/v1/openapi.json", { key: null })).body;

interface Operation {
  method: string;
  path: string;
  scope: string;
  spec: any;
}

const HTTP_METHODS = ["get", "put", "post", "patch", "delete"];
const allOperations: Operation[] = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => HTTP_METHODS.includes(method))
    .map(([method, spec]) => ({ method: method.toUpperCase(), path, scope: spec["x-required-scope"], spec })));
const operations = allOperations.filter((op) => op.scope !== "none");

// Fixtures: a second workspace of the owner's account, a key selected on it only, another account.
const otherWorkspaceId = (await s.request("POST", "/v1/workspaces", { body: { name: "Second" } })).body.id as string;
const selectedKey = s.createKey({ workspaceIds: [otherWorkspaceId] });
const foreign = await s.bootstrap();

/** Minimal valid bodies where the document's schema is not enough (this table wins over the schema). */
const MINIMAL_BODIES: Record<string, unknown> = {
  "POST /workspaces": { name: "Auth matrix" },
  "PATCH /workspaces/{workspace_id}": { name: "Auth matrix" },
  "POST /account/invitations": { email: "auth-matrix@example.com" },
};

const SAMPLE_STRINGS: Record<string, string> = { email: "someone@example.com", "date-time": "2030-01-01T00:00:00Z", date: "2030-01-01", uri: "https://example.com/" };

/** A small value a JSON schema accepts, for the common shapes (patterns are not attempted). */
function sampleOf(schema: any): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf) {
    // Skip null and Elysia's numeric-string coercion branch when a plainer option exists.
    const plain = schema.anyOf.filter((o: any) => o.type !== "null" && !(o.type === "string" && ["integer", "numeric"].includes(o.format)));
    return sampleOf(plain[0] ?? schema.anyOf[0]);
  }
  switch (schema.type) {
    case "object": {
      const keys: string[] = [...(schema.required ?? [])];
      for (const k of Object.keys(schema.properties ?? {})) if (keys.length < (schema.minProperties ?? 0) && !keys.includes(k)) keys.push(k);
      return Object.fromEntries(keys.map((k) => [k, sampleOf(schema.properties[k])]));
    }
    case "array": return Array.from({ length: schema.minItems ?? 0 }, () => sampleOf(schema.items));
    case "string": return SAMPLE_STRINGS[schema.format] ?? "x".repeat(Math.max(1, schema.minLength ?? 1));
    case "integer": case "number": return schema.minimum ?? 1;
    case "boolean": return true;
    default: return null;
  }
}

function minimalBody(op: Operation): unknown {
  if (!op.spec.requestBody) return undefined;
  const schema = op.spec.requestBody.content?.["application/json"]?.schema;
  return MINIMAL_BODIES[`${op.method} ${op.path}`] ?? (schema ? sampleOf(schema) : {});
}

const hasParameter = (op: Operation, name: string, requiredOnly = false) =>
  (op.spec.parameters ?? []).some((p: any) => p.name === name && (!requiredOnly || p.required));

/** The operation's URL with `{workspace_id}` set and any other path parameter a dummy id. */
function urlOf(op: Operation, workspaceId: string): string {
  return "/v1" + op.path.replace("{workspace_id}", workspaceId).replace(/\{[^}]+\}/g, "dummy_00000000");
}

let idempotencyCounter = 0;

/** Sends the operation with a valid body and the headers it documents, as `key`. */
function call(op: Operation, key: string | null, options: { workspaceId?: string; rawAuthorization?: string } = {}) {
  const headers: Record<string, string> = {};
  if (hasParameter(op, "Idempotency-Key")) headers["idempotency-key"] = `auth-matrix-${++idempotencyCounter}`;
  if (hasParameter(op, "If-Match", true)) headers["if-match"] = "*";
  const request: RequestOptions = { key, headers, body: minimalBody(op) };
  if (options.rawAuthorization !== undefined) {
    request.key = null;
    headers.authorization = options.rawAuthorization;
  }
  return s.request(op.method, urlOf(op, options.workspaceId ?? s.owner.workspaceId), request);
}

function expectUnauthenticated(r: Awaited<ReturnType<typeof call>>): void {
  expectProblem(r, 401, "public_authentication_required");
  expect(r.headers.get("www-authenticate")).toStartWith("Bearer");
  expect(r.body.category).toBe("authentication");
  expect(r.body.user_action).toBe("check_credentials");
}

function revokedKey(): string {
  const key = s.createKey({});
  s.herald.db.$client.query("UPDATE api_keys SET revoked_at = ? WHERE secret_hash = ?").run(s.clock.now() - 1000, sha256Hex(key));
  return key;
}

const isWorkspaceScoped = (op: Operation) => op.path.startsWith("/workspaces/{workspace_id}");
const hasOtherPathParameters = (op: Operation) => /\{(?!workspace_id\})[^}]+\}/.test(op.path);

describe("the walk covers the API", () => {
  test("the document lists the known operations, authenticated ones among them", () => {
    expect(operations.length).toBeGreaterThan(0);
    const walkedPaths = new Set(operations.map((op) => op.path));
    for (const path of ["/account", "/me", "/workspaces", "/workspaces/{workspace_id}", "/account/invitations", "/audit-records"]) {
      expect(walkedPaths).toContain(path);
    }
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
      { name: "a malformed Authorization header", send: () => call(op, null, { rawAuthorization: "Basic abc" }) },
      { name: "a valid key under another scheme", send: () => call(op, null, { rawAuthorization: `Basic ${s.owner.apiKey}` }) },
      { name: "a valid key with trailing text", send: () => call(op, null, { rawAuthorization: `Bearer ${s.owner.apiKey} extra` }) },
      { name: "Bearer without a key", send: () => call(op, null, { rawAuthorization: "Bearer" }) },
      { name: "an unknown key", send: () => call(op, `hk_live_${"x".repeat(40)}`) },
      { name: "a revoked key", send: () => call(op, revokedKey()) },
      { name: "an expired key", send: () => call(op, s.createKey({ expiresAt: s.clock.now() - 1 })) },
      { name: "a key expiring this very millisecond", send: () => call(op, s.createKey({ expiresAt: s.clock.now() })) },
    ];
    for (const c of unauthenticated) {
      test(`${c.name} is 401 with a Bearer challenge`, async () => {
        expectUnauthenticated(await c.send());
      });
    }

    if (op.scope === "authenticated") {
      test("a key with no scopes is accepted", async () => {
        const r = await call(op, s.createKey({ scopes: [] }));
        expect([401, 403]).not.toContain(r.status);
      });
    } else {
      test(`a key with every scope but ${op.scope} is 403 public_scope_missing`, async () => {
        const r = await call(op, s.createKey({ scopes: ALL_SCOPES.filter((x) => x !== op.scope) as Scope[] }));
        expectProblem(r, 403, "public_scope_missing");
        expect(r.body.detail).toContain(op.scope);
      });

      test(`a key with only ${op.scope} is accepted`, async () => {
        const r = await call(op, s.createKey({ scopes: [op.scope as Scope] }));
        expect([401, 403]).not.toContain(r.status);
      });
    }

    test("a key that has not expired yet is accepted", async () => {
      const r = await call(op, s.createKey({ expiresAt: s.clock.now() + 60_000 }));
      expect([401, 403]).not.toContain(r.status);
    });

    if (isWorkspaceScoped(op)) {
      test("another account's key is 404 public_not_found", async () => {
        expectProblem(await call(op, foreign.apiKey), 404, "public_not_found");
      });

      test("another account's workspace id is 404 for the owner", async () => {
        expectProblem(await call(op, s.owner.apiKey, { workspaceId: foreign.workspaceId }), 404, "public_not_found");
      });

      test("a selected-access key is 404 on a workspace it was not given", async () => {
        expectProblem(await call(op, selectedKey), 404, "public_not_found");
      });

      if (!hasOtherPathParameters(op)) {
        test("a selected-access key may use the workspace it was given", async () => {
          const r = await call(op, selectedKey, { workspaceId: otherWorkspaceId });
          expect([401, 403, 404]).not.toContain(r.status);
        });
      }
    }
  });
}
