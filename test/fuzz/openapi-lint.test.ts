// Lints Herald's OpenAPI document with Redocly's rules (@redocly/openapi-core, the library under
// Redocly CLI's `lint`; offline: the document and every rule are local). A rule turned off or
// configured here says why.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
let source: string;
beforeAll(async () => {
  s = await startTestServer();
  source = (await s.request("GET", "/v1/openapi.json", { key: null })).text;
});
afterAll(async () => {
  await s.stop();
});

/** Redocly's strict recommended set plus rules it leaves out, each an error. */
const RULES = {
  // The document names its license (info.license, with an SPDX identifier) and describes every operation.
  "info-license": "error",
  "info-license-strict": "error",
  "operation-description": "error",
  "operation-tag-defined": "error",
  "parameter-description": "error",
  "operation-4xx-problem-details-rfc7807": "error",
  // JSON for answers, problem+json for errors (test/openapi.test.ts checks which goes where).
  "response-mime-type": {
    severity: "error",
    allowedValues: ["application/json", "application/problem+json"],
  },
  "request-mime-type": { severity: "error", allowedValues: ["application/json"] },
  "tags-alphabetical": "off",
  // The contract's paths: `/account`, `/me` and a workspace's `/queue` are singletons, and `posts`
  // (the resource) is no HTTP verb; changing them would break the contract.
  "path-segment-plural": "off",
  "no-http-verbs-in-paths": "off",
} as const;

test("the OpenAPI document passes Redocly's lint (recommended-strict and more)", async () => {
  const config = await createConfig({ extends: ["recommended-strict"], rules: RULES } as never);
  const problems = await lintFromString({ source, absoluteRef: "openapi.json", config });
  const found = problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
  expect(found.slice(0, 30)).toEqual([]);
});
