// @herald/client against a real Herald (a real server over a real database, real HTTP): typed calls,
// one Idempotency-Key per write reused across its retries, Retry-After honoured, nothing else retried,
// and paginate() over several pages. A small proxy in front of the server answers chosen attempts
// with 503 or 429, as a load balancer or the rate limiter would.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHeraldClient, type HeraldClient, paginate } from "../../sdk/src/index.ts";
import { startPostsWorld, type PostsWorld } from "../posts/helpers.ts";

/** What the proxy does with one request: pass it on, or answer it (after passing it on, or not). */
type Decision =
  | { kind: "forward" }
  | { kind: "answer"; status: number; headers: Record<string, string>; forwardFirst: boolean };

interface SeenRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  status: number;
}

interface Proxy {
  origin: string;
  seen: SeenRequest[];
  /** Decides each request in turn (default: forward). */
  decide: (request: Request) => Decision;
  stop(): Promise<void>;
}

function startProxy(target: string): Proxy {
  const proxy: Proxy = {
    origin: "",
    seen: [],
    decide: () => ({ kind: "forward" }),
    stop: async () => {
      await server.stop(true);
    },
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request) => {
      const url = new URL(request.url);
      const decision = proxy.decide(request);
      const body = request.method === "GET" ? undefined : await request.arrayBuffer();
      const forward = () =>
        fetch(target + url.pathname + url.search, { method: request.method, headers: request.headers, body });
      const record = (status: number) =>
        proxy.seen.push({
          method: request.method,
          path: url.pathname,
          idempotencyKey: request.headers.get("idempotency-key"),
          status,
        });
      if (decision.kind === "forward") {
        const response = await forward();
        record(response.status);
        return new Response(await response.arrayBuffer(), {
          status: response.status,
          headers: response.headers,
        });
      }
      // The server did the work but its answer was lost on the way back (when forwardFirst).
      if (decision.forwardFirst) await (await forward()).arrayBuffer();
      record(decision.status);
      return Response.json(
        {
          type: "about:blank",
          title: "Unavailable",
          status: decision.status,
          detail: "try again",
          code: "proxy",
        },
        {
          status: decision.status,
          headers: { "content-type": "application/problem+json", ...decision.headers },
        },
      );
    },
  });
  proxy.origin = `http://127.0.0.1:${server.port}`;
  return proxy;
}

let w: PostsWorld;
let proxy: Proxy;
/** The waits the client asked for, in ms (the injected sleep returns at once). */
let waits: number[];
let client: HeraldClient;
const NOW = Date.parse("2026-03-01T12:00:00.000Z");

beforeAll(async () => {
  w = await startPostsWorld();
  proxy = startProxy(w.s.url);
  client = createHeraldClient({
    baseUrl: proxy.origin,
    apiKey: w.s.owner.apiKey,
    retries: {
      maxRetries: 2,
      sleep: async (ms) => {
        waits.push(ms);
      },
      now: () => NOW,
    },
  });
});
afterAll(async () => {
  await proxy.stop();
  await w.stop();
});

/** Resets the proxy and the recorded waits; `answers` are what the first matching attempts get. */
function script(match: (request: Request) => boolean, answers: Decision[]): void {
  waits = [];
  proxy.seen = [];
  proxy.decide = (request) => (match(request) ? answers.shift() : undefined) ?? { kind: "forward" };
}

const isCreatePost = (request: Request) =>
  request.method === "POST" && new URL(request.url).pathname.endsWith("/posts");

/** The posts of a group, as the API lists them. */
async function postsOfGroup(group: string) {
  const { data } = await client.GET("/workspaces/{workspace_id}/posts", {
    params: { path: { workspace_id: w.ws }, query: { group } },
  });
  return data!.data;
}

describe("typed calls", () => {
  test("read the account's workspaces and create a scheduled post", async () => {
    script(() => false, []);
    const workspaces = await client.GET("/workspaces");
    expect(workspaces.response.status).toBe(200);
    expect(workspaces.data!.data.map((ws) => ws.id)).toContain(w.ws);

    const created = await client.POST("/workspaces/{workspace_id}/posts", {
      params: { path: { workspace_id: w.ws } },
      body: {
        when: "2026-03-05T10:00:00Z",
        confirmed: true,
        group: "sdk-typed",
        posts: [{ destination_id: w.destinationId, body: ["Hello from @herald/client"] }],
      },
    });
    expect(created.response.status).toBe(201);
    const post = created.data!.posts[0]!;
    expect(post).toMatchObject({ state: "scheduled", scheduled_at: "2026-03-05T10:00:00.000Z" });
    // The client gave the write an Idempotency-Key of its own.
    expect(proxy.seen.at(-1)!.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);

    const read = await client.GET("/workspaces/{workspace_id}/posts/{post_id}", {
      params: { path: { workspace_id: w.ws, post_id: post.id } },
    });
    expect(read.data!.payload.body).toEqual(["Hello from @herald/client"]);
  });

  test("paths, parameters and bodies are typed (checked by tsc, never sent)", () => {
    const unsent = () => {
      // @ts-expect-error: no such path
      void client.GET("/workspace");
      // @ts-expect-error: the path needs workspace_id
      void client.GET("/workspaces/{workspace_id}/posts", {});
      // @ts-expect-error: so does its listing
      void paginate(client, "/workspaces/{workspace_id}/posts");
      // @ts-expect-error: not a listing
      void paginate(client, "/account");
      void client.POST("/workspaces/{workspace_id}/posts", {
        params: { path: { workspace_id: w.ws } },
        // @ts-expect-error: `when` is one of the contract's values or a timestamp, not a number
        body: { when: 5, group: "g", posts: [] },
      });
    };
    expect(typeof unsent).toBe("function");
  });

  test("an error answer is the typed problem", async () => {
    script(() => false, []);
    const missing = await client.GET("/workspaces/{workspace_id}/posts/{post_id}", {
      params: { path: { workspace_id: w.ws, post_id: "send_none" } },
    });
    expect(missing.data).toBeUndefined();
    expect(missing.response.status).toBe(404);
    expect(missing.error!.code).toBe("public_not_found");
    expect(missing.error!.request_id).toBe(missing.response.headers.get("service-request-id")!);
  });

  test("a caller's own Idempotency-Key is sent unchanged", async () => {
    script(() => false, []);
    const body = {
      when: "draft" as const,
      group: "sdk-own-key",
      posts: [{ channel: "mastodon" as const, body: ["mine"] }],
    };
    const params = { path: { workspace_id: w.ws }, header: { "Idempotency-Key": "my-key-1" } };
    const first = await client.POST("/workspaces/{workspace_id}/posts", { params, body });
    const again = await client.POST("/workspaces/{workspace_id}/posts", { params, body });
    expect([first.response.status, again.response.status]).toEqual([201, 201]);
    expect(proxy.seen.map((r) => r.idempotencyKey)).toEqual(["my-key-1", "my-key-1"]);
    expect(again.data!.posts[0]!.id).toBe(first.data!.posts[0]!.id);
  });
});

describe("retries", () => {
  test("a write answered 503 after the server did it is retried with the same key: one post", async () => {
    script(isCreatePost, [
      { kind: "answer", status: 503, headers: { "retry-after": "3" }, forwardFirst: true },
    ]);
    const created = await client.POST("/workspaces/{workspace_id}/posts", {
      params: { path: { workspace_id: w.ws } },
      body: {
        when: "2026-03-06T10:00:00Z",
        confirmed: true,
        group: "sdk-retry-503",
        posts: [{ destination_id: w.destinationId, body: ["once"] }],
      },
    });
    expect(created.response.status).toBe(201);
    expect(proxy.seen.map((r) => r.status)).toEqual([503, 201]);
    const [first, second] = proxy.seen.map((r) => r.idempotencyKey);
    expect(first).toBeTruthy();
    expect(second).toBe(first!);
    expect(waits).toEqual([3000]);
    const posts = await postsOfGroup("sdk-retry-503");
    expect(posts.map((p) => p.id)).toEqual([created.data!.posts[0]!.id]);
  });

  test("429 with an HTTP-date Retry-After waits until that date, then succeeds", async () => {
    const at = new Date(NOW + 7000).toUTCString();
    script(isCreatePost, [
      { kind: "answer", status: 429, headers: { "retry-after": at }, forwardFirst: false },
    ]);
    const created = await client.POST("/workspaces/{workspace_id}/posts", {
      params: { path: { workspace_id: w.ws } },
      body: {
        when: "2026-03-07T10:00:00Z",
        confirmed: true,
        group: "sdk-retry-429",
        posts: [{ destination_id: w.destinationId, body: ["after the limit"] }],
      },
    });
    expect(created.response.status).toBe(201);
    expect(waits).toEqual([7000]);
    expect(new Set(proxy.seen.map((r) => r.idempotencyKey)).size).toBe(1);
    expect(await postsOfGroup("sdk-retry-429")).toHaveLength(1);
  });

  test("attempts are bounded: the last 503 is the answer", async () => {
    const busy: Decision = {
      kind: "answer",
      status: 503,
      headers: { "retry-after": "1" },
      forwardFirst: false,
    };
    script(() => true, [busy, busy, busy, busy]);
    const answer = await client.GET("/workspaces");
    expect(answer.response.status).toBe(503);
    expect(proxy.seen).toHaveLength(3);
    expect(waits).toEqual([1000, 1000]);
  });

  test("a Retry-After longer than maxDelaySeconds is handed to the caller", async () => {
    script(
      () => true,
      [{ kind: "answer", status: 429, headers: { "retry-after": "3600" }, forwardFirst: false }],
    );
    const answer = await client.GET("/workspaces");
    expect(answer.response.status).toBe(429);
    expect(answer.response.headers.get("retry-after")).toBe("3600");
    expect(proxy.seen).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  test("a write's 4xx is its answer: sent once", async () => {
    script(() => false, []);
    const refused = await client.POST("/workspaces/{workspace_id}/posts", {
      params: { path: { workspace_id: w.ws } },
      body: {
        when: "2026-03-07T10:00:00Z",
        group: "sdk-unconfirmed",
        posts: [{ destination_id: w.destinationId, body: ["no confirmation"] }],
      },
    });
    expect(refused.response.status).toBe(400);
    expect(refused.error!.code).toBe("public_invalid_request");
    expect(refused.error!.errors.map((e) => e.pointer)).toContain("/confirmed");
    expect(proxy.seen).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  test("retries: false sends every request once", async () => {
    const once = createHeraldClient({ baseUrl: proxy.origin, apiKey: w.s.owner.apiKey, retries: false });
    script(
      () => true,
      [{ kind: "answer", status: 503, headers: { "retry-after": "1" }, forwardFirst: false }],
    );
    expect((await once.GET("/workspaces")).response.status).toBe(503);
    expect(proxy.seen).toHaveLength(1);
  });
});

describe("paginate", () => {
  test("follows next_cursor over several pages and yields every item once", async () => {
    script(() => false, []);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { data } = await client.POST("/workspaces/{workspace_id}/posts", {
        params: { path: { workspace_id: w.ws } },
        body: {
          when: "draft",
          group: `sdk-page-${i}`,
          posts: [{ channel: "mastodon", body: [`draft ${i}`] }],
        },
      });
      ids.push(data!.posts[0]!.id);
    }
    script(() => false, []);
    const seen: string[] = [];
    for await (const post of paginate(client, "/workspaces/{workspace_id}/posts", {
      params: { path: { workspace_id: w.ws }, query: { view: "drafts", limit: 2 } },
    }))
      seen.push(post.id);
    expect(seen.length).toBe(new Set(seen).size);
    expect(seen).toEqual(expect.arrayContaining(ids));
    // Drafts made by earlier tests are listed too: at least three pages of two.
    expect(proxy.seen.length).toBe(Math.ceil(seen.length / 2));
    expect(proxy.seen.length).toBeGreaterThanOrEqual(3);
  });

  test("a listing without parameters needs no init", async () => {
    script(() => false, []);
    const ids: string[] = [];
    for await (const workspace of paginate(client, "/workspaces")) ids.push(workspace.id);
    expect(ids).toContain(w.ws);
  });

  test("an error answer throws HeraldApiError with the problem", async () => {
    script(() => false, []);
    const listing = paginate(client, "/workspaces/{workspace_id}/posts", {
      params: { path: { workspace_id: w.ws }, query: { after: "not-a-cursor" } },
    });
    const error = await listing.next().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: "HeraldApiError", status: 400 });
    expect((error as { problem: { code: string } }).problem.code).toBe("public_invalid_request");
  });
});
