// The request examples the API reference shows: the docs page (Scalar) generates each write operation's
// example body from the OpenAPI document. Every such example must be a request the API accepts as a
// request: it is generated here with Scalar's own generator and sent to a real server, where it may be
// refused only for naming things of the reader's own (404 for an id, 409 while billing is disabled),
// never for its shape (400) or as unpublishable (422).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getExampleFromSchema } from "@scalar/workspace-store/request-example";
import { Value } from "@sinclair/typebox/value";
import { StartConnectionBody } from "../src/http/routes/destinations-schemas.ts";
import { CreateEndpointBody } from "../src/http/routes/webhooks-schemas.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

let s: TestServer;
let doc: any;
beforeAll(async () => {
  s = await startTestServer();
  doc = (await s.request("GET", "/v1/openapi.json", { key: null })).body;
  // The examples name a workspace "Marketing" (the subscription cancel confirms with its name).
  expect(
    (await s.request("PATCH", `/v1/workspaces/${s.owner.workspaceId}`, { body: { name: "Marketing" } }))
      .status,
  ).toBe(200);
});
afterAll(() => s.stop());

/** A schema with its `$ref`s replaced by the components they name. */
function resolved(schema: any, seen = new Set<string>()): any {
  if (Array.isArray(schema)) return schema.map((item) => resolved(item, seen));
  if (!schema || typeof schema !== "object") return schema;
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.split("/").pop()!;
    if (seen.has(name)) return {};
    return resolved(doc.components.schemas[name], new Set([...seen, name]));
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, resolved(v, seen)]));
}

/** Every operation with a JSON request body, and the example Scalar generates for it. */
function writeOperations(): { method: string; path: string; example: unknown }[] {
  const found: { method: string; path: string; example: unknown }[] = [];
  for (const [path, operations] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(operations)) {
      const schema = op?.requestBody?.content?.["application/json"]?.schema;
      if (!schema) continue;
      found.push({ method, path, example: getExampleFromSchema(resolved(schema), { mode: "write" }) });
    }
  return found;
}

// Sending these would reach out of the test (connecting calls the network; a webhook URL is resolved):
// they are checked against their route's own schema instead.
const NOT_SENT = new Set([
  "post /workspaces/{workspace_id}/destination-connections",
  "post /workspaces/{workspace_id}/webhook-endpoints",
]);

describe("the API reference's request examples", () => {
  test("Create Post's example is a draft with a group, not empty strings", () => {
    const create = writeOperations().find(
      (o) => o.method === "post" && o.path === "/workspaces/{workspace_id}/posts",
    );
    expect(create?.example).toMatchObject({ when: "draft", group: "launch-2026-12" });
  });

  test("every write operation's example is accepted as a request", async () => {
    const operations = writeOperations();
    expect(operations.length).toBeGreaterThan(30);
    const outcomes: { operation: string; status: number; errors: unknown }[] = [];
    for (const { method, path, example } of operations) {
      const operation = `${method} ${path}`;
      if (NOT_SENT.has(operation)) continue;
      const url = `/v1${path.replace("{workspace_id}", s.owner.workspaceId).replace(/\{[a-z_]+\}/g, "unknown_id")}`;
      // A key of its own for each (one example revokes the key that sends it).
      const key = await s.createKey({});
      const r = await s.request(method.toUpperCase(), url, {
        key,
        body: example,
        headers: { "idempotency-key": crypto.randomUUID() },
      });
      outcomes.push({ operation, status: r.status, errors: r.body?.errors ?? r.body?.detail ?? null });
    }
    // An id of the reader's own (a destination of their workspace) is all a 422 may be about.
    const aboutIdsOnly = (errors: unknown) =>
      Array.isArray(errors) &&
      errors.every((e) => /_id$/.test(e.pointer) && /^no \w+ \S+ in this/.test(e.detail));
    const refused = outcomes.filter((o) => o.status === 400 || (o.status === 422 && !aboutIdsOnly(o.errors)));
    expect(refused).toEqual([]);
    // Most of them are carried out (2xx); the rest name ids of the reader's own or need billing on.
    const ALLOWED = [200, 201, 202, 204, 404, 409, 422];
    // Feedback is stored, then 503 on a server that can mail it nowhere (no HERALD_SMTP_URL here).
    const unexpected = outcomes.filter(
      (o) => !ALLOWED.includes(o.status) && !(o.operation === "post /feedback" && o.status === 503),
    );
    expect(unexpected).toEqual([]);
  });

  test("the examples not sent match their route's own schema", () => {
    const connect = writeOperations().find(
      (o) => `${o.method} ${o.path}` === "post /workspaces/{workspace_id}/destination-connections",
    );
    expect(Value.Check(StartConnectionBody, connect!.example)).toBe(true);
    expect(connect!.example).toEqual({ provider: "mastodon", instance_origin: "https://mastodon.social" });
    const webhook = writeOperations().find(
      (o) => `${o.method} ${o.path}` === "post /workspaces/{workspace_id}/webhook-endpoints",
    );
    expect(Value.Check(CreateEndpointBody, webhook!.example)).toBe(true);
  });
});
