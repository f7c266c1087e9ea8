// Defects found in review, each pinned by a test: SSRF on provider calls (redirects, re-checks,
// pinning), unbounded provider answers, a slow regex, reschedule as a back door around retry's
// checks, impossible dates, JSON nesting, weak master keys, publish-drafts queue and group rules.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../src/config.ts";
import { BlockedAddressError, createGuardedFetch } from "../src/lib/guarded-fetch.ts";
import { isPrivateAddress } from "../src/lib/network-guard.ts";
import { systemClock } from "../src/lib/clock.ts";
import { MAX_PROVIDER_RESPONSE_BYTES, providerFetch } from "../src/providers/http.ts";
import { mastodonLength } from "../src/providers/mastodon/adapter.ts";
import { ProviderError } from "../src/providers/types.ts";
import { resolveSecretKey } from "../src/server.ts";
import { expectProblem } from "./helpers/problems.ts";
import { idem } from "./posts/helpers.ts";
import { publish, replaceBlueskyRecord, startEngineWorld, type EngineWorld } from "./posts/engine-helpers.ts";

/** A loopback server whose answers a test chooses; it records the Host header of each request. */
function startOrigin(handler: (request: Request) => Response | Promise<Response>) {
  const hosts: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (request) => {
      hosts.push(request.headers.get("host") ?? "");
      return handler(request);
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, port: server.port, hosts, stop: () => server.stop(true) };
}

const deps = { fetch, clock: systemClock, timeoutMs: 5_000 };

describe("provider calls", () => {
  test("a redirect is not followed: the call fails as rejected and the target is never reached", async () => {
    const target = startOrigin(() => new Response("internal"));
    const origin = startOrigin(
      () => new Response(null, { status: 307, headers: { location: `${target.url}/latest/meta-data` } }),
    );
    try {
      const error = await providerFetch({
        deps,
        operation: "POST /api/v1/statuses",
        url: `${origin.url}/api/v1/statuses`,
        init: { method: "POST" },
        idempotent: true,
      }).catch((e) => e);
      expect(error).toBeInstanceOf(ProviderError);
      expect(error.kind).toBe("rejected");
      expect(target.hosts).toHaveLength(0);
    } finally {
      await origin.stop();
      await target.stop();
    }
  });

  test(`an answer over ${MAX_PROVIDER_RESPONSE_BYTES} bytes is refused, not buffered`, async () => {
    const big = startOrigin(
      () =>
        new Response(
          new ReadableStream({
            pull(controller) {
              controller.enqueue(new Uint8Array(1024 * 1024));
            },
          }),
        ),
    );
    try {
      const error = await providerFetch({
        deps,
        operation: "GET big",
        url: `${big.url}/`,
        idempotent: true,
      }).catch((e) => e);
      expect(error).toBeInstanceOf(ProviderError);
      expect(error.kind).toBe("transient");
      expect(error.message).toContain("over");
    } finally {
      await big.stop();
    }
  });

  test("the guarded fetch refuses loopback without the test switch, re-resolves every call and pins the checked address", async () => {
    const origin = startOrigin(() => new Response("ok"));
    try {
      const strict = createGuardedFetch({ allowPrivateNetwork: false });
      expect(await strict(`${origin.url}/`).catch((e) => e)).toBeInstanceOf(BlockedAddressError);
      // A public-looking name that now resolves to loopback (DNS rebinding) is refused at call time.
      const rebound = createGuardedFetch({ allowPrivateNetwork: false, resolve: async () => ["127.0.0.1"] });
      expect(await rebound("https://social.example/api").catch((e) => e)).toBeInstanceOf(BlockedAddressError);
      // With the switch, the request goes to the checked address with the original Host header.
      let resolved = 0;
      const dev = createGuardedFetch({
        allowPrivateNetwork: true,
        resolve: async () => {
          resolved += 1;
          return ["127.0.0.1"];
        },
      });
      const response = await dev(`http://instance.localhost:${origin.port}/x`);
      expect(await response.text()).toBe("ok");
      expect(origin.hosts.at(-1)).toBe(`instance.localhost:${origin.port}`);
      await dev(`http://instance.localhost:${origin.port}/y`);
      expect(resolved).toBe(2);
    } finally {
      await origin.stop();
    }
  });

  test("6to4, Teredo and other special-purpose IPv6 ranges are private", () => {
    for (const ip of [
      "2002:7f00:1::",
      "2002:a9fe:a9fe::",
      "2001:0:4136:e378::1",
      "::ffff:0:a00:1",
      "100::1",
      "64:ff9b:1::a00:1",
    ]) {
      expect({ ip, private: isPrivateAddress(ip) }).toEqual({ ip, private: true });
    }
    expect(isPrivateAddress("2606:4700:4700::1111")).toBe(false);
  });

  test("Mastodon length counting is linear and still counts URLs as 23 characters", () => {
    expect(mastodonLength("see https://example.com/a/very/long/path.")).toBe(4 + 23 + 1);
    // The input that made the old lazy pattern quadratic (seconds for 50,000 characters): the URL is
    // 23, the trailing punctuation counts as itself.
    expect(mastodonLength("https://example.com" + "!".repeat(50_000))).toBe(23 + 50_000);
    expect(mastodonLength("http://" + ".".repeat(50_000) + "<")).toBe(23 + 50_000 + 1);
  });
});

describe("the API", () => {
  let w: EngineWorld;
  beforeAll(async () => {
    w = await startEngineWorld();
  });
  afterAll(async () => {
    await w.stop();
  });

  test("reschedule cannot resend an unknown-outcome post without acknowledging the risk, nor with a test key", async () => {
    w.bluesky.failNext(1, { status: 500, path: "createRecord" });
    const post = await publish(w, w.blueskyId, ["maybe sent"]);
    await w.s.server.engine.runUntilIdle();
    // The look-up a minute later finds a record Herald did not write under its key: it cannot tell.
    await replaceBlueskyRecord(w.bluesky, post.id, "edited by another app");
    w.s.clock.advance(61_000);
    await w.s.server.engine.runUntilIdle();
    const path = `/v1/workspaces/${w.ws}/posts/${post.id}/reschedule`;
    const body = { confirmed: true, scheduled_at: "2026-03-01T13:00:00Z" };
    expect((await w.s.request("GET", `/v1/workspaces/${w.ws}/posts/${post.id}`)).body).toMatchObject({
      state: "needs-attention",
      retry_safety: "unsafe",
    });
    expectProblem(
      await w.s.request("POST", path, { body, key: await w.s.createKey({ environment: "test" }) }),
      403,
      "public_live_credential_required",
    );
    expectProblem(await w.s.request("POST", path, { body }), 409, "public_conflict", [
      "/acknowledge_duplicate_risk",
    ]);
    const ok = await w.s.request("POST", path, { body: { ...body, acknowledge_duplicate_risk: true } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      state: "scheduled",
      retry_safety: "safe",
      scheduled_at: "2026-03-01T13:00:00.000Z",
    });
  });

  test("an impossible date is a 400, not a date in the next month", async () => {
    const r = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, {
      body: {
        when: "2027-02-30T09:00:00+00:00",
        confirmed: true,
        group: "feb",
        posts: [{ destination_id: w.destinationId, body: ["x"] }],
      },
      headers: idem(),
    });
    expectProblem(r, 400, "public_invalid_request", ["/when"]);
    expectProblem(
      await w.s.request("GET", `/v1/workspaces/${w.ws}/posts?created_after=2026-02-31T00:00:00Z`),
      400,
      "public_invalid_request",
    );
  });

  test("publishing drafts to the queue names each destination once, and all drafts share a group", async () => {
    await w.s.request("PUT", `/v1/workspaces/${w.ws}/queue`, {
      body: { windows: [{ weekday: 1, local_time: "09:00" }] },
    });
    const a = (
      await w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, {
        body: { when: "draft", group: "qa", posts: [{ channel: "mastodon", body: ["a"] }] },
      })
    ).body.posts[0];
    const b = (
      await w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, {
        body: { when: "draft", group: "qb", posts: [{ channel: "mastodon", body: ["b"] }] },
      })
    ).body.posts[0];
    const both = [
      { id: a.id, version: a.version, destination_id: w.destinationId },
      { id: b.id, version: b.version, destination_id: w.destinationId },
    ];
    expectProblem(
      await w.s.request("POST", `/v1/workspaces/${w.ws}/posts/publish`, {
        body: { confirmed: true, when: "queue", posts: both },
        headers: idem(),
      }),
      400,
      "public_invalid_request",
      ["/posts"],
    );
    expectProblem(
      await w.s.request("POST", `/v1/workspaces/${w.ws}/posts/publish`, {
        body: { confirmed: true, when: "2026-03-02T10:00:00Z", posts: both },
        headers: idem(),
      }),
      400,
      "public_invalid_request",
      ["/posts/1/id"],
    );
  });

  test("deeply nested JSON is a 400, not a crash", async () => {
    const r = await w.s.request("POST", "/v1/workspaces", {
      body: "[".repeat(100_000) + "]".repeat(100_000),
    });
    expectProblem(r, 400, "public_invalid_request", [""]);
    const fine = await w.s.request("POST", "/v1/workspaces", { body: { name: "nested ok" } });
    expect(fine.status).toBe(201);
  });

  test("an unknown query parameter is a 400 naming it, on routes without parameters too", async () => {
    const r = await w.s.request("GET", `/v1/workspaces/${w.ws}?fields=name`);
    expectProblem(r, 400, "public_invalid_request", ["/fields"]);
    expect(r.body.errors[0].parameter).toBe("fields");
  });
});

describe("the master key", () => {
  test("a secret.key shorter than 32 characters stops start-up; a new one is created whole", () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-key-"));
    const config = loadConfig({ HERALD_DATA_DIR: dir });
    const created = resolveSecretKey(config);
    expect(created.length).toBeGreaterThanOrEqual(32);
    expect(resolveSecretKey(config)).toBe(created);
    writeFileSync(join(dir, "secret.key"), "\n");
    expect(() => resolveSecretKey(config)).toThrow(ConfigError);
  });
});

describe("a workspace the key cannot use", () => {
  test("is 404 even when the body is invalid (validation says nothing about it)", async () => {
    const w = await startEngineWorld();
    try {
      const other = await w.s.bootstrap();
      const r = await w.s.request("POST", `/v1/workspaces/${other.workspaceId}/posts`, {
        body: { nonsense: true },
        headers: idem(),
      });
      expectProblem(r, 404, "public_not_found");
      const selected = await w.s.createKey({ workspaceIds: [w.ws] });
      const second = (await w.s.request("POST", "/v1/workspaces", { body: { name: "second" } })).body.id;
      expectProblem(
        await w.s.request("PUT", `/v1/workspaces/${second}/queue`, {
          key: selected,
          body: { windows: "bad" },
        }),
        404,
        "public_not_found",
      );
      expectProblem(
        await w.s.request("PUT", `/v1/workspaces/${w.ws}/queue`, { key: selected, body: { windows: "bad" } }),
        400,
        "public_invalid_request",
        ["/windows"],
      );
    } finally {
      await w.stop();
    }
  });
});
