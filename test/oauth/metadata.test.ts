import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { ALL_SCOPES } from "../../src/core/scopes.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

describe("OAuth metadata documents", () => {
  for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"])
    test(`${path} describes <origin>/mcp (RFC 9728)`, async () => {
      const r = await s.request("GET", path, { key: null });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toMatch(/^application\/json/);
      expect(r.headers.get("access-control-allow-origin")).toBe("*");
      expect(r.body).toMatchObject({
        resource: `${s.url}/mcp`,
        authorization_servers: [s.url],
        scopes_supported: [...ALL_SCOPES],
        bearer_methods_supported: ["header"],
      });
    });

  test("/.well-known/oauth-authorization-server names the endpoints and what they support (RFC 8414)", async () => {
    const r = await s.request("GET", "/.well-known/oauth-authorization-server", { key: null });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      issuer: s.url,
      authorization_endpoint: `${s.url}/oauth/authorize`,
      token_endpoint: `${s.url}/oauth/token`,
      registration_endpoint: `${s.url}/oauth/register`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      scopes_supported: [...ALL_SCOPES],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  });

  test("browser-based clients may call the metadata, registration and token endpoints across origins", async () => {
    for (const path of [
      "/.well-known/oauth-protected-resource/mcp",
      "/.well-known/oauth-authorization-server",
      "/oauth/register",
      "/oauth/token",
    ]) {
      const r = await fetch(s.url + path, {
        method: "OPTIONS",
        headers: {
          origin: "https://inspector.example",
          "access-control-request-method": "POST",
          "access-control-request-headers": "content-type, mcp-protocol-version",
        },
      });
      expect({ path, status: r.status }).toEqual({ path, status: 204 });
      expect(r.headers.get("access-control-allow-origin")).toBe("*");
      expect(r.headers.get("access-control-allow-headers")).toMatch(/mcp-protocol-version/);
    }
    const token = await fetch(`${s.url}/oauth/token`, {
      method: "POST",
      headers: { origin: "https://inspector.example", "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=refresh_token",
    });
    expect(token.status).toBe(400);
    expect(token.headers.get("access-control-allow-origin")).toBe("*");
  });
});
