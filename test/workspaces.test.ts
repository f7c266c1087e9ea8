import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { checkIfMatch } from "../src/core/etag.ts";
import { ProblemError } from "../src/core/problem.ts";
import { expectProblem } from "./helpers/problems.ts";
import { startTestServer, type TestResponse, type TestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

const create = (body: unknown, key?: string) => s.request("POST", "/v1/workspaces", { body, key });
const get = (id: string, key?: string) => s.request("GET", `/v1/workspaces/${id}`, { key });
const patch = (id: string, body: unknown, headers: Record<string, string> = {}) =>
  s.request("PATCH", `/v1/workspaces/${id}`, { body, headers });
const listIds = async (key?: string) =>
  ((await s.request("GET", "/v1/workspaces?limit=100", { key })).body.data as { id: string }[]).map(
    (w) => w.id,
  );

function expectWorkspace(r: TestResponse, status: number, fields: Record<string, unknown> = {}): void {
  expect({ status: r.status, text: r.text }).toMatchObject({ status });
  expect(r.headers.get("content-type")).toStartWith("application/json");
  expect(r.headers.get("etag")).toMatch(/^"[^"]+"$/);
  expect(r.body).toEqual({
    id: expect.stringMatching(/^ws_[0-9a-z]{26}$/),
    object: "workspace",
    name: expect.any(String),
    time_zone: expect.any(String),
    approval_required: expect.any(Boolean),
    link_tracking: expect.objectContaining({ enabled: expect.any(Boolean) }),
    created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
  });
  expect(r.body).toMatchObject(fields);
}

describe("create", () => {
  test("201 with an ETag, time zone UTC by default, timestamps from the clock", async () => {
    const r = await create({ name: "Launch" });
    const now = new Date(s.clock.now()).toISOString();
    expectWorkspace(r, 201, { name: "Launch", time_zone: "UTC", created_at: now, updated_at: now });
  });

  for (const zone of [
    "Europe/Berlin",
    "America/Argentina/Buenos_Aires",
    "Asia/Kolkata",
    "UTC",
    "Etc/GMT+5",
  ]) {
    test(`the IANA zone ${zone} is accepted`, async () => {
      expectWorkspace(await create({ name: "Zoned", time_zone: zone }), 201, { time_zone: zone });
    });
  }

  for (const [sent, stored] of [
    ["europe/berlin", "Europe/Berlin"],
    ["utc", "UTC"],
    ["america/argentina/buenos_aires", "America/Argentina/Buenos_Aires"],
  ]) {
    test(`${sent} is stored as IANA spells it: ${stored}`, async () => {
      const created = await create({ name: "Cased", time_zone: sent });
      expectWorkspace(created, 201, { time_zone: stored });
      const patched = await patch(created.body.id, { time_zone: sent.toUpperCase() });
      expectWorkspace(patched, 200, { time_zone: stored });
    });
  }

  for (const zone of ["Mars/Base", "+05:00", "UTC+5", "Europe/", "europe berlin", ""]) {
    test(`${JSON.stringify(zone)} is refused with pointer /time_zone`, async () => {
      const before = (await listIds()).length;
      expectProblem(await create({ name: "Zoned", time_zone: zone }), 400, "public_invalid_request", [
        "/time_zone",
      ]);
      expect((await listIds()).length).toBe(before);
    });
  }

  test("a key without workspaces:write cannot create", async () => {
    expectProblem(
      await create({ name: "Nope" }, await s.createKey({ scopes: ["workspaces:read"] })),
      403,
      "public_scope_missing",
    );
  });
});

describe("get", () => {
  test("returns what create returned, with the same ETag", async () => {
    const created = await create({ name: "Fetched", time_zone: "Asia/Tokyo" });
    const r = await get(created.body.id);
    expectWorkspace(r, 200);
    expect(r.body).toEqual(created.body);
    expect(r.headers.get("etag")).toBe(created.headers.get("etag"));
  });

  const missing: { name: string; id: () => Promise<string> }[] = [
    { name: "an unknown id", id: async () => "ws_00000000000000000000000000" },
    { name: "another account's workspace", id: async () => (await s.bootstrap()).workspaceId },
  ];
  for (const c of missing) {
    test(`${c.name} is 404`, async () => {
      expectProblem(await get(await c.id()), 404, "public_not_found");
    });
  }
});

describe("list and selected-access keys", () => {
  test("an all-access key lists every workspace of its account and nothing else", async () => {
    const mine = await create({ name: "Listed" });
    const foreign = await s.bootstrap();
    const ids = await listIds();
    expect(ids).toContain(mine.body.id);
    expect(ids).toContain(s.owner.workspaceId);
    expect(ids).not.toContain(foreign.workspaceId);
  });

  test("a selected-access key lists only its selected workspaces", async () => {
    const a = (await create({ name: "Selected A" })).body.id;
    const b = (await create({ name: "Selected B" })).body.id;
    await create({ name: "Not selected" });
    const key = await s.createKey({ workspaceIds: [a, b] });
    expect((await listIds(key)).sort()).toEqual([a, b].sort());
    expect((await get(a, key)).status).toBe(200);
    expectProblem(await get(s.owner.workspaceId, key), 404, "public_not_found");
  });

  test("a selected-access key that creates a workspace gains access to it", async () => {
    const a = (await create({ name: "Start" })).body.id;
    const key = await s.createKey({ workspaceIds: [a] });
    const made = await create({ name: "Made by selected key" }, key);
    expect(made.status).toBe(201);
    expect((await listIds(key)).sort()).toEqual([a, made.body.id].sort());
    expect((await get(made.body.id, key)).status).toBe(200);
  });
});

describe("patch", () => {
  const edits = [
    { name: "name", body: { name: "Renamed" } },
    { name: "time_zone", body: { time_zone: "America/New_York" } },
    { name: "both", body: { name: "Both", time_zone: "Australia/Sydney" } },
    { name: "approval_required", body: { approval_required: true } },
  ];
  for (const e of edits) {
    test(`changing ${e.name}: 200, new ETag, updated_at moves with the clock`, async () => {
      const created = await create({ name: "Before" });
      s.clock.advance(5_000);
      const r = await patch(created.body.id, e.body);
      expectWorkspace(r, 200, {
        ...e.body,
        created_at: created.body.created_at,
        updated_at: new Date(s.clock.now()).toISOString(),
      });
      expect(r.body.updated_at).not.toBe(created.body.updated_at);
      expect(r.headers.get("etag")).not.toBe(created.headers.get("etag"));
      const fetched = await get(created.body.id);
      expect(fetched.body).toEqual(r.body);
      expect(fetched.headers.get("etag")).toBe(r.headers.get("etag"));
    });
  }

  test("a patch that changes nothing keeps updated_at and the ETag", async () => {
    const created = await create({ name: "Same" });
    s.clock.advance(5_000);
    const r = await patch(created.body.id, { name: "Same" });
    expect(r.status).toBe(200);
    expect(r.body).toEqual(created.body);
    expect(r.headers.get("etag")).toBe(created.headers.get("etag"));
  });

  describe("If-Match", () => {
    const cases: { name: string; ifMatch: (current: string, stale: string) => string; status: number }[] = [
      { name: "the current ETag", ifMatch: (current) => current, status: 200 },
      { name: "*", ifMatch: () => "*", status: 200 },
      {
        name: "a list holding the current ETag",
        ifMatch: (current, stale) => `${stale}, ${current}`,
        status: 200,
      },
      { name: "a stale ETag", ifMatch: (_, stale) => stale, status: 412 },
      { name: "the current ETag marked weak", ifMatch: (current) => `W/${current}`, status: 412 },
      { name: "an unquoted garbage value", ifMatch: () => "nonsense", status: 400 },
    ];
    for (const c of cases) {
      test(`${c.name} → ${c.status}`, async () => {
        const created = await create({ name: "Guarded" });
        const stale = created.headers.get("etag")!;
        const current = (await patch(created.body.id, { name: "Guarded 2" })).headers.get("etag")!;
        const r = await patch(
          created.body.id,
          { name: "Guarded 3" },
          { "if-match": c.ifMatch(current, stale) },
        );
        if (c.status === 200) {
          expectWorkspace(r, 200, { name: "Guarded 3" });
        } else if (c.status === 400) {
          // Not an entity-tag list at all: the header is wrong, not the resource's state.
          expectProblem(r, 400, "public_invalid_request", [""]);
          expect(r.body.errors[0].parameter).toBe("If-Match");
          expect((await get(created.body.id)).body.name).toBe("Guarded 2");
        } else {
          expectProblem(r, 412, "public_precondition_failed");
          expect(r.body.user_action).toBe("inspect_resource");
          expect((await get(created.body.id)).body.name).toBe("Guarded 2");
        }
      });
    }
  });

  const invalidBodies = [
    { name: "an empty object", body: {}, pointers: [""] },
    { name: "an unknown field", body: { colour: "red" }, pointers: ["/colour"] },
    { name: "an empty name", body: { name: "" }, pointers: ["/name"] },
    { name: "an offset as time zone", body: { time_zone: "+05:00" }, pointers: ["/time_zone"] },
    { name: "a made-up time zone", body: { time_zone: "Mars/Base" }, pointers: ["/time_zone"] },
  ];
  for (const c of invalidBodies) {
    test(`${c.name} is 400`, async () => {
      const created = await create({ name: "Untouched" });
      expectProblem(await patch(created.body.id, c.body), 400, "public_invalid_request", c.pointers);
      expect((await get(created.body.id)).body).toEqual(created.body);
    });
  }

  test("another account's workspace is 404 and stays unchanged", async () => {
    const foreign = await s.bootstrap();
    expectProblem(await patch(foreign.workspaceId, { name: "Hijacked" }), 404, "public_not_found");
    expect((await get(foreign.workspaceId, foreign.apiKey)).body.name).toBe("Test workspace");
  });
});

describe("checkIfMatch", () => {
  const problemOf = (fn: () => void): ProblemError | null => {
    try {
      fn();
      return null;
    } catch (error) {
      return error as ProblemError;
    }
  };
  const cases: { name: string; ifMatch: string | null; required: boolean; code: string | null }[] = [
    { name: "absent when required", ifMatch: null, required: true, code: "public_precondition_required" },
    { name: "blank when required", ifMatch: "  ", required: true, code: "public_precondition_required" },
    { name: "absent when optional", ifMatch: null, required: false, code: null },
    { name: "matching", ifMatch: '"abc"', required: true, code: null },
    { name: "* when required", ifMatch: "*", required: true, code: null },
    { name: "not matching", ifMatch: '"xyz"', required: false, code: "public_precondition_failed" },
  ];
  for (const c of cases) {
    test(`${c.name} → ${c.code ?? "passes"}`, () => {
      const problem = problemOf(() => checkIfMatch(c.ifMatch, '"abc"', c.required));
      if (c.code === null) {
        expect(problem).toBeNull();
      } else {
        expect(problem).toBeInstanceOf(ProblemError);
        expect(problem!.code).toBe(c.code as ProblemError["code"]);
        expect(problem!.status).toBe(c.code === "public_precondition_required" ? 428 : 412);
      }
    });
  }
});

describe("workspace names must say something", () => {
  test("a name of spaces only is a 400 on /name; a name with spaces around a word is kept as given", async () => {
    const t = await startTestServer();
    try {
      const blank = await t.request("POST", "/v1/workspaces", { body: { name: "   " } });
      expectProblem(blank, 400, "public_invalid_request", ["/name"]);
      const spaced = await t.request("POST", "/v1/workspaces", { body: { name: " Team A " } });
      expect(spaced.status).toBe(201);
      expect(spaced.body.name).toBe(" Team A ");
    } finally {
      await t.stop();
    }
  });
});
