// A retried command never acts twice: each create or action invocation generates one Idempotency-Key
// and sends it on every one of its own tries. A TCP proxy between the CLI and the server loses the
// first answer (the server did the work) or answers 503 in the server's place; the CLI tries again
// with the same key and the server replays its stored answer, so there is one post, cancelled once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, createServer, type Server } from "node:net";
import { join } from "node:path";
import { startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { herald, removeTempDirs, succeeded, tempDir } from "./helpers.ts";

/** A request the proxy saw: method, path and Idempotency-Key. */
interface Seen {
  method: string;
  path: string;
  key: string | null;
}

/** What the proxy does to the next request matching `match`: lose its answer, or answer 503 itself. */
type Fault = { match: RegExp; kind: "lose" | "503" };

/** A TCP proxy to `port` that records each request and applies queued faults once each. */
async function startProxy(port: number) {
  const seen: Seen[] = [];
  const faults: Fault[] = [];
  const server: Server = createServer((client) => {
    const upstream = connect(port, "127.0.0.1");
    let lose = false;
    client.on("data", (chunk) => {
      const head = /^([A-Z]+) (\S+) HTTP\/1\.1\r\n/.exec(chunk.toString("latin1"));
      if (head) {
        const key = /\r\nidempotency-key: ([^\r]+)/i.exec(chunk.toString("latin1"))?.[1] ?? null;
        seen.push({ method: head[1]!, path: head[2]!, key });
        const at = faults.findIndex((f) => f.match.test(`${head[1]} ${head[2]}`));
        const fault = at >= 0 ? faults.splice(at, 1)[0] : undefined;
        if (fault?.kind === "503") {
          const body = "busy";
          client.end(
            `HTTP/1.1 503 Service Unavailable\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
          );
          upstream.destroy();
          return;
        }
        if (fault?.kind === "lose") lose = true;
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk) => {
      // The server answered: it did the work. The answer never reaches the client.
      if (lose) {
        client.destroy();
        upstream.destroy();
      } else client.write(chunk);
    });
    upstream.on("end", () => client.end());
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    client.on("close", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    seen,
    fault: (f: Fault) => void faults.push(f),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let w: PostsWorld;
let proxy: Awaited<ReturnType<typeof startProxy>>;
let env: Record<string, string>;

beforeAll(async () => {
  w = await startPostsWorld();
  proxy = await startProxy(Number(new URL(w.s.url).port));
  env = {
    HERALD_API_URL: proxy.url,
    HERALD_API_KEY: w.s.owner.apiKey,
    HERALD_CONFIG_DIR: join(tempDir(), "config"),
  };
});
afterAll(async () => {
  await proxy.stop();
  await w.stop();
  removeTempDirs();
});

const POSTS = /^POST \/v1\/workspaces\/\S+\/posts$/;

async function groupPosts(group: string): Promise<any[]> {
  return (await w.s.request("GET", `/v1/workspaces/${w.ws}/posts?group=${group}`)).body.data;
}

describe("one Idempotency-Key per invocation, reused by the command's own retries", () => {
  test("posts create whose first answer is lost: tried again with the same key, one post", async () => {
    proxy.fault({ match: POSTS, kind: "lose" });
    const before = proxy.seen.length;
    const args = ["posts", "create", "Only once", "--when", "2026-03-02T09:00:00Z", "--group", "cli-lost"];
    const set = JSON.parse(succeeded(await herald([...args, "--yes", "--json"], env)));
    const creates = proxy.seen.slice(before).filter((r) => POSTS.test(`${r.method} ${r.path}`));
    expect(creates).toHaveLength(2);
    expect(creates[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(creates[1]!.key).toBe(creates[0]!.key);
    const stored = await groupPosts("cli-lost");
    expect(stored.map((p) => p.id)).toEqual([set.posts[0].id]);

    // A new invocation is new work: a new key, a second post.
    const again = proxy.seen.length;
    succeeded(await herald([...args, "--yes"], env));
    const second = proxy.seen.slice(again).filter((r) => POSTS.test(`${r.method} ${r.path}`));
    expect(second).toHaveLength(1);
    expect(second[0]!.key).not.toBe(creates[0]!.key);
    expect(await groupPosts("cli-lost")).toHaveLength(2);
  });

  test("a 503 in the server's place: the same key again, one post", async () => {
    proxy.fault({ match: POSTS, kind: "503" });
    const before = proxy.seen.length;
    succeeded(
      await herald(
        ["posts", "create", "Busy", "--when", "2026-03-02T10:00:00Z", "--group", "cli-busy", "--yes"],
        env,
      ),
    );
    const creates = proxy.seen.slice(before).filter((r) => POSTS.test(`${r.method} ${r.path}`));
    expect(creates.map((r) => r.key)).toEqual([creates[0]!.key, creates[0]!.key]);
    expect(await groupPosts("cli-busy")).toHaveLength(1);
  });

  test("posts cancel whose answer is lost: the retry gets the stored answer, not 'already cancelled'", async () => {
    const set = JSON.parse(
      succeeded(
        await herald(
          [
            "posts",
            "create",
            "Cancel me",
            "--when",
            "2026-03-03T09:00:00Z",
            "--group",
            "cli-cx",
            "--yes",
            "--json",
          ],
          env,
        ),
      ),
    );
    const id = set.posts[0].id;
    proxy.fault({ match: /^POST \/v1\/workspaces\/\S+\/posts\/\S+\/cancel$/, kind: "lose" });
    const before = proxy.seen.length;
    expect(succeeded(await herald(["posts", "cancel", id, "--yes"], env)).trim()).toBe(`${id} cancelled`);
    const cancels = proxy.seen.slice(before).filter((r) => r.path.endsWith("/cancel"));
    expect(cancels).toHaveLength(2);
    expect(cancels[1]!.key).toBe(cancels[0]!.key);
    // Without the key the second try would have been refused: the post was cancelled by the first.
    const plain = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts/${id}/cancel`, {
      body: { confirmed: true },
    });
    expect(plain.status).toBe(409);
  });

  test("reads (GET) carry no key", async () => {
    const before = proxy.seen.length;
    succeeded(await herald(["posts", "list", "--group", "cli-lost"], env));
    const reads = proxy.seen.slice(before);
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((r) => r.method === "GET" && r.key === null)).toBe(true);
  });
});
