// OAuth access tokens at Herald's MCP endpoint, driven by the official MCP client package: its OAuth
// (authProvider) at /mcp, tools filtered by the grant's scopes, the grant's workspaces, revocation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client, type CallToolResult, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  attributeOf,
  type DashboardWorld,
  formOf,
  screenOf,
  type TestBrowser,
} from "../dashboard/support.ts";
import { grantTokens, oauthWorld, registeredClient } from "./support.ts";

let world: DashboardWorld;
let owner: TestBrowser;
let clientId: string;
beforeAll(async () => {
  world = await oauthWorld();
  owner = await world.signedIn();
  clientId = await registeredClient(world.s.url);
});
afterAll(() => world.stop());

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: "oauth-tests", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${world.s.url}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

const mcpPost = (token: string) =>
  fetch(`${world.s.url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });

describe("an OAuth access token at /mcp", () => {
  test("lists only the tools its scopes allow and calls them within its workspaces", async () => {
    const second = await world.s.request("POST", "/v1/workspaces", {
      key: world.owner.apiKey,
      body: { name: "Second" },
    });
    const { access_token } = (
      await grantTokens(world, owner, clientId, [
        ["workspace_access", "selected"],
        ["workspace_ids", world.owner.workspaceId],
        ["scopes", "workspaces:read"],
        ["scopes", "posts:read"],
        ["decision", "allow"],
      ])
    ).body;
    const client = await connect(access_token);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("list_workspaces");
    expect(names).toContain("list_posts");
    expect(names).not.toContain("publish_post");
    expect(names).not.toContain("create_draft");
    const listed = (await client.callTool({ name: "list_workspaces", arguments: {} })) as CallToolResult;
    expect(listed.isError ?? false).toBe(false);
    const data = (listed.structuredContent as { data: { id: string }[] }).data.map((w) => w.id);
    expect(data).toEqual([world.owner.workspaceId]);
    const foreign = (await client.callTool({
      name: "list_posts",
      arguments: { workspace_id: second.body.id },
    })) as CallToolResult;
    expect(foreign.isError).toBe(true);
    expect((foreign.structuredContent as { status: number }).status).toBe(404);
    await client.close();
  });

  test("a revoked grant is refused at /mcp at once, with the metadata in the challenge", async () => {
    const { access_token } = (await grantTokens(world, owner, clientId)).body;
    expect((await mcpPost(access_token)).status).toBe(200);
    const page = await owner.get("/dashboard/keys");
    const screen = screenOf(page.text);
    const button = screen.getAllByRole("button", { name: "Revoke Test assistant" })[0]!;
    const revoked = await owner.submit("/dashboard/keys", {}, attributeOf(formOf(button)!, "action")!);
    expect(revoked.status).toBe(303);
    const refused = await mcpPost(access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toMatch(
      /resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource/,
    );
  });
});
