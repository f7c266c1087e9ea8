// `herald mcp`: the real CLI process serving the tools over stdio to the official client's stdio
// transport, with the stored login of `herald login`, against a real server.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { writeLogin } from "../../src/cli/credentials.ts";
import { herald } from "../cli/helpers.ts";
import { BUN, MAIN, ROOT, cleanEnv, readUntil } from "../helpers/process.ts";
import { makePng } from "../posts/fixtures.ts";
import { startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { callOk, callRefused, ERAS, toolNames, type Era } from "./helpers.ts";

let w: PostsWorld;
const configDirs: string[] = [];
beforeAll(async () => {
  w = await startPostsWorld();
});
afterAll(async () => {
  await w.stop();
  for (const dir of configDirs) rmSync(dir, { recursive: true, force: true });
});

/** A config directory holding a login with `key`, as `herald login` leaves it. */
async function loggedIn(key: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "herald-mcp-login-"));
  configDirs.push(dir);
  await writeLogin(
    { base_url: w.s.url, api_key: key, workspace_id: w.ws, account_id: w.s.owner.accountId },
    { HERALD_CONFIG_DIR: dir },
  );
  return dir;
}

/**
 * A client that starts `herald mcp` (the way an assistant's config does) and speaks to it on stdio,
 * with a config directory's login, or with the environment given.
 */
async function stdioClient(
  login: string | Record<string, string>,
  era: Era,
): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: BUN,
    args: [MAIN, "mcp"],
    cwd: ROOT,
    env: cleanEnv(typeof login === "string" ? { HERALD_CONFIG_DIR: login } : login),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client(
    { name: "herald-tests", version: "1.0.0" },
    { versionNegotiation: { mode: era.mode } },
  );
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

describe("herald mcp over stdio", () => {
  for (const era of ERAS)
    test(`a test key's login: no publishing tools; a draft made and refused arguments (${era.name})`, async () => {
      const key = await w.s.createKey({ environment: "test" });
      const { client, stderr } = await stdioClient(await loggedIn(key), era);
      try {
        const names = await toolNames(client);
        expect(names).toContain("create_draft");
        expect(names).not.toContain("publish_post");
        expect(names).not.toContain("retry_post");
        const group = `stdio-${era.mode === "legacy" ? "legacy" : "modern"}`;
        const created = await callOk(client, "create_draft", {
          workspace_id: w.ws,
          group,
          posts: [{ destination_id: w.destinationId, body: ["drafted over stdio"] }],
        });
        const read = await w.s.request("GET", `/v1/workspaces/${w.ws}/posts/${created.posts[0].id}`);
        expect(read.body).toMatchObject({ state: "draft", payload: { body: ["drafted over stdio"] } });
        await callRefused(
          client,
          "create_draft",
          { workspace_id: w.ws, group, posts: [{ destination_id: w.destinationId, body: [] }] },
          400,
          "public_invalid_request",
          ["/posts/0/body"],
        );
        await callRefused(client, "get_post", { workspace_id: w.ws }, 400, "public_invalid_request", [
          "/post_id",
        ]);
      } finally {
        await client.close();
      }
      expect(stderr()).toBe("");
    });

  test("a live login with posts:read only: the read tools", async () => {
    const key = await w.s.createKey({ scopes: ["posts:read"] });
    const { client } = await stdioClient(await loggedIn(key), ERAS[0]!);
    try {
      expect(await toolNames(client)).toEqual([
        "list_workspaces",
        "list_posts",
        "get_post",
        "validate_post",
        "get_post_group_analytics",
      ]);
      const listed = await callOk(client, "list_workspaces", {});
      expect(listed.data[0].id).toBe(w.ws);
    } finally {
      await client.close();
    }
  });

  test("HERALD_API_KEY with a live key: upload, update a draft, publish once, all over HTTP", async () => {
    const key = await w.s.createKey({});
    const emptyConfig = mkdtempSync(join(tmpdir(), "herald-mcp-env-"));
    configDirs.push(emptyConfig);
    const { client, stderr } = await stdioClient(
      { HERALD_API_KEY: key, HERALD_API_URL: w.s.url, HERALD_CONFIG_DIR: emptyConfig },
      ERAS[1]!,
    );
    const api = (path: string) => w.s.request("GET", `/v1/workspaces/${w.ws}${path}`);
    try {
      expect(await toolNames(client)).toHaveLength(12);
      const bytes = makePng(5, 5);
      const asset = await callOk(client, "upload_media", {
        workspace_id: w.ws,
        file_name: "dot.png",
        content_type: "image/png",
        data_base64: bytes.toString("base64"),
      });
      expect((await api(`/assets/${asset.id}`)).body).toMatchObject({
        status: "ready",
        byte_size: bytes.byteLength,
      });
      const draft = (
        await callOk(client, "create_draft", {
          workspace_id: w.ws,
          group: "stdio-env",
          posts: [{ destination_id: w.destinationId, body: ["first words"] }],
        })
      ).posts[0];
      await callOk(client, "update_draft", {
        workspace_id: w.ws,
        post_id: draft.id,
        version: draft.version,
        asset_items: [{ asset_id: asset.id, item_index: 0 }],
      });
      expect((await api(`/posts/${draft.id}`)).body.asset_ids).toEqual([asset.id]);
      const args = {
        workspace_id: w.ws,
        when: "2026-03-04T08:00:00Z",
        confirmed: true,
        idempotency_key: "stdio-once",
        group: "stdio-scheduled",
        posts: [{ destination_id: w.destinationId, body: ["scheduled over stdio"], media: [asset.id] }],
      };
      const first = await callOk(client, "publish_post", args);
      const again = await callOk(client, "publish_post", args);
      expect(again.posts[0].id).toBe(first.posts[0].id);
      expect((await api("/posts?group=stdio-scheduled")).body.data).toHaveLength(1);
      expect((await api(`/posts/${first.posts[0].id}`)).body).toMatchObject({
        state: "scheduled",
        asset_ids: [asset.id],
      });
    } finally {
      await client.close();
    }
    expect(stderr()).toBe("");
  });

  test("answers on stdout line by line and exits 0 once the assistant closes stdin", async () => {
    const key = await w.s.createKey({ scopes: ["posts:read"] });
    const proc = Bun.spawn([BUN, MAIN, "mcp"], {
      cwd: ROOT,
      env: cleanEnv({ HERALD_CONFIG_DIR: await loggedIn(key) }),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    };
    await proc.stdin.write(`${JSON.stringify(initialize)}\n`);
    await proc.stdin.flush();
    const answer = await readUntil(proc.stdout, /^.*\n/);
    expect(JSON.parse(answer[0])).toMatchObject({ id: 1, result: { serverInfo: { name: "herald" } } });
    await proc.stdin.end();
    expect(await proc.exited).toBe(0);
    expect(await new Response(proc.stderr).text()).toBe("");
  });

  test("without a login it says so on stderr, prints nothing on stdout, exits 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "herald-mcp-none-"));
    configDirs.push(dir);
    const run = await herald(["mcp"], { HERALD_CONFIG_DIR: dir });
    expect(run).toMatchObject({ code: 1, stdout: "" });
    expect(run.stderr).toContain("not logged in");
  });

  test("a revoked login: refused before serving, nothing on stdout", async () => {
    const key = await w.s.createKey({ scopes: ["posts:read"] });
    const dir = await loggedIn(key);
    expect((await w.s.request("POST", "/v1/me/revoke", { key, body: { confirmed: true } })).status).toBe(200);
    const run = await herald(["mcp"], { HERALD_CONFIG_DIR: dir });
    expect(run).toMatchObject({ code: 1, stdout: "" });
    expect(run.stderr).toContain("public_authentication_required");
  });
});
