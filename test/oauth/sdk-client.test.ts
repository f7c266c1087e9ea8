// The official MCP client package's OAuth (`auth()`: discovery from the protected-resource metadata,
// dynamic registration, PKCE, the issuer checks, the code exchange, refresh) against Herald.
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  auth,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from "@modelcontextprotocol/client";
import { buildApp } from "../../src/app.ts";
import { markMcpDispatch } from "../../src/http/mcp-dispatch.ts";
import type { DashboardWorld, TestBrowser } from "../dashboard/support.ts";
import { answerConsent, oauthWorld, REDIRECT_URI } from "./support.ts";

let world: DashboardWorld;
let owner: TestBrowser;
beforeAll(async () => {
  world = await oauthWorld();
  owner = await world.signedIn();
});
afterAll(() => world.stop());

/** A client as a desktop assistant keeps it: registration, tokens and the verifier in memory. */
class MemoryProvider implements OAuthClientProvider {
  client: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | null = null;
  discovered: OAuthDiscoveryState | undefined;
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "SDK assistant",
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  state() {
    return "sdk-state";
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovered = state;
  }
  discoveryState() {
    return this.discovered;
  }
}

test("the MCP client package registers, authorizes with PKCE, exchanges the code and refreshes", async () => {
  const provider = new MemoryProvider();
  const serverUrl = `${world.s.url}/mcp`;
  expect(await auth(provider, { serverUrl, scope: "workspaces:read posts:read" })).toBe("REDIRECT");
  expect(provider.client?.client_id).toMatch(/^hoc_/);
  const url = provider.authorizationUrl!;
  expect(url.origin + url.pathname).toBe(`${world.s.url}/oauth/authorize`);
  expect(url.searchParams.get("resource")).toBe(serverUrl);
  expect(url.searchParams.get("code_challenge_method")).toBe("S256");

  const answered = await answerConsent(owner, url.pathname + url.search, [
    ["workspace_access", "all"],
    ["scopes", "workspaces:read"],
    ["scopes", "posts:read"],
    ["decision", "allow"],
  ]);
  const callback = new URL(answered.location!);
  expect(callback.searchParams.get("state")).toBe("sdk-state");
  const code = callback.searchParams.get("code")!;
  const iss = callback.searchParams.get("iss")!;
  expect(await auth(provider, { serverUrl, authorizationCode: code, iss })).toBe("AUTHORIZED");
  const first = provider.saved!;
  expect(first.access_token).toMatch(/^hk_oat_/);
  expect(first.scope).toBe("workspaces:read posts:read");

  // With tokens stored, the package refreshes instead of asking the person again.
  world.s.clock.advance(60 * 60_000);
  expect(await auth(provider, { serverUrl })).toBe("AUTHORIZED");
  expect(provider.saved!.access_token).not.toBe(first.access_token);
  const app = buildApp(world.s.herald);
  const listed = await app.handle(
    markMcpDispatch(
      new Request(`${world.s.url}/v1/workspaces`, {
        headers: { authorization: `Bearer ${provider.saved!.access_token}` },
      }),
    ),
  );
  expect(listed.status).toBe(200);
});
