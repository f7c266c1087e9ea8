// The endpoint resource through the API: create (secret once), list, get, patch, delete, rotate,
// validation, scopes, and secrets never shown again nor stored in clear.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { engineOf } from "../../src/db/engine.ts";
import { setWebhookTransport } from "../../src/modules/webhooks/transport.ts";
import { ALL_SCOPES, type Scope } from "../../src/core/scopes.ts";
import { expectProblem } from "../helpers/problems.ts";
import { connectMastodon } from "../posts/helpers.ts";
import { startMastodonFake, type MastodonFake } from "../fakes/mastodon.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { count, createEndpoint, endpointsPath, idem } from "./helpers.ts";

let s: TestServer;
let mastodon: MastodonFake;
let destinationId: string;
let ws: string;
const secretsSeen: string[] = [];

beforeAll(async () => {
  s = await startTestServer({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  setWebhookTransport(s.herald, {
    resolve: async (host) =>
      host === "hooks.example.com"
        ? ["93.184.216.34"]
        : Promise.reject(Object.assign(new Error("nx"), { code: "ENOTFOUND" })),
  });
  mastodon = await startMastodonFake();
  destinationId = await connectMastodon(s, mastodon);
  ws = s.owner.workspaceId;
});
afterAll(async () => {
  await s.stop();
  await mastodon.stop();
});

const base = () => ({
  name: "Production",
  url: "https://hooks.example.com/herald",
  event_types: ["post.published", "post.failed"],
});
const pathOf = (id: string) => `${endpointsPath(ws)}/${id}`;

async function create(extra: Record<string, unknown> = {}) {
  const r = await createEndpoint(s, { ...base(), ...extra });
  expect({ status: r.status, body: r.body }).toMatchObject({ status: 201 });
  secretsSeen.push(r.body.secret);
  return r.body;
}

describe("create", () => {
  test("returns the endpoint with its secret once, defaults filled in, an ETag", async () => {
    const r = await createEndpoint(s, base());
    expect(r.status).toBe(201);
    secretsSeen.push(r.body.secret);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^wh_[0-9a-z]{26}$/),
      object: "webhook_endpoint",
      name: "Production",
      url: "https://hooks.example.com/herald",
      enabled: true,
      event_types: ["post.published", "post.failed"],
      destination_filter_mode: "all",
      destination_ids: [],
      content_mode: "metadata",
      secret_last_four: r.body.secret.slice(-4),
      previous_secret_expires_at: null,
      config_version: 1,
      disabled_reason: null,
      created_at: "2026-03-01T12:00:00.000Z",
      updated_at: "2026-03-01T12:00:00.000Z",
      secret: expect.stringMatching(/^whsec_[0-9A-Za-z]{40}$/),
    });
    const etag = r.headers.get("etag");
    expect(etag).toMatch(/^"[^"]+"$/);
    // The ETag is the endpoint's as GET shows it (without the secret), so it works with If-Match.
    const got = await s.request("GET", pathOf(r.body.id));
    expect(got.headers.get("etag")).toBe(etag);
  });

  test("every secret is new", async () => {
    const a = await create();
    const b = await create();
    expect(a.secret).not.toBe(b.secret);
  });

  test("Idempotency-Key is required", async () => {
    const r = await s.request("POST", endpointsPath(ws), { body: base() });
    expectProblem(r, 400, "public_invalid_request");
    expect(r.body.errors[0].parameter).toBe("Idempotency-Key");
  });

  test("a replay answers the same endpoint and secret; the stored response holds the secret sealed only", async () => {
    const headers = idem();
    const first = await s.request("POST", endpointsPath(ws), { body: base(), headers });
    const again = await s.request("POST", endpointsPath(ws), { body: base(), headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    secretsSeen.push(first.body.secret);
    const [stored] = await engineOf(s.herald.db).query<{ response_body: string }>(
      "SELECT response_body FROM idempotency_keys WHERE key = ?",
      [headers["idempotency-key"]!],
    );
    expect(stored!.response_body).not.toContain(first.body.secret);
    expect(stored!.response_body).toContain("herald-sealed:");
    const other = await s.request("POST", endpointsPath(ws), { body: { ...base(), name: "Other" }, headers });
    expectProblem(other, 409, "public_idempotency_key_reused");
  });

  test("with selected destinations of the workspace", async () => {
    const e = await create({ destination_filter_mode: "selected", destination_ids: [destinationId] });
    expect(e).toMatchObject({ destination_filter_mode: "selected", destination_ids: [destinationId] });
  });

  test("created disabled", async () => {
    expect((await create({ enabled: false })).enabled).toBe(false);
  });

  const invalid: { name: string; body: (b: any) => any; pointer: string; detail?: string }[] = [
    { name: "empty name", body: (b) => ({ ...b, name: "" }), pointer: "/name" },
    { name: "name of 121 characters", body: (b) => ({ ...b, name: "n".repeat(121) }), pointer: "/name" },
    { name: "no url", body: (b) => ({ ...b, url: undefined }), pointer: "/url" },
    { name: "no event types", body: (b) => ({ ...b, event_types: [] }), pointer: "/event_types" },
    {
      name: "an unknown event type",
      body: (b) => ({ ...b, event_types: ["post.deleted"] }),
      pointer: "/event_types/0",
    },
    {
      name: "webhook.test is not subscribable",
      body: (b) => ({ ...b, event_types: ["webhook.test"] }),
      pointer: "/event_types/0",
    },
    {
      name: "a repeated event type",
      body: (b) => ({ ...b, event_types: ["post.failed", "post.failed"] }),
      pointer: "/event_types/1",
      detail: "repeats post.failed",
    },
    {
      name: "an unknown filter mode",
      body: (b) => ({ ...b, destination_filter_mode: "some" }),
      pointer: "/destination_filter_mode",
    },
    {
      name: "selected without destinations",
      body: (b) => ({ ...b, destination_filter_mode: "selected" }),
      pointer: "/destination_ids",
      detail: "at least one destination",
    },
    {
      name: "destinations with mode all",
      body: (b) => ({ ...b, destination_ids: [destinationId] }),
      pointer: "/destination_ids",
      detail: "only used when destination_filter_mode is selected",
    },
    {
      name: "a destination of no workspace",
      body: (b) => ({
        ...b,
        destination_filter_mode: "selected",
        destination_ids: [destinationId, "dest_nope"],
      }),
      pointer: "/destination_ids/1",
      detail: "dest_nope is not a destination of this workspace",
    },
    {
      name: "a repeated destination",
      body: (b) => ({
        ...b,
        destination_filter_mode: "selected",
        destination_ids: [destinationId, destinationId],
      }),
      pointer: "/destination_ids/1",
    },
    {
      name: "101 destination ids",
      body: (b) => ({
        ...b,
        destination_filter_mode: "selected",
        destination_ids: Array.from({ length: 101 }, (_, i) => `dest_${i}`),
      }),
      pointer: "/destination_ids",
    },
    {
      name: "an unknown content mode",
      body: (b) => ({ ...b, content_mode: "everything" }),
      pointer: "/content_mode",
    },
    { name: "an unknown property", body: (b) => ({ ...b, secret: "whsec_mine" }), pointer: "/secret" },
  ];
  for (const c of invalid) {
    test(`400: ${c.name}`, async () => {
      const r = await createEndpoint(s, c.body(base()));
      expectProblem(r, 400, "public_invalid_request", [c.pointer]);
      if (c.detail) expect(r.body.errors[0].detail).toContain(c.detail);
    });
  }

  test("a destination of another workspace is refused", async () => {
    const second = (await s.request("POST", "/v1/workspaces", { body: { name: "Second" } })).body
      .id as string;
    const r = await createEndpoint(
      s,
      { ...base(), destination_filter_mode: "selected", destination_ids: [destinationId] },
      { workspaceId: second },
    );
    expectProblem(r, 400, "public_invalid_request", ["/destination_ids/0"]);
  });

  test("content_mode full needs posts:read as well (403 without it)", async () => {
    const writer = await s.createKey({ scopes: ["webhooks:write"] });
    const refused = await createEndpoint(s, { ...base(), content_mode: "full" }, { key: writer });
    expectProblem(refused, 403, "public_scope_missing");
    expect(refused.body.detail).toContain("posts:read");
    const metadata = await createEndpoint(s, base(), { key: writer });
    expect(metadata.status).toBe(201);
    secretsSeen.push(metadata.body.secret);
    const both = await createEndpoint(
      s,
      { ...base(), content_mode: "full" },
      { key: await s.createKey({ scopes: ["webhooks:write", "posts:read"] }) },
    );
    expect(both.status).toBe(201);
    expect(both.body.content_mode).toBe("full");
    secretsSeen.push(both.body.secret);
  });

  test("is audited", async () => {
    const e = await create();
    expect(
      await count(s.herald, "audit_records", `action = 'webhook_endpoint.created' AND target_id = '${e.id}'`),
    ).toBe(1);
  });
});

describe("read", () => {
  test("get, and 404 for an unknown id or another workspace's endpoint", async () => {
    const e = await create();
    const got = await s.request("GET", pathOf(e.id));
    expect(got.status).toBe(200);
    const { secret, ...withoutSecret } = e;
    expect(got.body).toEqual(withoutSecret);
    expectProblem(await s.request("GET", pathOf("wh_unknown")), 404, "public_not_found");
    const second = (await s.request("POST", "/v1/workspaces", { body: { name: "Elsewhere" } })).body
      .id as string;
    expectProblem(await s.request("GET", `${endpointsPath(second)}/${e.id}`), 404, "public_not_found");
  });

  test("the listing pages newest first with a cursor and a Link header", async () => {
    const other = await s.bootstrap();
    const made = [];
    for (let i = 0; i < 3; i++) {
      const r = await createEndpoint(
        s,
        { ...base(), name: `Page ${i}` },
        { key: other.apiKey, workspaceId: other.workspaceId },
      );
      made.push(r.body.id);
    }
    const first = await s.request("GET", `${endpointsPath(other.workspaceId)}?limit=2`, {
      key: other.apiKey,
    });
    expect(first.status).toBe(200);
    expect(first.body.data.map((e: any) => e.id)).toEqual([made[2], made[1]]);
    expect(first.body.has_more).toBe(true);
    expect(first.headers.get("link")).toContain('rel="next"');
    const second = await s.request(
      "GET",
      `${endpointsPath(other.workspaceId)}?limit=2&after=${encodeURIComponent(first.body.next_cursor)}`,
      { key: other.apiKey },
    );
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.body.data.map((e: any) => e.id)).toEqual([made[0]]);
    expect(second.headers.get("link")).toBeNull();
    expectProblem(
      await s.request("GET", `${endpointsPath(other.workspaceId)}?limit=101`, { key: other.apiKey }),
      400,
      "public_invalid_request",
      ["/limit"],
    );
    expectProblem(
      await s.request("GET", `${endpointsPath(other.workspaceId)}?after=forged`, { key: other.apiKey }),
      400,
      "public_invalid_request",
      ["/after"],
    );
  });
});

describe("patch", () => {
  test("changes settings and bumps config_version; a no-op changes nothing", async () => {
    const e = await create();
    s.clock.advance(1000);
    const r = await s.request("PATCH", pathOf(e.id), {
      body: { name: "Renamed", event_types: ["post.needs-attention"], content_mode: "full" },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      name: "Renamed",
      event_types: ["post.needs-attention"],
      content_mode: "full",
      config_version: 2,
      created_at: e.created_at,
    });
    expect(r.body.updated_at).not.toBe(e.updated_at);
    expect(r.body).not.toHaveProperty("secret");
    const same = await s.request("PATCH", pathOf(e.id), { body: { name: "Renamed" } });
    expect(same.body.config_version).toBe(2);
    expect(
      await count(s.herald, "audit_records", `action = 'webhook_endpoint.updated' AND target_id = '${e.id}'`),
    ).toBe(1);
  });

  test("selects destinations, then back to all (the list is cleared)", async () => {
    const e = await create();
    const selected = await s.request("PATCH", pathOf(e.id), {
      body: { destination_filter_mode: "selected", destination_ids: [destinationId] },
    });
    expect(selected.body).toMatchObject({
      destination_filter_mode: "selected",
      destination_ids: [destinationId],
      config_version: 2,
    });
    const refused = await s.request("PATCH", pathOf(e.id), { body: { destination_ids: [] } });
    expectProblem(refused, 400, "public_invalid_request", ["/destination_ids"]);
    const all = await s.request("PATCH", pathOf(e.id), { body: { destination_filter_mode: "all" } });
    expect(all.body).toMatchObject({
      destination_filter_mode: "all",
      destination_ids: [],
      config_version: 3,
    });
  });

  test("If-Match is optional; a stale one is 412, the current one passes", async () => {
    const e = await create();
    const current = (await s.request("GET", pathOf(e.id))).headers.get("etag")!;
    const ok = await s.request("PATCH", pathOf(e.id), {
      body: { name: "With If-Match" },
      headers: { "if-match": current },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("etag")).not.toBe(current);
    expectProblem(
      await s.request("PATCH", pathOf(e.id), { body: { name: "Stale" }, headers: { "if-match": current } }),
      412,
      "public_precondition_failed",
    );
  });

  test("an empty body is 400; unknown properties are 400", async () => {
    const e = await create();
    expectProblem(await s.request("PATCH", pathOf(e.id), { body: {} }), 400, "public_invalid_request");
    expectProblem(
      await s.request("PATCH", pathOf(e.id), { body: { secret_last_four: "abcd" } }),
      400,
      "public_invalid_request",
      ["/secret_last_four"],
    );
  });

  test("content: a key without posts:read cannot turn full on, nor redirect a full endpoint, but may rename it", async () => {
    const e = await create({ content_mode: "full" });
    const writer = await s.createKey({ scopes: ["webhooks:write"] });
    const meta = await create();
    expectProblem(
      await s.request("PATCH", pathOf(meta.id), { key: writer, body: { content_mode: "full" } }),
      403,
      "public_scope_missing",
    );
    expectProblem(
      await s.request("PATCH", pathOf(e.id), {
        key: writer,
        body: { url: "https://hooks.example.com/elsewhere" },
      }),
      403,
      "public_scope_missing",
    );
    expect(
      (await s.request("PATCH", pathOf(e.id), { key: writer, body: { name: "Just a name" } })).status,
    ).toBe(200);
    expect((await s.request("PATCH", pathOf(e.id), { key: writer, body: { enabled: false } })).status).toBe(
      200,
    );
    expect(
      (await s.request("PATCH", pathOf(e.id), { key: writer, body: { content_mode: "metadata" } })).status,
    ).toBe(200);
  });
});

describe("delete", () => {
  test("removes the endpoint; it is gone from get and list", async () => {
    const e = await create();
    const r = await s.request("DELETE", pathOf(e.id));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: e.id, object: "webhook_endpoint", deleted: true });
    expectProblem(await s.request("GET", pathOf(e.id)), 404, "public_not_found");
    expectProblem(await s.request("DELETE", pathOf(e.id)), 404, "public_not_found");
    const list = await s.request("GET", `${endpointsPath(ws)}?limit=100`);
    expect(list.body.data.map((x: any) => x.id)).not.toContain(e.id);
    expect(
      await count(s.herald, "audit_records", `action = 'webhook_endpoint.deleted' AND target_id = '${e.id}'`),
    ).toBe(1);
  });
});

describe("rotate secret", () => {
  test("returns a new secret once; the previous one overlaps for 24 h by default", async () => {
    const e = await create();
    s.clock.advance(5000);
    const r = await s.request("POST", `${pathOf(e.id)}/rotate-secret`, { body: {} });
    expect(r.status).toBe(200);
    secretsSeen.push(r.body.secret);
    expect(r.body.secret).toMatch(/^whsec_/);
    expect(r.body.secret).not.toBe(e.secret);
    expect(r.body.secret_last_four).toBe(r.body.secret.slice(-4));
    expect(r.body.previous_secret_expires_at).toBe(new Date(s.clock.now() + 24 * 3600_000).toISOString());
    expect(r.body.config_version).toBe(2);
    const got = await s.request("GET", pathOf(e.id));
    expect(got.body).not.toHaveProperty("secret");
    expect(got.headers.get("etag")).toBe(r.headers.get("etag"));
    s.clock.advance(24 * 3600_000);
    expect((await s.request("GET", pathOf(e.id))).body.previous_secret_expires_at).toBeNull();
    expect(
      await count(
        s.herald,
        "audit_records",
        `action = 'webhook_endpoint.secret_rotated' AND target_id = '${e.id}'`,
      ),
    ).toBe(1);
  });

  test("a chosen overlap, and 0 to end the previous secret at once", async () => {
    const e = await create();
    const hour = await s.request("POST", `${pathOf(e.id)}/rotate-secret`, {
      body: { previous_secret_expires_in: 3600 },
    });
    expect(hour.body.previous_secret_expires_at).toBe(new Date(s.clock.now() + 3600_000).toISOString());
    const now = await s.request("POST", `${pathOf(e.id)}/rotate-secret`, {
      body: { previous_secret_expires_in: 0 },
    });
    expect(now.body.previous_secret_expires_at).toBeNull();
    secretsSeen.push(hour.body.secret, now.body.secret);
    expectProblem(
      await s.request("POST", `${pathOf(e.id)}/rotate-secret`, {
        body: { previous_secret_expires_in: 8 * 24 * 3600 },
      }),
      400,
      "public_invalid_request",
      ["/previous_secret_expires_in"],
    );
  });

  test("a replayed rotation answers the same secret", async () => {
    const e = await create();
    const headers = idem();
    const a = await s.request("POST", `${pathOf(e.id)}/rotate-secret`, { body: {}, headers });
    const b = await s.request("POST", `${pathOf(e.id)}/rotate-secret`, { body: {}, headers });
    expect(b.body.secret).toBe(a.body.secret);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    secretsSeen.push(a.body.secret);
  });
});

describe("secrets", () => {
  test("never appear in get or list responses", async () => {
    const list = await s.request("GET", `${endpointsPath(ws)}?limit=100`);
    expect(list.body.data.length).toBeGreaterThan(10);
    for (const e of list.body.data) {
      expect(e).not.toHaveProperty("secret");
      const got = await s.request("GET", pathOf(e.id));
      expect(got.body).not.toHaveProperty("secret");
      for (const secret of secretsSeen) expect(got.text).not.toContain(secret);
    }
    for (const secret of secretsSeen) expect(list.text).not.toContain(secret);
  });

  test("are not stored or logged in clear", () => {
    // The SQLite file and its WAL alike (a PostgreSQL data dir holds no database files).
    const files = readdirSync(s.dataDir).filter((f) => f.startsWith("herald.db"));
    expect(secretsSeen.length).toBeGreaterThan(10);
    for (const file of files) {
      const bytes = readFileSync(join(s.dataDir, file)).toString("latin1");
      for (const secret of secretsSeen) expect(bytes.includes(secret)).toBe(false);
    }
    for (const secret of secretsSeen) expect(s.logs.join("\n")).not.toContain(secret);
  });
});

describe("scopes", () => {
  test("reads need webhooks:read, writes webhooks:write", async () => {
    const e = await create();
    const reader = await s.createKey({ scopes: ["webhooks:read"] });
    expect((await s.request("GET", pathOf(e.id), { key: reader })).status).toBe(200);
    expectProblem(
      await s.request("PATCH", pathOf(e.id), { key: reader, body: { name: "x" } }),
      403,
      "public_scope_missing",
    );
    const everythingElse = await s.createKey({
      scopes: ALL_SCOPES.filter((x) => !x.startsWith("webhooks:")) as Scope[],
    });
    expectProblem(await s.request("GET", pathOf(e.id), { key: everythingElse }), 403, "public_scope_missing");
  });
});
