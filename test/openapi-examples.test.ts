// The request examples the API reference shows: every operation with a body carries a hand-written
// example (`requestBody.content["application/json"].example`), and the docs page (Scalar) generates one
// from the schema as well. Every such example must be a request the API accepts as a request: each is
// sent to a real server, where it may be refused only for naming things of the reader's own (404 for an
// id, 409 while billing is disabled), never for its shape (400) or as unpublishable (422).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { getExampleFromSchema } from "@scalar/workspace-store/request-example";
import { Value } from "@sinclair/typebox/value";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
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

interface WriteOperation {
  method: string;
  path: string;
  /** The example Scalar generates from the schema. */
  example: unknown;
  /** The document's own example of the body (`content["application/json"].example`). */
  written: unknown;
  schema: unknown;
}

/** Every operation with a JSON request body, its written example and the one Scalar generates for it. */
function writeOperations(): WriteOperation[] {
  const found: WriteOperation[] = [];
  for (const [path, operations] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(operations)) {
      const media = op?.requestBody?.content?.["application/json"];
      if (!media?.schema) continue;
      const schema = resolved(media.schema);
      const example = getExampleFromSchema(schema, { mode: "write" });
      found.push({ method, path, example, written: media.example, schema });
    }
  return found;
}

/** Sends each example to the real server: the outcomes of those not refused for their shape. */
async function send(examples: { method: string; path: string; body: unknown }[]) {
  const outcomes: { operation: string; status: number; errors: unknown }[] = [];
  for (const { method, path, body } of examples) {
    const operation = `${method} ${path}`;
    if (NOT_SENT.has(operation)) continue;
    const url = `/v1${path.replace("{workspace_id}", s.owner.workspaceId).replace(/\{[a-z_]+\}/g, "unknown_id")}`;
    // A key of its own for each (one example revokes the key that sends it).
    const key = await s.createKey({});
    const r = await s.request(method.toUpperCase(), url, {
      key,
      body,
      headers: { "idempotency-key": crypto.randomUUID() },
    });
    outcomes.push({ operation, status: r.status, errors: r.body?.errors ?? r.body?.detail ?? null });
  }
  return outcomes;
}

// An id of the reader's own (a destination of their workspace) is all a 422 may be about.
const aboutIdsOnly = (errors: unknown) =>
  Array.isArray(errors) &&
  errors.every((e) => /_id$/.test(e.pointer) && /^no \w+ \S+ in this/.test(e.detail));

/** Outcomes refused for the example's shape, or with a status an example may not meet. */
function refusedOrUnexpected(outcomes: { operation: string; status: number; errors: unknown }[]) {
  const refused = outcomes.filter((o) => o.status === 400 || (o.status === 422 && !aboutIdsOnly(o.errors)));
  // Most of them are carried out (2xx); the rest name ids of the reader's own or need billing on.
  const ALLOWED = [200, 201, 202, 204, 404, 409, 422];
  // Feedback is stored, then 503 on a server that can mail it nowhere (no HERALD_SMTP_URL here).
  const unexpected = outcomes.filter(
    (o) => !ALLOWED.includes(o.status) && !(o.operation === "post /feedback" && o.status === 503),
  );
  return { refused, unexpected };
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

  test("every write operation's generated example is accepted as a request", async () => {
    const operations = writeOperations();
    expect(operations.length).toBeGreaterThan(30);
    const outcomes = await send(
      operations.map(({ method, path, example }) => ({ method, path, body: example })),
    );
    expect(refusedOrUnexpected(outcomes)).toEqual({ refused: [], unexpected: [] });
  });

  test("every operation with a body carries a written example that its schema accepts", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addFormat("integer", /^-?\d+$/);
    const missing = writeOperations()
      .filter((o) => o.written === undefined)
      .map((o) => `${o.method} ${o.path}`);
    expect(missing).toEqual([]);
    const invalid = writeOperations().flatMap((o) => {
      const validate = ajv.compile(o.schema as object);
      return validate(o.written) ? [] : [{ operation: `${o.method} ${o.path}`, errors: validate.errors }];
    });
    expect(invalid).toEqual([]);
  });

  test("every written example is accepted by the server as a request", async () => {
    const operations = writeOperations();
    const outcomes = await send(
      operations.map(({ method, path, written }) => ({ method, path, body: written })),
    );
    expect(outcomes.length).toBe(operations.length - NOT_SENT.size);
    expect(refusedOrUnexpected(outcomes)).toEqual({ refused: [], unexpected: [] });
  });

  test("the post bodies' written examples pass validate but for the reader's own ids", async () => {
    // Create Post's example is the validate endpoint's own body; it names a destination of the
    // reader's, so the one finding allowed is about that id.
    const create = doc.paths["/workspaces/{workspace_id}/posts"].post.requestBody.content["application/json"];
    expect(
      doc.paths["/workspaces/{workspace_id}/posts/validate"].post.requestBody.content["application/json"]
        .example,
    ).toEqual(create.example);
    const r = await s.request("POST", `/v1/workspaces/${s.owner.workspaceId}/posts/validate`, {
      body: create.example,
    });
    expect(r.status).toBe(200);
    expect(r.body.object).toBe("post_validation");
    expect(aboutIdsOnly(r.body.errors)).toBe(true);
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
    expect(Value.Check(StartConnectionBody, connect!.written)).toBe(true);
    expect(Value.Check(CreateEndpointBody, webhook!.written)).toBe(true);
  });
});
