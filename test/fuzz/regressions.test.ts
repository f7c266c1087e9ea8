// One line per bug the contract fuzzer found (docs/reliability.md, "Contract fuzzing"): the request
// that showed it and what the answer must be now. Runs on both engines (the NUL ones were 500s on
// PostgreSQL only).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectProblem } from "../helpers/problems.ts";
import { operationsOf, ResponseValidator, type Operation } from "./document.ts";
import { violations } from "./checks.ts";
import { send, type SentRequest } from "./send.ts";
import { startWorld, type World } from "./world.ts";

let w: World;
let operations: Operation[];
beforeAll(async () => {
  w = await startWorld();
  operations = operationsOf((await w.s.request("GET", "/v1/openapi.json", { key: null })).body);
});
afterAll(async () => {
  await w?.stop();
});

interface Regression {
  found: string;
  /** The documented operation it belongs to. */
  op: string;
  request: (w: World) => { target: string; headers?: Record<string, string>; body?: string };
  status: number;
  code?: string;
  /** Response headers that must be there. */
  headers?: string[];
}

const json = { "content-type": "application/json" };
const idem = () => ({ ...json, "idempotency-key": `regression-${crypto.randomUUID()}` });
const ws = (w: World) => w.pools.workspace_id![0]!;
const endpoint = (w: World) => `/v1/workspaces/${ws(w)}/webhook-endpoints/${w.pools.endpoint_id![0]}`;

const REGRESSIONS: Regression[] = [
  {
    found: "a NUL (%00) in a path id reached PostgreSQL: 500",
    op: "GET /workspaces/{workspace_id}",
    request: () => ({ target: "/v1/workspaces/%00" }),
    status: 400,
    code: "public_invalid_request",
  },
  {
    found: "a NUL in a query value reached PostgreSQL: 500",
    op: "GET /workspaces/{workspace_id}/posts",
    request: (w) => ({ target: `/v1/workspaces/${ws(w)}/posts?group=a%00b` }),
    status: 400,
    code: "public_invalid_request",
  },
  {
    found: 'a NUL escape in a JSON string ({"name":"a\\u0000b"}) reached PostgreSQL: 500',
    op: "POST /workspaces",
    request: () => ({ target: "/v1/workspaces", headers: idem(), body: '{"name":"a\\u0000b"}' }),
    status: 400,
    code: "public_invalid_request",
  },
  {
    found: "the 202 of a webhook test event had no Retry-After, which the document promises on every 202",
    op: "POST /workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}/test",
    request: (w) => ({ target: `${endpoint(w)}/test`, headers: idem(), body: "{}" }),
    status: 202,
    headers: ["retry-after", "etag"],
  },
  {
    found: "the 202 of a redelivery had no Retry-After",
    op: "POST /workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/redeliver",
    request: (w) => ({
      target: `${endpoint(w)}/deliveries/${w.pools.delivery_id![0]}/redeliver`,
      headers: idem(),
      body: "{}",
    }),
    status: 202,
    headers: ["retry-after"],
  },
  {
    found: "the 202 of an analytics refresh had no Retry-After",
    op: "POST /workspaces/{workspace_id}/analytics/post-groups/{group}/refresh",
    request: (w) => ({
      target: `/v1/workspaces/${ws(w)}/analytics/post-groups/g-now/refresh`,
      headers: json,
      body: "{}",
    }),
    status: 202,
    headers: ["retry-after"],
  },
  {
    found: "a webhook URL whose host does not resolve now is 503, which the document did not declare",
    op: "POST /workspaces/{workspace_id}/webhook-endpoints",
    request: (w) => ({
      target: `/v1/workspaces/${ws(w)}/webhook-endpoints`,
      headers: idem(),
      body: JSON.stringify({
        name: "n",
        url: "https://hooks.example.com/x",
        event_types: ["post.published"],
      }),
    }),
    status: 503,
    code: "public_unavailable",
    headers: ["retry-after"],
  },
  {
    found: "the document promised an ETag on a deletion result, which has no version left to match",
    op: "DELETE /workspaces/{workspace_id}/assets/{asset_id}",
    request: (w) => ({ target: `/v1/workspaces/${ws(w)}/assets/${w.pools.asset_id![0]}`, headers: idem() }),
    status: 200,
  },
  {
    found: "the document promised an ETag on a validation result (post_validation)",
    op: "POST /workspaces/{workspace_id}/posts/validate",
    request: (w) => ({
      target: `/v1/workspaces/${ws(w)}/posts/validate`,
      headers: json,
      body: JSON.stringify({ when: "draft", group: "g", posts: [{ channel: "mastodon", body: ["hi"] }] }),
    }),
    status: 200,
  },
];

describe("bugs the contract fuzzer found stay fixed", () => {
  test.each(REGRESSIONS.map((r) => [r.found, r] as const))("%s", async (_, r) => {
    const op = operations.find((o) => o.name === r.op)!;
    expect(op).toBeDefined();
    const { target, headers = {}, body } = r.request(w);
    const request: SentRequest = {
      method: op.method,
      target,
      headers: { authorization: `Bearer ${w.keys.live}`, ...headers },
      body: body ?? null,
    };
    const answer = (await send(w, request))!;
    expect({ status: answer.status, text: answer.text.slice(0, 500) }).toMatchObject({ status: r.status });
    if (r.code) expectProblem({ ...answer, body: answer.body }, r.status, r.code);
    for (const header of r.headers ?? [])
      expect({ header, value: answer.headers.get(header) }).not.toEqual({ header, value: null });
    // And the answer keeps the whole document: status declared, schema, required headers.
    expect(violations(op, answer, new ResponseValidator())).toEqual([]);
  });
});

test("the document marks the headers every answer carries as required", () => {
  const validate = operations.find((o) => o.name === "POST /workspaces/{workspace_id}/posts/validate")!;
  expect(validate.responses.get(200)!.required).toEqual(["service-request-id"]);
  const get = operations.find((o) => o.name === "GET /workspaces/{workspace_id}")!;
  expect(get.responses.get(200)!.required.sort()).toEqual(["etag", "service-request-id"]);
  expect(get.responses.get(429)!.required.sort()).toEqual(["retry-after", "service-request-id"]);
  expect(get.responses.get(401)!.required.sort()).toEqual(["service-request-id", "www-authenticate"]);
  const connect = operations.find(
    (o) => o.name === "POST /workspaces/{workspace_id}/destination-connections",
  )!;
  expect(connect.responses.get(503)!.required.sort()).toEqual(["retry-after", "service-request-id"]);
});
