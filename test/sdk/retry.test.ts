// The retry rules of @herald/client on a scripted transport (what a real server cannot be made to do on
// demand: drop a connection). Server-backed retries are in client.test.ts.
import { describe, expect, test } from "bun:test";
import { retryAfterMs } from "../../sdk/src/index.ts";
import { retryingFetch } from "../../sdk/src/retry.ts";

/** A transport that fails with a network error `failures` times, then answers 201; it records what it got. */
function flakyTransport(failures: number) {
  const sent: Request[] = [];
  const send = async (request: Request) => {
    sent.push(request);
    if (sent.length <= failures) throw new TypeError("fetch failed: connection reset");
    return new Response(await request.text(), { status: 201 });
  };
  return { sent, send };
}

const waits: number[] = [];
const options = { sleep: async (ms: number) => void waits.push(ms), maxRetries: 2 };

describe("network errors", () => {
  test("a read is retried with backoff", async () => {
    waits.length = 0;
    const t = flakyTransport(2);
    const response = await retryingFetch(t.send, options)(new Request("http://h/v1/workspaces"));
    expect(response.status).toBe(201);
    expect(t.sent).toHaveLength(3);
    expect(waits).toEqual([500, 1000]);
  });

  test("a write with an Idempotency-Key is retried with the same key and body", async () => {
    const t = flakyTransport(1);
    const request = new Request("http://h/v1/workspaces/ws_1/posts", {
      method: "POST",
      headers: { "idempotency-key": "k-1", "content-type": "application/json" },
      body: '{"when":"draft"}',
    });
    const response = await retryingFetch(t.send, options)(request);
    expect(await response.text()).toBe('{"when":"draft"}');
    expect(t.sent.map((r) => r.headers.get("idempotency-key"))).toEqual(["k-1", "k-1"]);
  });

  test("a write without an Idempotency-Key or If-Match is not retried", async () => {
    const t = flakyTransport(1);
    const request = new Request("http://h/v1/workspaces/ws_1/posts/send_1/approve", {
      method: "POST",
      body: "{}",
    });
    await expect(retryingFetch(t.send, options)(request)).rejects.toThrow("connection reset");
    expect(t.sent).toHaveLength(1);
  });

  test("a 503 of a write without a key is its answer; a 429 is retried (refused before any work)", async () => {
    const statuses = [503, 201];
    const send = async () => new Response(null, { status: statuses.shift()! });
    const write = () => new Request("http://h/v1/x", { method: "POST", body: "{}" });
    expect((await retryingFetch(send, options)(write())).status).toBe(503);
    statuses.splice(0, statuses.length, 429, 201);
    expect((await retryingFetch(send, options)(write())).status).toBe(201);
  });
});

test("Retry-After is read as seconds or as an HTTP date", () => {
  const now = Date.parse("2026-03-01T12:00:00Z");
  expect(retryAfterMs("5", now)).toBe(5000);
  expect(retryAfterMs("Sun, 01 Mar 2026 12:00:09 GMT", now)).toBe(9000);
  expect(retryAfterMs("Sun, 01 Mar 2026 11:00:00 GMT", now)).toBe(0);
  expect(retryAfterMs("soon", now)).toBeNull();
  expect(retryAfterMs(null, now)).toBeNull();
});
