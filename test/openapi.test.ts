import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import packageJson from "../package.json";
import { HERALD_VERSION } from "../src/herald.ts";
import { nameSchemas } from "../src/http/docs.ts";
import { problemCatalog } from "../src/core/problem.ts";
import { ALL_SCOPES } from "../src/core/scopes.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

let s: TestServer;
let doc: any;
beforeAll(async () => {
  s = await startTestServer();
  const r = await s.request("GET", "/v1/openapi.json", { key: null });
  expect(r.status).toBe(200);
  doc = r.body;
});
afterAll(async () => {
  await s.stop();
});

const METHODS = ["get", "put", "post", "patch", "delete", "head", "options", "trace"];

interface Operation {
  method: string;
  path: string;
  op: any;
  /** `POST /account/invitations` */
  name: string;
}

/** Every operation of the document. */
function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (METHODS.includes(method)) out.push({ method, path, op, name: `${method.toUpperCase()} ${path}` });
    }
  }
  return out;
}

/** A path with its parameter names erased, to compare `{post}` with `{post_id}`. */
const shape = (path: string) => path.replace(/\{[^}]+\}/g, "{}");
const find = (method: string, path: string) =>
  operations().find((o) => o.method === method && shape(o.path) === shape(path));
const header = (op: any, name: string) =>
  (op.parameters ?? []).find((p: any) => p.in === "header" && p.name.toLowerCase() === name.toLowerCase());

/** Follows a local `$ref` inside the document. */
function resolveRef(schema: any): any {
  if (!schema?.$ref) return schema;
  expect(schema.$ref).toStartWith("#/");
  return schema.$ref
    .slice(2)
    .split("/")
    .reduce((node: any, part: string) => node?.[part], doc);
}

describe("the document", () => {
  test("is served without authentication, as JSON", async () => {
    const r = await s.request("GET", "/v1/openapi.json", { key: null });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
    // A bad key does not matter either: the document is public.
    expect((await s.request("GET", "/v1/openapi.json", { key: "hk_live_nope" })).status).toBe(200);
  });

  test("is OpenAPI 3.1 with a /v1 server, the bearer scheme and the Problem schema", () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.title).toBeTruthy();
    // The program's version (the one `herald version` prints and package.json holds), and a license.
    expect(doc.info.version).toBe(HERALD_VERSION);
    expect(doc.info.version).toBe(packageJson.version);
    expect(doc.info.license).toEqual({ name: "MIT", identifier: "MIT" });
    expect(doc.servers[0].url).toEndWith("/v1");
    expect(doc.servers[0].url).toBe(`${s.url}/v1`);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    const problem = doc.components.schemas.Problem;
    expect(problem.type).toBe("object");
    for (const field of [
      "type",
      "title",
      "status",
      "detail",
      "instance",
      "code",
      "request_id",
      "retryable",
      "errors",
    ]) {
      expect(problem.required).toContain(field);
      expect(problem.properties[field]).toBeDefined();
    }
    for (const field of ["category", "retry", "user_action"]) {
      expect(problem.properties[field]).toBeDefined();
      expect(problem.required).not.toContain(field); // the 413 omits them
    }
  });

  test("paths are relative to the /v1 server and operation ids are unique", () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(5);
    for (const { path } of ops) {
      expect(path).toStartWith("/");
      expect(path).not.toStartWith("/v1/");
    }
    const ids = ops.map((o) => o.op.operationId).filter(Boolean);
    expect(new Set(ids).size).toBe(ids.length);
    // Named by hand for generated clients: camelCase identifiers (`createPost`), not derived from paths.
    const unnamed = ops.filter((o) => !/^[a-z][A-Za-z]+$/.test(o.op.operationId ?? "")).map((o) => o.name);
    expect(unnamed).toEqual([]);
    expect(find("post", "/workspaces/{workspace_id}/posts")!.op.operationId).toBe("createPost");
  });

  test("the contract's operations that exist so far are documented", () => {
    for (const [method, path] of [
      ["get", "/account"],
      ["get", "/me"],
      ["get", "/workspaces"],
      ["post", "/account/invitations"],
      ["patch", "/workspaces/{workspace_id}"],
    ]) {
      expect(find(method!, path!)).toBeDefined();
    }
  });
});

describe("named component schemas", () => {
  const NAMES = [
    "Account",
    "Asset",
    "AssetList",
    "AssetUpload",
    "AccountInvitation",
    "AccountInvitationList",
    "AccountMember",
    "AccountMemberList",
    "AnalyticsSeries",
    "AuditRecordList",
    "Billing",
    "CreatePostRequest",
    "CreateWebhookEndpointRequest",
    "CreateWorkspaceRequest",
    "DeletedPost",
    "Destination",
    "DestinationList",
    "Post",
    "PostGroupAnalytics",
    "PostList",
    "PostSet",
    "PostValidation",
    "Problem",
    "PublishDraftsRequest",
    "WebhookDelivery",
    "WebhookDeliveryList",
    "WebhookEndpoint",
    "WebhookEndpointList",
    "Workspace",
    "WorkspaceList",
  ];

  test("the resources, listings and request bodies a client uses are named, in PascalCase", () => {
    const schemas = doc.components.schemas;
    for (const name of NAMES) expect({ name, named: name in schemas }).toEqual({ name, named: true });
    for (const [name, schema] of Object.entries<any>(schemas)) {
      expect(name).toMatch(/^[A-Z][A-Za-z0-9]*$/);
      expect({ name, title: schema.title }).toEqual({ name, title: name });
    }
  });

  test("every JSON request body and answer refers to a named schema", () => {
    const inline: string[] = [];
    const refers = (where: string, schema: any) => {
      if (!schema) return;
      const name = typeof schema.$ref === "string" ? schema.$ref.replace("#/components/schemas/", "") : null;
      if (!name || !(name in doc.components.schemas)) inline.push(where);
    };
    for (const { name, op } of operations()) {
      refers(`${name} body`, op.requestBody?.content?.["application/json"]?.schema);
      for (const [status, response] of Object.entries<any>(op.responses ?? {})) {
        refers(`${name} ${status}`, response.content?.["application/json"]?.schema);
        refers(`${name} ${status}`, response.content?.["application/problem+json"]?.schema);
      }
    }
    expect(inline).toEqual([]);
  });

  test("a listing names its item: PostList is {data: Post[], has_more, next_cursor}", () => {
    const list = doc.components.schemas.PostList;
    expect(list.properties.data.items).toEqual({ $ref: "#/components/schemas/Post" });
    expect(list.required).toEqual(["data", "has_more", "next_cursor"]);
    expect(
      resolveRef(
        doc.paths["/workspaces/{workspace_id}/posts"].get.responses["200"].content["application/json"].schema,
      ),
    ).toBe(list);
  });

  test("the document does not depend on which routes answered before it was made", async () => {
    // Answering validates responses, and Elysia then closes the route's response schema object.
    expect((await s.request("GET", `/v1/workspaces/${s.owner.workspaceId}`)).status).toBe(200);
    expect((await s.request("GET", "/v1/account")).status).toBe(200);
    const cli = await s.request("POST", "/v1/cli-authorizations", {
      key: null,
      body: { device_name: "laptop" },
    });
    expect(cli.status).toBe(201);
    const later = await startTestServer();
    try {
      const r = await later.request("GET", "/v1/openapi.json", { key: null });
      expect(r.status).toBe(200);
      expect(r.body.components.schemas).toEqual(doc.components.schemas);
      expect(r.body.components.schemas.Workspace.additionalProperties).toBeUndefined();
    } finally {
      await later.stop();
    }
  });

  test("a schema used twice is named once; two different schemas with one name are an error", () => {
    const schemas: Record<string, unknown> = {};
    const item = { title: "Item", type: "object", properties: { id: { type: "string" } } };
    const named = nameSchemas({ a: { ...item }, b: { type: "array", items: { ...item } } }, schemas);
    expect(named).toEqual({
      a: { $ref: "#/components/schemas/Item" },
      b: { type: "array", items: { $ref: "#/components/schemas/Item" } },
    });
    expect(Object.keys(schemas)).toEqual(["Item"]);
    const other = { title: "Item", type: "object", properties: { id: { type: "integer" } } };
    expect(() => nameSchemas(other, schemas)).toThrow('two different schemas are named "Item"');
    expect(() => nameSchemas({ title: "not pascal", type: "object" }, {})).toThrow("PascalCase");
    // A `title` inside an example is data, not a schema name.
    const example = { type: "object", example: { title: "Launch", type: "object" } };
    expect(nameSchemas(example, {})).toEqual(example);
  });
});

describe("every operation", () => {
  test("has a description beyond its summary", () => {
    const missing = operations()
      .filter(({ op }) => typeof op.description !== "string" || op.description.length < 20)
      .map((o) => o.name);
    expect(missing).toEqual([]);
    for (const { name, op } of operations())
      expect({ name, same: op.description === op.summary }).toEqual({ name, same: false });
  });

  test("has a summary, a scope and a security requirement that agree", () => {
    for (const { name, op } of operations()) {
      expect({ name, summary: typeof op.summary === "string" && op.summary.length > 0 }).toEqual({
        name,
        summary: true,
      });
      const scope = op["x-required-scope"];
      expect({ name, scope: typeof scope }).toEqual({ name, scope: "string" });
      expect(["none", "authenticated", ...ALL_SCOPES]).toContain(scope);
      if (scope === "none") expect(op.security ?? []).toEqual([]);
      else expect({ name, security: op.security }).toEqual({ name, security: [{ bearer: [] }] });
    }
  });

  test("has a 2xx response with a JSON schema", () => {
    for (const { name, op } of operations()) {
      const success = Object.entries(op.responses ?? {}).filter(([status]) => /^2\d\d$/.test(status));
      expect({ name, success: success.length > 0 }).toEqual({ name, success: true });
      for (const [status, response] of success as [string, any][]) {
        const schema = resolveRef(response.content?.["application/json"]?.schema);
        expect({ name, status, schema: typeof schema }).toEqual({ name, status, schema: "object" });
        expect(schema.type ?? schema.anyOf ?? schema.oneOf).toBeDefined();
      }
    }
  });

  test("documents its problem+json errors (400/413/431/500; 401/403/429 with a key; 415 with a body)", () => {
    for (const { name, op } of operations()) {
      const authenticated = op["x-required-scope"] !== "none";
      const expected = ["400", "413", "431", "500"];
      if (authenticated) expected.push("401", "403", "429");
      if (op.requestBody) expected.push("415");
      for (const status of expected) {
        const response = op.responses?.[status];
        expect({ name, status, documented: response !== undefined }).toEqual({
          name,
          status,
          documented: true,
        });
        const schema = response.content?.["application/problem+json"]?.schema;
        expect({ name, status, schema }).toEqual({
          name,
          status,
          schema: { $ref: "#/components/schemas/Problem" },
        });
        expect(typeof response.description).toBe("string");
      }
      for (const [status, response] of Object.entries(op.responses ?? {}) as [string, any][]) {
        if (Number(status) >= 400)
          expect({ name, status, problem: !!response.content?.["application/problem+json"] }).toEqual({
            name,
            status,
            problem: true,
          });
      }
    }
  });

  test("documents the optional Service-Request-Id header (at most 128 characters)", () => {
    for (const { name, op } of operations()) {
      const p = header(op, "Service-Request-Id");
      expect({ name, found: !!p }).toEqual({ name, found: true });
      expect(p.required).toBe(false);
      expect(p.schema).toMatchObject({ type: "string", maxLength: 128 });
    }
  });

  test("POST and PATCH take a JSON body that rejects unknown properties", () => {
    const writes = operations().filter((o) => o.method === "post" || o.method === "patch");
    expect(writes.length).toBeGreaterThan(0);
    for (const { name, op } of writes) {
      const content = op.requestBody?.content ?? {};
      expect({ name, types: Object.keys(content) }).toEqual({ name, types: ["application/json"] });
      const schema = resolveRef(content["application/json"].schema);
      expect({ name, schema: typeof schema }).toEqual({ name, schema: "object" });
      if (schema.type === "object")
        expect({ name, additionalProperties: schema.additionalProperties }).toEqual({
          name,
          additionalProperties: false,
        });
    }
  });

  test("every Idempotency-Key and If-Match parameter is a header with the contract's limits", () => {
    for (const { name, op } of operations()) {
      const idem = header(op, "Idempotency-Key");
      if (idem)
        expect({ name, schema: idem.schema }).toEqual({
          name,
          schema: { type: "string", minLength: 1, maxLength: 200 },
        });
      const ifMatch = header(op, "If-Match");
      if (ifMatch) expect({ name, type: ifMatch.schema.type }).toEqual({ name, type: "string" });
      if (ifMatch) expect(op.responses["412"]).toBeDefined();
      if (ifMatch?.required) expect(op.responses["428"]).toBeDefined();
      if (idem) expect(op.responses["409"]).toBeDefined();
    }
  });
});

describe("request bodies that may be left out", () => {
  test("are documented as not required, and the server takes such a request without one", async () => {
    const optional = operations().filter(({ op }) => op.requestBody && op.requestBody.required === false);
    expect(optional.map((o) => o.name)).toEqual(
      expect.arrayContaining([
        "POST /billing/portal-sessions",
        "POST /account/invitations/{invitation_id}/resend",
        "POST /workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}/test",
      ]),
    );
    for (const { name, method, path } of optional) {
      const url = `/v1${path.replace("{workspace_id}", s.owner.workspaceId).replace(/\{[a-z_]+\}/g, "unknown_id")}`;
      const r = await s.request(method.toUpperCase(), url, {
        headers: { "idempotency-key": crypto.randomUUID() },
      });
      expect({ name, refused: [400, 415, 422].includes(r.status) }).toEqual({ name, refused: false });
    }
    // A body the route needs stays required (and its absence is a 400).
    expect(find("post", "/workspaces")!.op.requestBody.required).toBe(true);
    expect((await s.request("POST", "/v1/workspaces", {})).status).toBe(400);
  });
});

describe("headers of particular operations", () => {
  // The contract's operations with a required Idempotency-Key (checked once each exists).
  const requiredKey: [string, string][] = [
    ["post", "/account/invitations"],
    ["post", "/workspaces/{workspace_id}/asset-uploads"],
    ["post", "/workspaces/{workspace_id}/asset-uploads/{upload_id}/complete"],
    ["post", "/workspaces/{workspace_id}/webhook-endpoints"],
    ["delete", "/workspaces/{workspace_id}/posts/{post}"],
  ];
  test("POST /account/invitations (and the contract's other key-required operations) document Idempotency-Key as required", () => {
    expect(header(find("post", "/account/invitations")!.op, "Idempotency-Key")).toMatchObject({
      in: "header",
      required: true,
    });
    for (const [method, path] of requiredKey) {
      const found = find(method, path);
      if (found)
        expect({ op: found.name, required: header(found.op, "Idempotency-Key")?.required }).toEqual({
          op: found.name,
          required: true,
        });
    }
  });

  test("Create Post documents Idempotency-Key as optional (drafts do without)", () => {
    const found = find("post", "/workspaces/{workspace_id}/posts");
    if (found) expect(header(found.op, "Idempotency-Key")).toMatchObject({ required: false });
  });

  test("an operation that honours Idempotency-Key documents it", async () => {
    // POST /workspaces replays a repeated key: so its document must say it takes one.
    const body = { name: "Idempotent" };
    const a = await s.request("POST", "/v1/workspaces", { headers: { "idempotency-key": "ws-doc" }, body });
    const b = await s.request("POST", "/v1/workspaces", { headers: { "idempotency-key": "ws-doc" }, body });
    expect(a.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    expect(header(find("post", "/workspaces")!.op, "Idempotency-Key")).toBeDefined();
  });

  test("PATCH /workspaces/{workspace_id} documents If-Match", () => {
    const op = find("patch", "/workspaces/{workspace_id}")!.op;
    expect(header(op, "If-Match")).toMatchObject({ in: "header", schema: { type: "string" } });
    expect(op.responses["412"].content["application/problem+json"]).toBeDefined();
    const param = (op.parameters as any[]).find((p) => p.in === "path");
    expect(param).toMatchObject({ name: "workspace_id", required: true });
  });

  test("POST /account/invitations documents its body and response as the contract has them", () => {
    const op = find("post", "/account/invitations")!.op;
    expect(op["x-required-scope"]).toBe("team:write");
    const body = resolveRef(op.requestBody.content["application/json"].schema);
    expect(body.required).toEqual(["email"]);
    expect(body.properties.email).toMatchObject({ type: "string", maxLength: 254 });
    const created = resolveRef(op.responses["201"].content["application/json"].schema);
    expect(created.required).toEqual(
      expect.arrayContaining(["id", "object", "email", "status", "created_at", "expires_at", "delivery"]),
    );
    expect(op.responses["409"]).toBeDefined();
  });
});

describe("docs pages", () => {
  test("GET /v1/docs is an HTML page that loads the reference from this server only", async () => {
    const r = await s.request("GET", "/v1/docs", { key: null });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    expect(r.text).toContain('src="/v1/docs/assets/api-reference.js"');
    expect(r.text).toContain("/v1/openapi.json");
    const sources = [...r.text.matchAll(/\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1]!);
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) expect(source).not.toMatch(/^(https?:)?\/\//i);
    expect(r.text).not.toMatch(/<script[^>]+src=["']?(https?:)?\/\//i);
    expect(r.text).not.toMatch(/<link[^>]+href=["']?(https?:)?\/\//i);
    expect(r.text).not.toMatch(/@import\s+url\(["']?https?:/i);
    // The UI would otherwise fetch its web fonts from the vendor's CDN.
    const attribute = r.text.match(/data-configuration="([^"]*)"/)?.[1];
    expect(attribute).toBeDefined();
    const configuration = JSON.parse(
      attribute!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))).replace(/&quot;/g, '"'),
    );
    expect(configuration.withDefaultFonts).toBe(false);
    // None of Scalar's hosted services ("Ask AI", "Generate MCP", "Deploy"), and an API key preselected.
    expect(configuration).toMatchObject({
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: "never",
      telemetry: false,
      authentication: { preferredSecurityScheme: "bearer" },
    });
    expect(doc.components.securitySchemes).toHaveProperty(
      configuration.authentication.preferredSecurityScheme,
    );
  });

  test("the reference's script is served by Herald itself", async () => {
    const r = await fetch(`${s.url}/v1/docs/assets/api-reference.js`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("text/javascript");
    const body = await r.arrayBuffer();
    expect(body.byteLength).toBeGreaterThan(100_000);
    expect(new TextDecoder().decode(body.slice(0, 2000))).not.toMatch(/<html/i);
  });

  test("GET /v1/docs/reference/errors lists every code with an anchor", async () => {
    const r = await s.request("GET", "/v1/docs/reference/errors", { key: null });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/html");
    const codes = Object.keys(problemCatalog);
    expect(codes.length).toBeGreaterThanOrEqual(20);
    for (const code of codes) {
      expect(r.text).toContain(`id="${code}"`);
      expect(r.text).toContain(`<code>${code}</code>`);
    }
    for (const code of [
      "public_invalid_request",
      "public_idempotency_outcome_unknown",
      "public_post_group_channel_conflict",
      "public_payload_too_large",
    ]) {
      expect(codes).toContain(code);
    }
  });

  test("a problem's type URL leads to its entry on that page", async () => {
    const problem = await s.request("GET", "/v1/account", { key: null });
    expect(problem.status).toBe(401);
    const type = new URL(problem.body.type);
    expect(type.hash).toBe(`#${problem.body.code}`);
    const page = await fetch(type.href.replace(/#.*$/, ""));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`id="${problem.body.code}"`);
  });
});

describe("GET /health", () => {
  test("reports status, version, database and jobs without authentication", async () => {
    const r = await s.request("GET", "/health", { key: null });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(r.body).toMatchObject({ status: "ok", version: HERALD_VERSION, database: "ok" });
    expect(typeof r.body.mail_outbox_backlog).toBe("number");
    expect(Array.isArray(r.body.jobs)).toBe(true);
    const ids = r.body.jobs.map((j: { id: string }) => j.id);
    expect(ids).toContain("mail-outbox");
    for (const job of r.body.jobs)
      expect(Object.keys(job).sort()).toEqual(["failed", "id", "last_finished_at", "last_started_at"]);
  });

  test("a job that ran shows when", async () => {
    await s.server.scheduler.runNow("mail-outbox");
    const r = await s.request("GET", "/health", { key: null });
    const job = r.body.jobs.find((j: { id: string }) => j.id === "mail-outbox");
    expect(job.last_started_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(job.last_finished_at).toMatch(/Z$/);
    expect(job.failed).toBe(false);
  });

  test("the mail backlog counts invitations waiting for SMTP", async () => {
    const before = (await s.request("GET", "/health", { key: null })).body.mail_outbox_backlog;
    for (const [i, email] of ["one@example.com", "two@example.com"].entries()) {
      const r = await s.request("POST", "/v1/account/invitations", {
        headers: { "idempotency-key": `health-${i}` },
        body: { email },
      });
      expect(r.status).toBe(201);
    }
    await s.server.scheduler.runNow("mail-outbox"); // no SMTP: nothing leaves the outbox
    const after = (await s.request("GET", "/health", { key: null })).body.mail_outbox_backlog;
    expect(after).toBe(before + 2);
  });
});

describe("response headers and paging parameters are documented", () => {
  test("every response names Service-Request-Id; listings Link; resources ETag; 202 and 429 Retry-After; 401 WWW-Authenticate", () => {
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          const where = `${method.toUpperCase()} ${path} ${status}`;
          expect({ where, has: "Service-Request-Id" in (response.headers ?? {}) }).toEqual({
            where,
            has: true,
          });
          if (status === "429" || status === "202")
            expect({ where, retryAfter: response.headers["Retry-After"]?.schema }).toEqual({
              where,
              retryAfter: { type: "integer", minimum: 1 },
            });
          if (status === "401") expect(response.headers).toHaveProperty("WWW-Authenticate");
        }
      }
    }
    expect(doc.paths["/workspaces"].get.responses["200"].headers).toHaveProperty("Link");
    expect(doc.paths["/workspaces/{workspace_id}"].get.responses["200"].headers).toHaveProperty("ETag");
  });

  test("limit is an integer 1 to 100 with default 25 wherever a listing pages", () => {
    let seen = 0;
    for (const item of Object.values(doc.paths as Record<string, Record<string, any>>)) {
      for (const op of Object.values(item)) {
        const limit = (op.parameters ?? []).find((p: any) => p.name === "limit" && p.in === "query");
        if (!limit) continue;
        seen += 1;
        expect(limit.schema).toEqual({ type: "integer", minimum: 1, maximum: 100, default: 25 });
      }
    }
    expect(seen).toBeGreaterThanOrEqual(5);
  });
});
