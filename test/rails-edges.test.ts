// Defects a new user hit at the edges of the HTTP rails: short Host names, oversized heads, malformed
// If-Match, media types, deep or ill-formed JSON, repeated query parameters, unsupported methods,
// key guessing and the access log. Each scenario goes through a real server over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { setWebhookTransport } from "../src/modules/webhooks/transport.ts";
import { expectProblem } from "./helpers/problems.ts";
import { rawRequest } from "./helpers/raw-http.ts";
import { startTestServer, type TestResponse, type TestServer } from "./helpers/server.ts";
import { mustCreateEndpoint } from "./webhooks/helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
});
afterAll(async () => {
  await s.stop();
});

const workspacePath = () => `/v1/workspaces/${s.owner.workspaceId}`;

/** The `{pointer, parameter}` of each field error of a problem. */
const fieldsOf = (r: TestResponse) =>
  r.body.errors.map(({ pointer, parameter }: { pointer: string; parameter?: string }) => ({
    pointer,
    parameter,
  }));

describe("a short Host header still reaches every route", () => {
  const hosts: { name: string; host: string | null; version?: string }[] = [
    { name: "three letters", host: "app" },
    { name: "one letter and a port", host: "x:80" },
    { name: "one letter", host: "a" },
    { name: "empty", host: "" },
    { name: "not a host name", host: "a/b" },
    { name: "absent (HTTP/1.0)", host: null, version: "HTTP/1.0" },
    { name: "a long name (unchanged)", host: "herald.internal.example:8080" },
  ];
  for (const h of hosts) {
    test(h.name, async () => {
      const send = (path: string, auth = true) =>
        rawRequest(s.url, [
          `GET ${path} ${h.version ?? "HTTP/1.1"}`,
          ...(h.host === null ? [] : [`Host: ${h.host}`]),
          ...(auth ? [`Authorization: Bearer ${s.owner.apiKey}`] : []),
        ]);
      expect((await send("/health", false)).status).toBe(200);
      const account = await send("/v1/account");
      expect(account.status).toBe(200);
      expect(account.headers.get("service-request-id")).toMatch(/^req_/);
      const workspace = await send(`${workspacePath()}?`);
      expect({ status: workspace.status, id: workspace.body?.id }).toEqual({
        status: 200,
        id: s.owner.workspaceId,
      });
      expectProblem(await send("/v1/nothing-here"), 404, "public_not_found");
      const page = await send("/v1/workspaces?limit=1");
      expect({ status: page.status, count: page.body?.data?.length }).toEqual({ status: 200, count: 1 });
      const body = JSON.stringify({ name: `Host ${h.name}` });
      const created = await rawRequest(
        s.url,
        [
          `POST /v1/workspaces ${h.version ?? "HTTP/1.1"}`,
          ...(h.host === null ? [] : [`Host: ${h.host}`]),
          `Authorization: Bearer ${s.owner.apiKey}`,
          "Content-Type: application/json",
          `Content-Length: ${Buffer.byteLength(body)}`,
        ],
        body,
      );
      expect({ status: created.status, name: created.body?.name }).toEqual({
        status: 201,
        name: `Host ${h.name}`,
      });
    });
  }
});

describe("an oversized request head is a problem 431 with a request id", () => {
  const pad = (bytes: number) => "a".repeat(bytes);
  const cases: { name: string; path: string; headers?: Record<string, string>; status: number }[] = [
    { name: "a 64 KiB path", path: `/v1/${pad(64 * 1024)}`, status: 431 },
    { name: "a 60 KiB header", path: "/v1/account", headers: { "x-padding": pad(60 * 1024) }, status: 431 },
    { name: "16 KiB+ in all", path: "/health", headers: { a: pad(9e3), b: pad(9e3) }, status: 431 },
    { name: "a 12 KiB header passes", path: "/v1/account", headers: { x: pad(12 * 1024) }, status: 200 },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await s.request("GET", c.path, { headers: { "service-request-id": "head-1", ...c.headers } });
      if (c.status === 200) return expect(r.status).toBe(200);
      expectProblem(r, 431, "public_request_header_too_large");
      expect(r.headers.get("service-request-id")).toBe("head-1");
      expect(r.body.detail).toContain("16384");
    });
  }

  test("over a raw socket too", async () => {
    const r = await rawRequest(s.url, [`GET /v1/${"b".repeat(64 * 1024)} HTTP/1.1`, "Host: 127.0.0.1"]);
    expectProblem(r, 431, "public_request_header_too_large");
  });
});

describe("If-Match must be * or a list of entity tags", () => {
  const failed = "public_precondition_failed";
  const cases: { name: string; ifMatch: string; status: number; code?: string }[] = [
    { name: "garbage", ifMatch: "garbage", status: 400, code: "public_invalid_request" },
    { name: "unquoted tag", ifMatch: "abc", status: 400, code: "public_invalid_request" },
    { name: "half-quoted tag", ifMatch: '"abc', status: 400, code: "public_invalid_request" },
    { name: "star in a list", ifMatch: '*, "abc"', status: 400, code: "public_invalid_request" },
    { name: "a quoted tag that does not match", ifMatch: '"stale"', status: 412, code: failed },
    { name: "a weak tag (never matches strongly)", ifMatch: 'W/"stale"', status: 412, code: failed },
    { name: "a list with the current tag", ifMatch: '"stale", CURRENT', status: 200 },
    { name: "*", ifMatch: "*", status: 200 },
  ];
  for (const c of cases) {
    test(`${c.name} → ${c.status}`, async () => {
      const current = (await s.request("GET", workspacePath())).headers.get("etag")!;
      const ifMatch = c.ifMatch.replace("CURRENT", current);
      const headers = { "if-match": ifMatch };
      const r = await s.request("PATCH", workspacePath(), { body: { name: "Renamed" }, headers });
      if (c.status === 200) return expect(r.status).toBe(200);
      expectProblem(r, c.status, c.code!);
      if (c.status === 400) expect(fieldsOf(r)).toEqual([{ pointer: "", parameter: "If-Match" }]);
    });
  }
});

describe("JSON routes take JSON media types only", () => {
  const body = JSON.stringify({ name: "Media" });
  const cases: { name: string; contentType: string | null; status: number }[] = [
    { name: "text/plain", contentType: "text/plain", status: 415 },
    { name: "a form", contentType: "application/x-www-form-urlencoded", status: 415 },
    { name: "no Content-Type", contentType: null, status: 415 },
    { name: "a look-alike", contentType: "application/jsonp", status: 415 },
    { name: "application/json", contentType: "application/json", status: 201 },
    { name: "with a charset", contentType: "application/json; charset=utf-8", status: 201 },
    { name: "upper case", contentType: "Application/JSON", status: 201 },
    { name: "a +json type", contentType: "application/merge-patch+json", status: 201 },
  ];
  for (const c of cases) {
    test(`${c.name} → ${c.status}`, async () => {
      const headers: Record<string, string> = { authorization: `Bearer ${s.owner.apiKey}` };
      if (c.contentType !== null) headers["content-type"] = c.contentType;
      const response = await fetch(`${s.url}/v1/workspaces`, { method: "POST", headers, body });
      const text = await response.text();
      const r = { status: response.status, headers: response.headers, text, body: JSON.parse(text) };
      if (c.status === 201) return expect(r.status).toBe(201);
      expectProblem(r, 415, "public_unsupported_media_type");
      expect(fieldsOf(r)).toEqual([{ pointer: "", parameter: "Content-Type" }]);
    });
  }

  test("a route whose body is optional works with no body and no Content-Type", async () => {
    setWebhookTransport(s.herald, { resolve: async () => ["93.184.216.34"] });
    const endpoint = await mustCreateEndpoint(s, { url: "https://hooks.example.com/herald" });
    const path = `${workspacePath()}/webhook-endpoints/${endpoint.id}/rotate-secret`;
    const response = await fetch(`${s.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.owner.apiKey}` },
    });
    expect(response.status).toBe(200);
  });
});

describe("JSON bodies: nesting and lone surrogates", () => {
  const nested = (levels: number) =>
    `{"name":"x","time_zone":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;
  const lone = /surrogate/;
  const deep = /nests deeper than 32 levels/;
  const cases: { name: string; body: string; status: number; pointers?: string[]; detail?: RegExp }[] = [
    { name: "40 levels deep", body: nested(40), status: 400, pointers: [""], detail: deep },
    {
      name: "a lone high surrogate",
      body: '{"name":"a\\ud800"}',
      status: 400,
      pointers: ["/name"],
      detail: lone,
    },
    {
      name: "a lone low surrogate",
      body: '{"name":"\\uDC00b"}',
      status: 400,
      pointers: ["/name"],
      detail: lone,
    },
    {
      name: "in a name",
      body: '{"name":"ok","\\ud800":1}',
      status: 400,
      pointers: ["/\ud800"],
      detail: lone,
    },
    { name: "a surrogate pair is fine", body: '{"name":"smile \\ud83d\\ude00"}', status: 201 },
    { name: "an escaped backslash before u is fine", body: '{"name":"a\\\\ud800"}', status: 201 },
  ];
  for (const c of cases) {
    test(`${c.name} → ${c.status}`, async () => {
      const r = await s.request("POST", "/v1/workspaces", { body: c.body });
      if (c.status === 201) {
        expect(r.status).toBe(201);
        expect(r.body.name).toBe(JSON.parse(c.body).name);
        return;
      }
      expectProblem(r, c.status, "public_invalid_request", c.pointers);
      expect(r.body.detail).toMatch(c.detail!);
      expect(r.body.detail).not.toContain("not valid JSON");
    });
  }
});

describe("a query parameter sent twice is a 400 naming it", () => {
  const cases: { name: string; query: string; parameter: string | null }[] = [
    { name: "limit twice", query: "limit=1&limit=2", parameter: "limit" },
    { name: "after twice, apart", query: "after=a&limit=1&after=b", parameter: "after" },
    { name: "the same value twice", query: "limit=5&limit=5", parameter: "limit" },
    { name: "an encoded repeat", query: "limit=1&l%69mit=2", parameter: "limit" },
    { name: "each once", query: "limit=1", parameter: null },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await s.request("GET", `/v1/workspaces?${c.query}`);
      if (c.parameter === null) return expect(r.status).toBe(200);
      expectProblem(r, 400, "public_invalid_request", [`/${c.parameter}`]);
      expect(fieldsOf(r)).toEqual([{ pointer: `/${c.parameter}`, parameter: c.parameter }]);
    });
  }
});

describe("an unsupported method on a known path is 405 with Allow", () => {
  const cases: { method: string; path: string; allow: string | null }[] = [
    { method: "PUT", path: "/v1/account", allow: "GET, HEAD" },
    { method: "DELETE", path: "/v1/account", allow: "GET, HEAD" },
    { method: "DELETE", path: "/v1/workspaces", allow: "GET, HEAD, POST" },
    { method: "POST", path: "/v1/workspaces/WS", allow: "GET, HEAD, PATCH" },
    { method: "POST", path: "/health", allow: "GET, HEAD" },
    { method: "OPTIONS", path: "/v1/account", allow: "GET, HEAD" },
    { method: "GET", path: "/v1/nothing-here", allow: null },
    { method: "PUT", path: "/v1/workspaces/ws_x/nothing", allow: null },
  ];
  for (const c of cases) {
    test(`${c.method} ${c.path}`, async () => {
      const r = await s.request(c.method, c.path.replace("WS", s.owner.workspaceId));
      if (c.allow === null) {
        expectProblem(r, 404, "public_not_found");
        expect(r.headers.get("allow")).toBeNull();
        return;
      }
      expectProblem(r, 405, "public_method_not_allowed");
      expect(r.headers.get("allow")).toBe(c.allow);
      expect(r.body.detail).toContain(c.allow);
    });
  }
});

describe("failed authentications are limited per client address", () => {
  test("past the limit, the address's further failures are 429; successes don't count", async () => {
    const t = await startTestServer({ env: { HERALD_AUTH_FAILURES_PER_MINUTE: "3" } });
    try {
      for (let i = 0; i < 5; i++) expect((await t.request("GET", "/v1/account")).status).toBe(200);
      const wrong = [{ key: "hk_live_wrong" }, { key: null }, { key: "hk_live_wrong2" }];
      for (const w of wrong) {
        expectProblem(await t.request("GET", "/v1/account", w), 401, "public_authentication_required");
      }
      const cases = [{ key: "hk_live_wrong" }, { key: null }];
      for (const c of cases) {
        const r = await t.request("GET", "/v1/account", c);
        expectProblem(r, 429, "public_rate_limited");
        const retryAfter = Number(r.headers.get("retry-after"));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
        expect(r.body.retry.after).toBe(retryAfter);
      }
      expect((await t.request("GET", "/health")).status).toBe(200);
      t.clock.advance(60_000);
      expectProblem(
        await t.request("GET", "/v1/account", { key: "hk_live_wrong" }),
        401,
        "public_authentication_required",
      );
    } finally {
      await t.stop();
    }
  });

  test("21 bad keys a minute from one address do not lock out a valid key from that address", async () => {
    const t = await startTestServer();
    try {
      for (let i = 0; i < 25; i++) await t.request("GET", "/v1/account", { key: `hk_live_guess${i}` });
      expectProblem(
        await t.request("GET", "/v1/account", { key: "hk_live_guess" }),
        429,
        "public_rate_limited",
      );
      const valid = await t.request("GET", "/v1/account");
      expect(valid.status).toBe(200);
      const other = await t.createKey({ scopes: ["posts:write"] });
      const body = {
        when: "draft",
        group: "still-here",
        posts: [{ channel: "mastodon", body: ["still here"] }],
      };
      const write = await t.request("POST", `/v1/workspaces/${t.owner.workspaceId}/posts`, {
        key: other,
        body,
      });
      expect(write.status).toBe(201);
    } finally {
      await t.stop();
    }
  });

  test("a key without the scope (403) is not a failed authentication", async () => {
    const t = await startTestServer({ env: { HERALD_AUTH_FAILURES_PER_MINUTE: "2" } });
    try {
      const narrow = await t.createKey({ scopes: ["audit:read"] });
      for (let i = 0; i < 4; i++) {
        const r = await t.request("POST", "/v1/workspaces", { key: narrow, body: { name: "n" } });
        expectProblem(r, 403, "public_scope_missing");
      }
      expect((await t.request("GET", "/v1/account")).status).toBe(200);
    } finally {
      await t.stop();
    }
  });
});

describe("access log", () => {
  const accessLines = (t: TestServer) =>
    t.logs.map((l) => JSON.parse(l)).filter((l) => l.message === "request");

  test("one line per request: method, route pattern, status, duration, request id, credential", async () => {
    const before = accessLines(s).length;
    type Case = { method: string; path: string; key?: null; route: string | null; status: number };
    const cases: (Case & { credential: boolean })[] = [
      {
        method: "GET",
        path: workspacePath(),
        route: "/v1/workspaces/:workspace_id",
        status: 200,
        credential: true,
      },
      { method: "GET", path: "/v1/account", key: null, route: "/v1/account", status: 401, credential: false },
      { method: "GET", path: "/health", route: "/health", status: 200, credential: false },
      { method: "GET", path: "/v1/nothing?signature=s3cr3t", route: null, status: 404, credential: false },
      { method: "POST", path: "/v1/workspaces", route: "/v1/workspaces", status: 415, credential: false },
    ];
    const ids: string[] = [];
    for (const c of cases) {
      const headers = c.method === "POST" ? { "content-type": "text/plain" } : undefined;
      const body = c.method === "POST" ? "{}" : undefined;
      const r = await s.request(c.method, c.path, { key: c.key, headers, body });
      expect(r.status).toBe(c.status);
      ids.push(r.headers.get("service-request-id")!);
    }
    const lines = accessLines(s).slice(before);
    expect(lines.length).toBe(cases.length);
    cases.forEach((c, i) => {
      const line = lines.find((l) => l.request_id === ids[i]);
      expect(line).toMatchObject({ level: "info", method: c.method, route: c.route, status: c.status });
      expect(line.credential_id).toBe(c.credential ? s.owner.credentialId : null);
      expect(typeof line.duration_ms).toBe("number");
      expect(line.duration_ms).toBeGreaterThanOrEqual(0);
    });
    const written = JSON.stringify(lines);
    expect(written).not.toContain(s.owner.apiKey);
    expect(written).not.toContain("s3cr3t");
  });

  test("HERALD_ACCESS_LOG=0 turns it off", async () => {
    const t = await startTestServer({ env: { HERALD_ACCESS_LOG: "0" } });
    try {
      expect((await t.request("GET", "/v1/account")).status).toBe(200);
      expect(accessLines(t)).toEqual([]);
    } finally {
      await t.stop();
    }
  });
});
