// `<origin>/mcp` driven by the official MCP client against the real server: authentication (keys as
// bearer, the OAuth challenge, never a credential in a URL, revocation at once), tools filtered by
// scope and environment, and every tool's real effect checked through the API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Client } from "@modelcontextprotocol/client";
import { TOOLS } from "../../src/http/mcp/tools.ts";
import type { Scope } from "../../src/core/scopes.ts";
import { startTestServer } from "../helpers/server.ts";
import { makePng } from "../posts/fixtures.ts";
import { startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { callOk, callRefused, ERAS, mcpClient, toolNames } from "./helpers.ts";

let w: PostsWorld;
beforeAll(async () => {
  w = await startPostsWorld();
});
afterAll(() => w.stop());

const ALL_TOOLS = [
  "list_workspaces",
  "list_destinations",
  "list_posts",
  "get_post",
  "validate_post",
  "create_draft",
  "update_draft",
  "publish_post",
  "cancel_post",
  "retry_post",
  "upload_media",
  "get_post_group_analytics",
];
const READ_TOOLS = ["list_workspaces", "list_posts", "get_post", "validate_post", "get_post_group_analytics"];

/** A raw POST to /mcp (an initialize request), with the headers given. */
function rawMcp(path: string, headers: Record<string, string>) {
  return fetch(`${w.s.url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });
}

/** The parameters of a response's Bearer challenge (realm left out: it names no resource). */
function challengeOf(response: Response): Record<string, string> {
  const header = response.headers.get("www-authenticate") ?? "";
  expect(header).toStartWith("Bearer ");
  const params = Object.fromEntries([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
  delete params.realm;
  return params;
}

describe("authentication", () => {
  const metadata = () => `${w.s.url}/.well-known/oauth-protected-resource`;

  test("no credential: 401 naming the protected-resource metadata", async () => {
    const r = await rawMcp("/mcp", {});
    expect(r.status).toBe(401);
    expect(challengeOf(r)).toEqual({ resource_metadata: metadata() });
    expect(await r.json()).toMatchObject({ status: 401, code: "public_authentication_required" });
  });

  const refused = [
    { name: "an unknown key", authorization: "Bearer hk_live_0000000000000000000000000000000000" },
    { name: "not a bearer", authorization: "Basic dXNlcjpwYXNz" },
  ];
  for (const c of refused)
    test(`${c.name}: 401 with invalid_token and the metadata`, async () => {
      const r = await rawMcp("/mcp", { authorization: c.authorization });
      expect(r.status).toBe(401);
      expect(challengeOf(r)).toEqual({ resource_metadata: metadata(), error: "invalid_token" });
    });

  for (const name of ["key", "api_key", "access_token"])
    test(`a credential in the URL (?${name}=) is refused, even next to a valid header`, async () => {
      const key = w.s.owner.apiKey;
      const alone = await rawMcp(`/mcp?${name}=${key}`, {});
      expect(alone.status).toBe(400);
      const body = (await alone.json()) as any;
      expect(body).toMatchObject({ code: "public_invalid_request" });
      expect(body.errors[0]).toMatchObject({ parameter: name });
      const withHeader = await rawMcp(`/mcp?${name}=${key}`, { authorization: `Bearer ${key}` });
      expect(withHeader.status).toBe(400);
    });

  test("failed authentications at /mcp count with the API's, per address; a valid key still gets in", async () => {
    const limited = await startTestServer({ env: { HERALD_AUTH_FAILURES_PER_MINUTE: "2" } });
    try {
      const post = (authorization?: string) =>
        fetch(`${limited.url}/mcp`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...(authorization ? { authorization } : {}),
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
        });
      expect((await post("Bearer hk_live_wrong1")).status).toBe(401);
      expect((await limited.request("GET", "/v1/me", { key: "hk_live_wrong2" })).status).toBe(401);
      const third = await post("Bearer hk_live_wrong3");
      expect(third.status).toBe(429);
      expect(third.headers.get("retry-after")).toBeTruthy();
      const client = await mcpClient(limited.url, limited.owner.apiKey);
      expect(await toolNames(client)).toContain("list_workspaces");
      await client.close();
    } finally {
      await limited.stop();
    }
  });

  test("a revoked key is refused at once, mid-conversation", async () => {
    const key = await w.s.createKey({ scopes: ["posts:read"] });
    const client = await mcpClient(w.s.url, key);
    await callOk(client, "list_workspaces", {});
    const revoked = await w.s.request("POST", "/v1/me/revoke", { key, body: { confirmed: true } });
    expect(revoked.status).toBe(200);
    await expect(client.callTool({ name: "list_workspaces", arguments: {} })).rejects.toThrow();
    const r = await rawMcp("/mcp", { authorization: `Bearer ${key}` });
    expect(r.status).toBe(401);
    await client.close();
  });
});

describe("browser-based clients (another origin, the credential in a header)", () => {
  const page = { origin: "https://inspector.example" };

  test("the preflight allows POST with Authorization and the protocol's headers, from any origin", async () => {
    const r = await fetch(`${w.s.url}/mcp`, {
      method: "OPTIONS",
      headers: {
        ...page,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type, mcp-protocol-version",
      },
    });
    expect(r.status).toBe(204);
    expect(r.headers.get("access-control-allow-origin")).toBe("*");
    expect(r.headers.get("access-control-allow-credentials")).toBeNull();
    const list = (name: string) => (r.headers.get(name) ?? "").split(/,\s*/);
    expect(list("access-control-allow-methods")).toContain("POST");
    expect(list("access-control-allow-headers")).toEqual(
      expect.arrayContaining(["authorization", "content-type", "mcp-protocol-version"]),
    );
  });

  const answers = [
    { name: "a refused credential (401): the challenge is readable", path: "/mcp", key: false, status: 401 },
    { name: "a credential in the URL (400)", path: "/mcp?api_key=x", key: false, status: 400 },
    { name: "a served request (200)", path: "/mcp", key: true, status: 200 },
  ];
  for (const c of answers)
    test(c.name, async () => {
      const auth: Record<string, string> = c.key ? { authorization: `Bearer ${w.s.owner.apiKey}` } : {};
      const r = await rawMcp(c.path, { ...page, ...auth });
      expect(r.status).toBe(c.status);
      expect(r.headers.get("access-control-allow-origin")).toBe("*");
      expect((r.headers.get("access-control-expose-headers") ?? "").split(/,\s*/)).toContain(
        "www-authenticate",
      );
      if (c.status === 401) expect(r.headers.get("www-authenticate")).toStartWith("Bearer ");
      await r.body?.cancel();
    });
});

describe("the transport", () => {
  const authorization = () => `Bearer ${w.s.owner.apiKey}`;

  for (const method of ["GET", "DELETE"])
    test(`${method} (a 2025 session operation) is 405: the endpoint is stateless`, async () => {
      const r = await fetch(`${w.s.url}/mcp`, {
        method,
        headers: { authorization: authorization(), accept: "text/event-stream" },
      });
      expect(r.status).toBe(405);
      expect(r.headers.get("allow")).toBe("POST");
    });

  test("a request over 2 MiB is 413 before anything is parsed", async () => {
    const r = await fetch(`${w.s.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: authorization(),
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { pad: "x".repeat(2 * 1024 * 1024) },
      }),
    });
    expect(r.status).toBe(413);
  });
});

describe("tools follow the credential's scopes and environment", () => {
  const cases: { name: string; scopes?: Scope[]; environment?: "live" | "test"; tools: string[] }[] = [
    { name: "a live key with every scope", tools: ALL_TOOLS },
    { name: "a key with only posts:read", scopes: ["posts:read"], tools: READ_TOOLS },
    {
      name: "a test key with every scope",
      environment: "test",
      tools: ALL_TOOLS.filter((t) => t !== "publish_post" && t !== "retry_post"),
    },
    {
      name: "a key with assets:write and destinations:read",
      scopes: ["assets:write", "destinations:read"],
      tools: ["list_workspaces", "list_destinations", "upload_media"],
    },
  ];
  for (const era of ERAS)
    for (const c of cases)
      test(`${c.name} (${era.name})`, async () => {
        const key = await w.s.createKey({ scopes: c.scopes, environment: c.environment });
        const client = await mcpClient(w.s.url, key, era);
        expect(await toolNames(client)).toEqual(c.tools);
        await client.close();
      });

  for (const era of ERAS)
    test(`a hidden tool answers as an unknown tool does (${era.name})`, async () => {
      const key = await w.s.createKey({ scopes: ["posts:read"] });
      const client = await mcpClient(w.s.url, key, era);
      const unknown = await client.callTool({ name: "no_such_tool", arguments: {} }).catch((e: Error) => e);
      const hidden = await client
        .callTool({ name: "create_draft", arguments: { workspace_id: w.ws } })
        .catch((e: Error) => e);
      expect(unknown).toBeInstanceOf(Error);
      expect(hidden).toBeInstanceOf(Error);
      expect((hidden as Error).message.replace("create_draft", "X")).toBe(
        (unknown as Error).message.replace("no_such_tool", "X"),
      );
      // Nothing was created.
      const drafts = await w.s.request("GET", `/v1/workspaces/${w.ws}/posts?view=drafts`);
      expect(drafts.body.data).toEqual([]);
      await client.close();
    });

  test("each tool declares its API operation's scope and truthful annotations", async () => {
    const document = (await w.s.request("GET", "/v1/openapi.json")).body;
    const operations: Record<string, [string, string]> = {
      list_workspaces: ["get", "/workspaces"],
      list_destinations: ["get", "/workspaces/{workspace_id}/destinations"],
      list_posts: ["get", "/workspaces/{workspace_id}/posts"],
      get_post: ["get", "/workspaces/{workspace_id}/posts/{post_id}"],
      validate_post: ["post", "/workspaces/{workspace_id}/posts/validate"],
      create_draft: ["post", "/workspaces/{workspace_id}/posts"],
      update_draft: ["patch", "/workspaces/{workspace_id}/posts/{post_id}"],
      publish_post: ["post", "/workspaces/{workspace_id}/posts"],
      cancel_post: ["post", "/workspaces/{workspace_id}/posts/{post_id}/cancel"],
      retry_post: ["post", "/workspaces/{workspace_id}/posts/{post_id}/retry"],
      upload_media: ["post", "/workspaces/{workspace_id}/asset-uploads"],
      get_post_group_analytics: ["get", "/workspaces/{workspace_id}/analytics/post-groups/{group}"],
    };
    const client = await mcpClient(w.s.url, w.s.owner.apiKey);
    const listed = (await client.listTools()).tools;
    for (const tool of TOOLS) {
      const [method, path] = operations[tool.name]!;
      const scope = document.paths[path][method]["x-required-scope"];
      expect({ tool: tool.name, scope: tool.scope }).toEqual({
        tool: tool.name,
        scope: scope === "none" ? "authenticated" : scope,
      });
      const advertised = listed.find((t) => t.name === tool.name)!;
      expect(advertised.annotations).toMatchObject(tool.annotations);
      if (tool.name !== "list_workspaces") expect(advertised.inputSchema.required).toContain("workspace_id");
      // Self-contained: an assistant cannot resolve references into Herald's OpenAPI components.
      expect({ tool: tool.name, refs: JSON.stringify(advertised.inputSchema).includes('"$ref"') }).toEqual({
        tool: tool.name,
        refs: false,
      });
    }
    // Reads change nothing; the tools that reach the networks say so.
    const hints = Object.fromEntries(listed.map((t) => [t.name, t.annotations]));
    for (const name of READ_TOOLS.concat("list_destinations")) expect(hints[name]!.readOnlyHint).toBe(true);
    for (const name of [
      "create_draft",
      "update_draft",
      "publish_post",
      "cancel_post",
      "retry_post",
      "upload_media",
    ])
      expect(hints[name]!.readOnlyHint).toBe(false);
    expect(hints.publish_post).toMatchObject({
      openWorldHint: true,
      idempotentHint: true,
      destructiveHint: false,
    });
    expect(hints.retry_post!.openWorldHint).toBe(true);
    expect(hints.cancel_post!.destructiveHint).toBe(true);
    await client.close();
  });
});

describe("every tool, with its effect read back through the API", () => {
  let client: Client;
  beforeAll(async () => {
    client = await mcpClient(w.s.url, w.s.owner.apiKey, ERAS[1]);
  });
  afterAll(() => client.close());
  const api = (path: string) => w.s.request("GET", `/v1/workspaces/${w.ws}${path}`);
  const runEngine = () => w.s.server.engine.runUntilIdle();

  test("list_workspaces and list_destinations", async () => {
    const workspaces = await callOk(client, "list_workspaces", {});
    expect(workspaces.data.map((ws: { id: string }) => ws.id)).toEqual([w.ws]);
    const destinations = await callOk(client, "list_destinations", { workspace_id: w.ws });
    expect(destinations.data.map((d: { id: string }) => d.id)).toEqual([w.destinationId]);
  });

  test("upload_media stores a ready asset; create_draft, update_draft, list_posts, get_post", async () => {
    const bytes = makePng(8, 6);
    const asset = await callOk(client, "upload_media", {
      workspace_id: w.ws,
      file_name: "chart.png",
      content_type: "image/png",
      data_base64: bytes.toString("base64"),
    });
    expect(asset).toMatchObject({
      object: "asset",
      status: "ready",
      type: "card",
      byte_size: bytes.byteLength,
    });
    expect((await api(`/assets/${asset.id}`)).body).toMatchObject({
      id: asset.id,
      status: "ready",
      width: 8,
    });

    const draftArgs = {
      workspace_id: w.ws,
      group: "mcp-draft",
      posts: [{ destination_id: w.destinationId, body: ["a draft from an assistant"], media: [asset.id] }],
    };
    const checked = await callOk(client, "validate_post", { ...draftArgs, when: "draft" });
    expect(checked).toMatchObject({ object: "post_validation", valid: true });
    const created = await callOk(client, "create_draft", draftArgs);
    const draft = created.posts[0];
    expect((await api(`/posts/${draft.id}`)).body).toMatchObject({
      state: "draft",
      payload: { body: ["a draft from an assistant"] },
      asset_ids: [asset.id],
    });

    const updated = await callOk(client, "update_draft", {
      workspace_id: w.ws,
      post_id: draft.id,
      version: draft.version,
      body: ["the corrected draft"],
    });
    expect(updated.version).toBe(draft.version + 1);
    expect((await api(`/posts/${draft.id}`)).body.payload.body).toEqual(["the corrected draft"]);
    // The version read before is stale now: refused, not overwritten.
    await callRefused(
      client,
      "update_draft",
      { workspace_id: w.ws, post_id: draft.id, version: draft.version, body: ["lost update"] },
      412,
      "public_precondition_failed",
    );

    const drafts = await callOk(client, "list_posts", { workspace_id: w.ws, view: "drafts", limit: 10 });
    expect(drafts.data.map((p: { id: string }) => p.id)).toContain(draft.id);
    const got = await callOk(client, "get_post", {
      workspace_id: w.ws,
      post_id: draft.id,
      include: "attempts",
    });
    expect(got).toMatchObject({ id: draft.id, attempts: [] });
  });

  test("publish_post schedules, cancel_post cancels", async () => {
    const scheduled = await callOk(client, "publish_post", {
      workspace_id: w.ws,
      when: "2026-03-02T09:00:00+01:00",
      confirmed: true,
      idempotency_key: "mcp-schedule-1",
      group: "mcp-scheduled",
      posts: [{ destination_id: w.destinationId, body: ["tomorrow morning"] }],
    });
    const post = scheduled.posts[0];
    expect((await api(`/posts/${post.id}`)).body).toMatchObject({ state: "scheduled" });
    const cancelled = await callOk(client, "cancel_post", {
      workspace_id: w.ws,
      post_id: post.id,
      confirmed: true,
    });
    expect(cancelled.state).toBe("cancelled");
    expect((await api(`/posts/${post.id}`)).body.state).toBe("cancelled");
  });

  test("publish_post now; a rejected post is sent again by retry_post; its group's analytics", async () => {
    w.mastodon.failNext(1, { path: "/api/v1/statuses", status: 422 });
    const published = await callOk(client, "publish_post", {
      workspace_id: w.ws,
      when: "now",
      confirmed: true,
      idempotency_key: "mcp-now-1",
      group: "mcp-now",
      posts: [{ destination_id: w.destinationId, body: ["out now, after one refusal"] }],
    });
    const post = published.posts[0];
    await runEngine();
    expect((await api(`/posts/${post.id}`)).body.state).toBe("failed");
    const retried = await callOk(client, "retry_post", {
      workspace_id: w.ws,
      post_id: post.id,
      confirmed: true,
    });
    expect(retried.state).toBe("ready");
    await runEngine();
    expect((await api(`/posts/${post.id}`)).body.state).toBe("published");
    expect(w.mastodon.statuses.filter((s) => s.text === "out now, after one refusal")).toHaveLength(1);
    const analytics = await callOk(client, "get_post_group_analytics", {
      workspace_id: w.ws,
      group: "mcp-now",
    });
    expect(analytics).toMatchObject({ group: "mcp-now" });
    expect((await api("/analytics/post-groups/mcp-now")).body).toEqual(analytics);
  });

  test("publish_post twice with one idempotency_key publishes once", async () => {
    const args = {
      workspace_id: w.ws,
      when: "2026-03-03T10:00:00Z",
      confirmed: true,
      idempotency_key: "mcp-twice",
      group: "mcp-twice",
      posts: [{ destination_id: w.destinationId, body: ["only once"] }],
    };
    const first = await callOk(client, "publish_post", args);
    const second = await callOk(client, "publish_post", args);
    expect(second.posts.map((p: { id: string }) => p.id)).toEqual(
      first.posts.map((p: { id: string }) => p.id),
    );
    const group = await api("/posts?group=mcp-twice");
    expect(group.body.data).toHaveLength(1);
  });

  test("a tool's write is audited as the calling key's request, like the API's", async () => {
    const key = await w.s.createKey({ scopes: ["posts:write", "audit:read"] });
    const keyClient = await mcpClient(w.s.url, key);
    const created = await callOk(keyClient, "create_draft", {
      workspace_id: w.ws,
      group: "mcp-audited",
      posts: [{ destination_id: w.destinationId, body: ["audited"] }],
    });
    await keyClient.close();
    const me = await w.s.request("GET", "/v1/me", { key });
    const records = await w.s.request("GET", "/v1/audit-records?limit=100", { key });
    const record = records.body.data.find((r: any) => r.target.id === created.posts[0].id);
    expect(record).toMatchObject({ credential_id: me.body.authentication.credential_id, workspace_id: w.ws });
    expect(record.request_id).toStartWith("req_");
  });
});

describe("bad arguments answer the API's problem as a tool error", () => {
  let client: Client;
  beforeAll(async () => {
    client = await mcpClient(w.s.url, w.s.owner.apiKey);
  });
  afterAll(() => client.close());
  const post = () => ({ destination_id: w.destinationId, body: ["text"] });

  const cases: {
    name: string;
    tool: string;
    args: () => Record<string, unknown>;
    status: number;
    code: string;
    pointers: string[];
  }[] = [
    {
      name: "an empty body item (the API's schema)",
      tool: "create_draft",
      args: () => ({
        workspace_id: w.ws,
        group: "g",
        posts: [{ destination_id: w.destinationId, body: [] }],
      }),
      status: 400,
      code: "public_invalid_request",
      pointers: ["/posts/0/body"],
    },
    {
      name: "publish_post without confirmed",
      tool: "publish_post",
      args: () => ({
        workspace_id: w.ws,
        when: "now",
        idempotency_key: "k-unconfirmed",
        group: "g",
        posts: [post()],
      }),
      status: 400,
      code: "public_invalid_request",
      pointers: ["/confirmed"],
    },
    {
      name: "publish_post without idempotency_key",
      tool: "publish_post",
      args: () => ({ workspace_id: w.ws, when: "now", confirmed: true, group: "g", posts: [post()] }),
      status: 400,
      code: "public_invalid_request",
      pointers: ["/idempotency_key"],
    },
    {
      name: "publish_post of a draft",
      tool: "publish_post",
      args: () => ({
        workspace_id: w.ws,
        when: "draft",
        confirmed: true,
        idempotency_key: "k",
        group: "g",
        posts: [post()],
      }),
      status: 400,
      code: "public_invalid_request",
      pointers: ["/when"],
    },
    {
      name: "get_post without post_id",
      tool: "get_post",
      args: () => ({ workspace_id: w.ws }),
      status: 400,
      code: "public_invalid_request",
      pointers: ["/post_id"],
    },
    {
      name: "an unknown post",
      tool: "get_post",
      args: () => ({ workspace_id: w.ws, post_id: "post_nothing" }),
      status: 404,
      code: "public_not_found",
      pointers: [],
    },
    {
      name: "a workspace of another account",
      tool: "list_posts",
      args: () => ({ workspace_id: "ws_someone_elses" }),
      status: 404,
      code: "public_not_found",
      pointers: [],
    },
    {
      name: "an unknown argument",
      tool: "validate_post",
      args: () => ({ workspace_id: w.ws, when: "draft", group: "g", posts: [post()], colour: "red" }),
      status: 400,
      code: "public_invalid_request",
      pointers: ["/colour"],
    },
    {
      name: "an unknown argument of a read",
      tool: "list_posts",
      args: () => ({ workspace_id: w.ws, colour: "red" }),
      status: 400,
      code: "public_invalid_request",
      pointers: ["/colour"],
    },
    {
      name: "a value the listing does not know",
      tool: "list_posts",
      args: () => ({ workspace_id: w.ws, view: "everything" }),
      status: 400,
      code: "public_invalid_request",
      pointers: ["/view"],
    },
    {
      name: "upload_media of data that is not base64",
      tool: "upload_media",
      args: () => ({ workspace_id: w.ws, file_name: "a.png", content_type: "image/png", data_base64: "%%%" }),
      status: 400,
      code: "public_invalid_request",
      pointers: ["/data_base64"],
    },
    {
      name: "upload_media over 1 MiB",
      tool: "upload_media",
      args: () => ({
        workspace_id: w.ws,
        file_name: "big.png",
        content_type: "image/png",
        data_base64: Buffer.alloc(1_048_577).toString("base64"),
      }),
      status: 413,
      code: "public_payload_too_large",
      pointers: ["/data_base64"],
    },
  ];
  for (const c of cases)
    test(c.name, async () => {
      await callRefused(client, c.tool, c.args(), c.status, c.code, c.pointers);
    });

  test("nothing was published by the refused calls", async () => {
    const posts = await w.s.request("GET", `/v1/workspaces/${w.ws}/posts?group=g`);
    expect(posts.body.data).toEqual([]);
  });
});
