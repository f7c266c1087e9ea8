import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectProblem } from "./helpers/problems.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

describe("validation problems point at each offending field", () => {
  const cases: { name: string; body: unknown; pointers: string[] }[] = [
    { name: "unknown property", body: { name: "ok", colour: "red" }, pointers: ["/colour"] },
    { name: "wrong type", body: { name: 5 }, pointers: ["/name"] },
    { name: "too short", body: { name: "" }, pointers: ["/name"] },
    { name: "too long", body: { name: "x".repeat(201) }, pointers: ["/name"] },
    { name: "missing required", body: {}, pointers: ["/name"] },
    {
      name: "several problems at once",
      body: { name: 1, time_zone: 2, extra: true },
      pointers: ["/name", "/time_zone", "/extra"],
    },
    { name: "not an object", body: [1, 2], pointers: [""] },
    { name: "IANA zone checked", body: { name: "ok", time_zone: "+05:00" }, pointers: ["/time_zone"] },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await s.request("POST", "/v1/workspaces", { body: c.body });
      expectProblem(r, 400, "public_invalid_request", c.pointers);
      expect(r.body.category).toBe("validation");
      expect(r.body.user_action).toBe("check_request");
      expect(r.body.retryable).toBe(false);
      expect(r.body.retry).toEqual({ safety: "not_retryable", after: null });
      for (const e of r.body.errors) expect(e.code).toBe("custom");
    });
  }

  test("malformed JSON is a 400 pointing at the whole body", async () => {
    const r = await s.request("POST", "/v1/workspaces", { body: '{"name": "x",' });
    expectProblem(r, 400, "public_invalid_request", [""]);
  });

  test("a 200-character name is accepted at the boundary", async () => {
    const r = await s.request("POST", "/v1/workspaces", { body: { name: "x".repeat(200) } });
    expect(r.status).toBe(201);
  });
});

describe("body limit of 1 MiB", () => {
  // A JSON string body of exactly `size` bytes: {"name":"xxxx…"} padded with spaces.
  const bodyOfSize = (size: number) => {
    const base = JSON.stringify({ name: "padded" });
    return base + " ".repeat(size - base.length);
  };

  test("exactly 1 MiB is read (and then validated)", async () => {
    const r = await s.request("POST", "/v1/workspaces", { body: bodyOfSize(1_048_576) });
    expect(r.status).toBe(201);
  });

  test("1 MiB + 1 with Content-Length is 413 in the contract's shape", async () => {
    const r = await s.request("POST", "/v1/workspaces", { body: bodyOfSize(1_048_577) });
    expectProblem(r, 413, "public_payload_too_large");
    expect(r.body.retryable).toBe(false);
  });

  test("a chunked body over 1 MiB is 413 too", async () => {
    const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"x"}'));
        if (sent > 1_100_000) return controller.close();
        controller.enqueue(chunk);
        sent += chunk.length;
      },
    });
    const response = await fetch(`${s.url}/v1/workspaces`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${s.owner.apiKey}`,
        "content-type": "application/json",
        "transfer-encoding": "chunked",
      },
      body: stream,
      duplex: "half",
    });
    const text = await response.text();
    expectProblem(
      { status: response.status, headers: response.headers, text, body: JSON.parse(text) },
      413,
      "public_payload_too_large",
    );
  });
});

describe("Service-Request-Id", () => {
  const cases = [
    { name: "128 characters are echoed", sent: "a".repeat(128), echoed: true },
    { name: "129 characters are replaced", sent: "a".repeat(129), echoed: false },
    { name: "a short id is echoed", sent: "trace-123", echoed: true },
    { name: "spaces are not a valid id", sent: "has space", echoed: false },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      for (const key of [undefined, null]) {
        // Both a success and an error (401 without a key) carry the header.
        const r = await s.request("GET", "/v1/account", { key, headers: { "service-request-id": c.sent } });
        const id = r.headers.get("service-request-id")!;
        if (c.echoed) expect(id).toBe(c.sent);
        else expect(id).toMatch(/^req_[0-9a-z]{26}$/);
        if (r.status !== 200) expect(r.body.request_id).toBe(id);
      }
    });
  }

  test("generated when absent, different for each request", async () => {
    const a = await s.request("GET", "/health");
    const b = await s.request("GET", "/v1/nope");
    expect(a.headers.get("service-request-id")).toMatch(/^req_/);
    expect(b.headers.get("service-request-id")).toMatch(/^req_/);
    expect(a.headers.get("service-request-id")).not.toBe(b.headers.get("service-request-id"));
  });
});

describe("unknown routes and crashes", () => {
  test("an unknown route is a problem 404", async () => {
    // (DELETE /v1/account was here: a known path with another method is now 405, see rails-edges.)
    const routes = [
      ["GET", "/v1/nothing-here"],
      ["DELETE", "/v1/nothing-here"],
      ["GET", "/nowhere"],
    ];
    for (const [method, path] of routes) {
      const r = await s.request(method, path);
      expectProblem(r, 404, "public_not_found");
    }
  });

  test("a crash is a problem 500 that leaks nothing and is logged with the request id", async () => {
    const t = await startTestServer();
    try {
      // A bug under a request (here the clock throwing) is a real internal failure. (A database that
      // cannot be reached, or a full disk, is a 503 instead: test/faults.)
      t.herald.clock = {
        now: () => {
          throw new TypeError("the clock broke");
        },
      };
      const r = await t.request("GET", "/v1/workspaces", { headers: { "service-request-id": "crash-1" } });
      expectProblem(r, 500, "public_internal_error");
      expect(r.body.retryable).toBe(true);
      expect(r.text).not.toMatch(/sqlite|Database|at .*\.ts/i);
      const logged = t.logs.map((l) => JSON.parse(l)).find((l) => l.message === "unhandled error");
      // Herald's own id, and the caller's apart (the answer echoes the caller's).
      expect(logged.request_id).toMatch(/^req_/);
      expect(logged.client_request_id).toBe("crash-1");
      // The route pattern, never the path (hosted pages carry one-time tokens in theirs).
      expect(logged).toMatchObject({ route: "/v1/workspaces", method: "GET" });
      expect(logged.path).toBeUndefined();
      expect(JSON.stringify(logged)).not.toContain(t.owner.apiKey);
    } finally {
      await t.server.stop().catch(() => {});
    }
  });
});

describe("rate limit per credential", () => {
  test("over the limit is 429 with Retry-After, and other keys are unaffected", async () => {
    const t = await startTestServer({ env: { HERALD_RATE_LIMIT_PER_MINUTE: "3" } });
    try {
      for (let i = 0; i < 3; i++) expect((await t.request("GET", "/v1/account")).status).toBe(200);
      const r = await t.request("GET", "/v1/account");
      expectProblem(r, 429, "public_rate_limited");
      const retryAfter = Number(r.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(r.body.retry.after).toBe(retryAfter);
      expect(r.body.retryable).toBe(true);
      const other = await t.createKey({});
      expect((await t.request("GET", "/v1/account", { key: other })).status).toBe(200);
      t.clock.advance(60_000);
      expect((await t.request("GET", "/v1/account")).status).toBe(200);
    } finally {
      await t.stop();
    }
  });
});
