// The typed client's checked-in files are what the generator makes from this build's OpenAPI document:
// a change of the API that is not regenerated fails here (and so in CI).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { generateSdkFiles, REPOSITORY_ROOT } from "../../scripts/generate-sdk-types.ts";

test("sdk/openapi.json, sdk/src/schema.ts and sdk/src/operations.ts are up to date", async () => {
  const files = await generateSdkFiles();
  const stale = Object.entries(files)
    .filter(([path, text]) => readFileSync(join(REPOSITORY_ROOT, path), "utf8") !== text)
    .map(([path]) => path);
  if (stale.length > 0)
    throw new Error(`${stale.join(", ")} differ from the OpenAPI document: run npm run sdk:generate`);
  expect(stale).toEqual([]);
});

test("the operations that take an Idempotency-Key include the contract's writes", async () => {
  const { IDEMPOTENT_OPERATIONS } = await import("../../sdk/src/operations.ts");
  for (const name of [
    "POST /workspaces/{workspace_id}/posts",
    "POST /workspaces/{workspace_id}/webhook-endpoints",
    "DELETE /workspaces/{workspace_id}/posts/{post_id}",
    "POST /account/invitations",
  ])
    expect(IDEMPOTENT_OPERATIONS.has(name)).toBe(true);
  expect(IDEMPOTENT_OPERATIONS.has("GET /workspaces")).toBe(false);
});
