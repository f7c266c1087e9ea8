import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type Server } from "node:net";
import { systemClock } from "../../src/lib/clock.ts";
import { providerFetch } from "../../src/providers/http.ts";
import { ProviderError, type FailureKind } from "../../src/providers/types.ts";
import { startCutProxy } from "../fakes/shared.ts";
import { closedOrigin, expectProviderError } from "./support.ts";

const deps = { fetch, clock: systemClock, timeoutMs: 150 };
let origin: string;
let server: ReturnType<typeof Bun.serve>;
let resetter: Server;
let resetOrigin: string;

beforeAll(async () => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch: (request) => {
      const status = Number(new URL(request.url).searchParams.get("status") ?? 200);
      if (status === 0) return new Promise<Response>(() => {}); // never answers
      return Response.json(
        { error: "Oops", message: "went wrong" },
        { status, headers: { "ratelimit-reset": "1900000000", "x-request-id": "req_1" } },
      );
    },
  });
  origin = `http://127.0.0.1:${server.port}`;
  // Reads the request, then cuts the connection: the request was sent, the answer never comes.
  resetter = createServer((socket) => socket.once("data", () => socket.destroy())).listen(0, "127.0.0.1");
  await new Promise((resolve) => resetter.once("listening", resolve));
  resetOrigin = `http://127.0.0.1:${(resetter.address() as { port: number }).port}`;
});
afterAll(async () => {
  await server.stop(true);
  resetter.close();
});

const call = (url: string, idempotent: boolean) =>
  providerFetch({
    deps,
    operation: "create",
    url,
    init: { method: "POST", body: "{}" },
    idempotent,
    retryAt: (h) => Number(h.get("ratelimit-reset")) * 1000,
  });

describe("providerFetch classifies failures the same way for every adapter", () => {
  const statusCases: { status: number; idempotent: boolean; kind: FailureKind }[] = [
    { status: 500, idempotent: false, kind: "outcome_unknown" },
    { status: 504, idempotent: false, kind: "outcome_unknown" },
    { status: 502, idempotent: false, kind: "transient" },
    { status: 503, idempotent: false, kind: "transient" },
    { status: 500, idempotent: true, kind: "transient" },
    { status: 504, idempotent: true, kind: "transient" },
    { status: 429, idempotent: false, kind: "transient" },
  ];
  for (const c of statusCases) {
    test(`${c.status} on ${c.idempotent ? "an idempotent" : "a non-idempotent"} call is ${c.kind}`, async () => {
      const error = await expectProviderError(call(`${origin}/?status=${c.status}`, c.idempotent), c.kind);
      expect([error.statusCode, error.errorCode, error.requestId]).toEqual([c.status, "Oops", "req_1"]);
      expect(error.retryAt).toBe(c.status === 429 ? 1_900_000_000_000 : null);
    });
  }

  test("4xx and 2xx come back as buffered responses for the adapter to map", async () => {
    for (const status of [200, 400, 401, 404, 422]) {
      const response = await call(`${origin}/?status=${status}`, false);
      expect(response.status).toBe(status);
      expect(await response.json()).toEqual({ error: "Oops", message: "went wrong" });
    }
  });

  test("a 3xx is a refused redirect unless the adapter names it an answer (YouTube's 308)", async () => {
    for (const status of [301, 302, 307, 308]) {
      const error = await expectProviderError(call(`${origin}/?status=${status}`, true), "rejected");
      expect(error.message).toContain(`redirect (${status})`);
    }
    const answered = await providerFetch({
      deps,
      operation: "resume",
      url: `${origin}/?status=308`,
      idempotent: true,
      answerStatuses: [308],
    });
    expect(answered.status).toBe(308);
    expect(await answered.json()).toEqual({ error: "Oops", message: "went wrong" });
  });

  test("a 429 is the adapter's own error when it reads its network's shape", async () => {
    const error = await expectProviderError(
      providerFetch({
        deps,
        operation: "create",
        url: `${origin}/?status=429`,
        idempotent: false,
        limitError: async (response) =>
          new ProviderError("transient", `own: ${((await response.json()) as { message: string }).message}`, {
            operation: "create",
            statusCode: response.status,
            errorCode: "own-code",
            retryAt: 42,
          }),
      }),
      "transient",
    );
    expect([error.message, error.errorCode, error.retryAt]).toEqual(["own: went wrong", "own-code", 42]);
  });

  test("connection refused is transient even for a create: nothing was sent", async () => {
    const error = await expectProviderError(call(`${await closedOrigin()}/`, false), "transient");
    expect(error.errorCode).toBe("ECONNREFUSED");
  });

  test("a timeout after sending is outcome_unknown, or transient when the call is idempotent", async () => {
    await expectProviderError(call(`${origin}/?status=0`, false), "outcome_unknown");
    await expectProviderError(call(`${origin}/?status=0`, true), "transient");
  });

  test("a connection reset after sending is outcome_unknown, or transient when idempotent", async () => {
    await expectProviderError(call(`${resetOrigin}/`, false), "outcome_unknown");
    await expectProviderError(call(`${resetOrigin}/`, true), "transient");
  });
});

describe("freshConnection: an upload body the runtime cannot send again behind the adapter's back", () => {
  const upload = (url: string, freshConnection: boolean) =>
    providerFetch({
      deps,
      operation: "PUT chunk",
      url,
      init: { method: "PUT", body: new Uint8Array(300_000) },
      idempotent: true,
      freshConnection,
    });

  test.each([
    [false, "is sent again whole by Bun's fetch on another connection (what uploads must avoid)"],
    [true, "reaches the caller as a transient ECONNRESET, on a connection of its own"],
  ] as const)("a PUT cut mid-body on a kept-alive connection, freshConnection %p, %s", async (fresh) => {
    const proxy = await startCutProxy(origin);
    try {
      // A first call leaves a kept-alive connection in the pool for the PUT to reuse.
      await providerFetch({ deps, operation: "read", url: `${proxy.origin}/?status=200`, idempotent: true });
      const cuts: number[] = [];
      proxy.cutNext({
        match: ({ method }) => method === "PUT",
        keepBytes: 100_000,
        onCut: (cut) => cuts.push(cut.received.length),
      });
      if (fresh) {
        const error = await expectProviderError(upload(`${proxy.origin}/?status=200`, true), "transient");
        expect(error.errorCode).toBe("ECONNRESET");
      } else {
        expect((await upload(`${proxy.origin}/?status=200`, false)).status).toBe(200);
      }
      expect(cuts).toEqual([100_000]);
    } finally {
      await proxy.stop();
    }
  });
});
