// OAuth for the MCP endpoint end to end in headless Chromium (Debian `chromium`, driven by
// playwright-core): the official MCP client package registers a client and builds the authorization
// URL; the browser signs in, consents (one workspace, chosen scopes) and follows the redirect to the
// client's local callback server; the package exchanges the code and calls a tool at /mcp with the
// token. The consent page is checked with axe-core and screenshotted into test-artifacts/oauth
// (HERALD_DOCS_SCREENSHOTS=1 also refreshes docs/dashboard/oauth-consent.png).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import {
  auth,
  type CallToolResult,
  Client,
  StreamableHTTPClientTransport,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { ROOT } from "../helpers/process.ts";
import { dashboardWorld, type DashboardWorld, PASSWORD } from "../dashboard/support.ts";
import { launchChromium, lookAt } from "./dashboard-kit.ts";

const ARTIFACTS = join(ROOT, "test-artifacts", "oauth");
const DOCS = join(ROOT, "docs", "dashboard");
const BROWSER_TEST_MS = 120_000;

let world: DashboardWorld;
let browser: Browser;
let callbacks: ReturnType<typeof Bun.serve>;
const received: URL[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  rmSync(ARTIFACTS, { recursive: true, force: true });
  world = await dashboardWorld();
  // The client's local listener, as a desktop assistant opens one for the redirect.
  callbacks = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      received.push(new URL(request.url));
      return new Response("<!doctype html><title>Done</title><p>Signed in. You can close this window.</p>", {
        headers: { "content-type": "text/html" },
      });
    },
  });
});
afterAll(async () => {
  await browser?.close();
  await callbacks?.stop(true);
  await world?.stop();
});

/** The client's side: what a desktop assistant keeps between the two legs of the flow. */
class AssistantProvider implements OAuthClientProvider {
  client: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  verifier = "";
  discovered: OAuthDiscoveryState | undefined;
  authorizationUrl: URL | null = null;
  constructor(readonly redirectUrl: string) {}
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "Desk assistant",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state = () => "e2e-state";
  clientInformation = () => this.client;
  saveClientInformation = (info: StoredOAuthClientInformation) => void (this.client = info);
  tokens = () => this.saved;
  saveTokens = (tokens: StoredOAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  codeVerifier = () => this.verifier;
  saveDiscoveryState = (state: OAuthDiscoveryState) => void (this.discovered = state);
  discoveryState = () => this.discovered;
}

test(
  "register, sign in, consent, callback, token, and an authenticated call at the MCP resource",
  async () => {
    const serverUrl = `${world.s.url}/mcp`;
    const provider = new AssistantProvider(`http://127.0.0.1:${callbacks.port}/callback`);
    expect(await auth(provider, { serverUrl, scope: "workspaces:read posts:read posts:write" })).toBe(
      "REDIRECT",
    );
    const second = await world.s.request("POST", "/v1/workspaces", {
      key: world.owner.apiKey,
      body: { name: "Side project" },
    });

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(provider.authorizationUrl!.toString());
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.getByLabel("E-mail address").fill(world.owner.email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/oauth\/authorize\?/);
    expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe(
      "Allow “Desk assistant” to use Herald?",
    );
    await lookAt(page, ARTIFACTS, "oauth-consent");
    if (process.env.HERALD_DOCS_SCREENSHOTS === "1") {
      mkdirSync(DOCS, { recursive: true });
      copyFileSync(join(ARTIFACTS, "oauth-consent-1280.png"), join(DOCS, "oauth-consent.png"));
    }
    await page.getByLabel("Only the workspaces selected below").check();
    await page.getByLabel("Acme", { exact: true }).check();
    await page.getByLabel("posts:write", { exact: true }).uncheck();
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL(/127\.0\.0\.1:\d+\/callback\?/);
    expect(await page.getByText("You can close this window").count()).toBe(1);
    await page.close();

    const callback = received.filter((u) => u.pathname === "/callback").at(-1)!;
    expect(callback.searchParams.get("state")).toBe("e2e-state");
    expect(callback.searchParams.get("iss")).toBe(world.s.url);
    const code = callback.searchParams.get("code")!;
    expect(
      await auth(provider, { serverUrl, authorizationCode: code, iss: callback.searchParams.get("iss")! }),
    ).toBe("AUTHORIZED");
    const token = provider.saved!.access_token;
    expect(provider.saved!.scope).toBe("workspaces:read posts:read");

    // The assistant calls a tool at /mcp with its token (the package's transport sends it from the provider).
    const client = new Client({ name: "desk-assistant", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider: provider }));
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("list_workspaces");
    // posts:write was unticked on the consent page: no tool that writes posts is offered.
    expect(tools).not.toContain("create_draft");
    const listed = (await client.callTool({ name: "list_workspaces", arguments: {} })) as CallToolResult;
    expect(listed.isError ?? false).toBe(false);
    const names = (listed.structuredContent as { data: { name: string }[] }).data.map((w) => w.name);
    expect(names).toEqual(["Acme"]);
    const other = (await client.callTool({
      name: "list_posts",
      arguments: { workspace_id: second.body.id },
    })) as CallToolResult;
    expect((other.structuredContent as { status: number }).status).toBe(404);
    await client.close();
    // The same token straight at the API: not its audience.
    const direct = await fetch(`${world.s.url}/v1/workspaces`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(direct.status).toBe(401);
  },
  BROWSER_TEST_MS,
);
