// The contract's "Confirmed action" (`{confirmed: true}`): required on revoking an invitation and on
// POST /me/revoke, accepted (optional) on resending an invitation. A missing or false `confirmed` is
// a 400 pointing at /confirmed, and nothing changes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { invite } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

/** Bodies a caller may send, by name (`undefined`: no body at all). */
const BODIES: [string, unknown][] = [
  ["no body", undefined],
  ["{}", {}],
  ["{confirmed: false}", { confirmed: false }],
  ['{confirmed: "true"}', { confirmed: "true" }],
  ["{confirmed: true}", { confirmed: true }],
];

describe("POST /account/invitations/{id}/revoke needs {confirmed: true}", () => {
  for (const [name, body] of BODIES) {
    const accepted = name === "{confirmed: true}";
    test(`${name}: ${accepted ? "200, revoked" : "400 at /confirmed, still pending"}`, async () => {
      const created = (await invite(s, `revoke-${BODIES.findIndex(([n]) => n === name)}@example.com`)).body;
      const r = await s.request("POST", `/v1/account/invitations/${created.id}/revoke`, { body });
      const listed = async () =>
        (await s.request("GET", "/v1/account/invitations?limit=100")).body.data.some(
          (i: { id: string }) => i.id === created.id,
        );
      if (accepted) {
        expect(r.status).toBe(200);
        expect(r.body.revoked).toBe(true);
        expect(await listed()).toBe(false);
      } else {
        expectProblem(r, 400, "public_invalid_request", ["/confirmed"]);
        expect(await listed()).toBe(true);
      }
    });
  }
});

describe("POST /me/revoke needs {confirmed: true}", () => {
  for (const [name, body] of BODIES) {
    const accepted = name === "{confirmed: true}";
    test(`${name}: ${accepted ? "200, the key is revoked" : "400 at /confirmed, the key still works"}`, async () => {
      const key = await s.createKey({});
      const r = await s.request("POST", "/v1/me/revoke", { key, body });
      if (accepted) {
        expect(r.status).toBe(200);
        expect((await s.request("GET", "/v1/me", { key })).status).toBe(401);
      } else {
        expectProblem(r, 400, "public_invalid_request", ["/confirmed"]);
        expect((await s.request("GET", "/v1/me", { key })).status).toBe(200);
      }
    });
  }
});

describe("POST /account/invitations/{id}/resend accepts {confirmed: true}", () => {
  for (const [name, body] of BODIES) {
    const accepted = name === "no body" || name === "{}" || name === "{confirmed: true}";
    test(`${name}: ${accepted ? "200" : "400 at /confirmed"}`, async () => {
      const created = (await invite(s, `resend-${BODIES.findIndex(([n]) => n === name)}@example.com`)).body;
      const r = await s.request("POST", `/v1/account/invitations/${created.id}/resend`, { body });
      if (accepted) expect(r.status).toBe(200);
      else expectProblem(r, 400, "public_invalid_request", ["/confirmed"]);
    });
  }
});

test("OpenAPI: revoke and /me/revoke require confirmed (constant true), resend lists it as optional", async () => {
  const doc = (await s.request("GET", "/v1/openapi.json")).body;
  const schemaOf = (path: string) => {
    const body = doc.paths[path].post.requestBody;
    const schema = body.content["application/json"].schema;
    return { required: body.required === true, schema: schema.$ref ? resolve(doc, schema.$ref) : schema };
  };
  for (const path of ["/account/invitations/{invitation_id}/revoke", "/me/revoke"]) {
    const { schema } = schemaOf(path);
    expect(schema.required).toEqual(["confirmed"]);
    expect(schema.properties.confirmed.const).toBe(true);
  }
  const resend = schemaOf("/account/invitations/{invitation_id}/resend").schema;
  expect(resend.required ?? []).toEqual([]);
  expect(resend.properties.confirmed.const).toBe(true);
});

function resolve(doc: { components: { schemas: Record<string, unknown> } }, ref: string) {
  return doc.components.schemas[ref.replace("#/components/schemas/", "")] as {
    required?: string[];
    properties: Record<string, { const?: unknown }>;
  };
}
