import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

const CONFIRMED = { confirmed: true };
const keyIdOf = async (key: string) =>
  (await s.request("GET", "/v1/me", { key })).body.authentication.credential_id;

describe("POST /v1/me/revoke", () => {
  test('{confirmed: true}: 200 {id, object: "api_key", revoked: true}, then the key is 401', async () => {
    const key = await s.createKey({ scopes: [] });
    const id = await keyIdOf(key);
    const r = await s.request("POST", "/v1/me/revoke", { key, body: CONFIRMED });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id, object: "api_key", revoked: true });
    const after = await s.request("GET", "/v1/me", { key });
    expectProblem(after, 401, "public_authentication_required");
    expect(after.body.detail).toBe("The API key has been revoked.");
    expectProblem(
      await s.request("POST", "/v1/me/revoke", { key, body: CONFIRMED }),
      401,
      "public_authentication_required",
    );
  });

  test("only the calling key is revoked; the account's other keys keep working", async () => {
    const key = await s.createKey({});
    expect((await s.request("POST", "/v1/me/revoke", { key, body: CONFIRMED })).status).toBe(200);
    expect((await s.request("GET", "/v1/me")).status).toBe(200);
  });

  test("a body with properties is 400, and the key stays valid", async () => {
    const key = await s.createKey({});
    expectProblem(
      await s.request("POST", "/v1/me/revoke", { key, body: { confirmed: true, id: "key_x" } }),
      400,
      "public_invalid_request",
      ["/id"],
    );
    expect((await s.request("GET", "/v1/me", { key })).status).toBe(200);
  });

  test("without a key it is 401", async () => {
    expectProblem(
      await s.request("POST", "/v1/me/revoke", { key: null, body: CONFIRMED }),
      401,
      "public_authentication_required",
    );
  });

  test("the revocation is in the audit log", async () => {
    const key = await s.createKey({});
    const id = await keyIdOf(key);
    await s.request("POST", "/v1/me/revoke", {
      key,
      body: CONFIRMED,
      headers: { "service-request-id": "revoke-audit" },
    });
    const records = (await s.request("GET", "/v1/audit-records?limit=100")).body.data;
    expect(records.find((r: { action: string }) => r.action === "api_key.revoked")).toMatchObject({
      credential_id: id,
      target: { type: "api_key", id },
      client_request_id: "revoke-audit",
    });
  });
});
