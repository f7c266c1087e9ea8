import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { register, REDIRECT_URI, tokenRequest } from "./support.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ env: { HERALD_SIGNUP_REQUESTS_PER_HOUR: "40" } });
});
afterAll(() => s.stop());

describe("POST /oauth/register (RFC 7591)", () => {
  test("registers a public client: 201 with client_id and the registered metadata", async () => {
    const uris = [
      REDIRECT_URI,
      "https://assistant.example/oauth/callback",
      "com.example.assistant:/cb",
      "http://[::1]:3000/cb",
      "http://localhost/cb",
    ];
    const r = await register(s.url, {
      client_name: "Desk assistant",
      redirect_uris: uris,
      grant_types: ["authorization_code", "refresh_token"],
      client_uri: "https://assistant.example",
    });
    expect(r.status).toBe(201);
    expect(r.headers.get("cache-control")).toBe("no-store");
    expect(r.body).toEqual({
      client_id: expect.stringMatching(/^hoc_[0-9a-z]{26}$/),
      client_id_issued_at: Math.floor(s.clock.now() / 1000),
      client_name: "Desk assistant",
      redirect_uris: uris,
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      client_uri: "https://assistant.example",
    });
  });

  test("defaults: the code grant, no client authentication, named by its redirect host", async () => {
    const r = await register(s.url, { redirect_uris: ["https://app.example/cb"] });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      client_name: "app.example",
      grant_types: ["authorization_code"],
      token_endpoint_auth_method: "none",
    });
  });

  const badUris: [string, unknown, RegExp][] = [
    ["plain http to a public host", "http://app.example/cb", /loopback/],
    ["http to a private address", "http://10.0.0.5/cb", /loopback/],
    ["a fragment", "https://app.example/cb#frag", /fragment/],
    ["user credentials", "https://user:pw@app.example/cb", /credentials/],
    ["a script scheme", "javascript:alert(1)", /private-use scheme/],
    ["a data URI", "data:text/html,hi", /private-use scheme/],
    ["a scheme without a dot", "myapp:/cb", /private-use scheme/],
    ["a relative URI", "/callback", /absolute/],
    ["a number", 42, /non-empty string/],
  ];
  for (const [what, uri, detail] of badUris)
    test(`a redirect URI with ${what} is invalid_redirect_uri`, async () => {
      const r = await register(s.url, { client_name: "x", redirect_uris: [REDIRECT_URI, uri] });
      expect(r.status).toBe(400);
      expect(r.headers.get("content-type")).toMatch(/^application\/json/);
      expect(r.body.error).toBe("invalid_redirect_uri");
      expect(r.body.error_description).toMatch(/^redirect_uris\[1\] /);
      expect(r.body.error_description).toMatch(detail);
    });

  test("no redirect URIs at all is invalid_redirect_uri", async () => {
    for (const body of [{}, { redirect_uris: [] }, { redirect_uris: "https://a.example/cb" }]) {
      const r = await register(s.url, body);
      expect({ status: r.status, error: r.body.error }).toEqual({
        status: 400,
        error: "invalid_redirect_uri",
      });
    }
  });

  const badMetadata: [string, Record<string, unknown>, RegExp][] = [
    ["an implicit grant", { grant_types: ["implicit"] }, /not implicit/],
    [
      "client credentials",
      { grant_types: ["authorization_code", "client_credentials"] },
      /client_credentials/,
    ],
    ["a token response type", { response_types: ["token"] }, /response_types/],
    ["a client secret method", { token_endpoint_auth_method: "client_secret_basic" }, /public clients/],
    ["an empty name", { client_name: "  " }, /client_name/],
    ["a name too long", { client_name: "x".repeat(101) }, /at most 100/],
    ["an http client_uri", { client_uri: "http://app.example" }, /client_uri/],
  ];
  for (const [what, extra, detail] of badMetadata)
    test(`${what} is invalid_client_metadata`, async () => {
      const r = await register(s.url, { redirect_uris: [REDIRECT_URI], ...extra });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_client_metadata");
      expect(r.body.error_description).toMatch(detail);
    });

  test("a body that is not JSON, or larger than 16 KiB, is invalid_client_metadata", async () => {
    for (const [type, body] of [
      ["application/json", "{"],
      [
        "application/json",
        JSON.stringify({ redirect_uris: [REDIRECT_URI], client_name: "x".repeat(17_000) }),
      ],
      ["text/plain", "{}"],
    ]) {
      const r = await fetch(`${s.url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": type! },
        body,
      });
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: string }).error).toBe("invalid_client_metadata");
    }
  });

  test("failed token requests are limited per client address like failed keys (429 in OAuth's form)", async () => {
    const client = (await register(s.url, { redirect_uris: [REDIRECT_URI] })).body.client_id;
    const bad = {
      grant_type: "authorization_code",
      code: "hk_oac_unknown",
      code_verifier: "v".repeat(43),
      redirect_uri: REDIRECT_URI,
      client_id: client,
    };
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await tokenRequest(s.url, bad)).status);
    expect(statuses.slice(0, 20).every((status) => status === 400)).toBe(true);
    const limited = await tokenRequest(s.url, bad);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe("invalid_request");
    expect(limited.body.error_description).toMatch(/failed token requests a minute/);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  // Last: it uses up this address's registrations.
  test("registration is limited per client address (429 with Retry-After)", async () => {
    let last: Awaited<ReturnType<typeof register>> | null = null;
    for (let i = 0; i < 41; i++) {
      last = await register(s.url, { redirect_uris: [REDIRECT_URI] });
      if (last.status === 429) break;
    }
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(last!.body.error_description).toMatch(/client registrations an hour/);
  });
});
