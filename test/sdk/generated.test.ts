// The typed client's checked-in files are what the generator makes from this build's OpenAPI document:
// a change of the API that is not regenerated fails here (and so in CI).
import { expect, test } from "bun:test";
import { join } from "node:path";
import { IDEMPOTENT_OPERATIONS } from "../../sdk/src/operations.ts";

const root = join(import.meta.dir, "..", "..");

test("sdk/openapi.json, sdk/src/schema.ts and sdk/src/operations.ts are up to date", async () => {
  // In a fresh process: the document of a process that has served requests can differ (see the script).
  const check = Bun.spawn([process.execPath, join(root, "scripts", "generate-sdk-types.ts"), "--check"], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stderr, code] = await Promise.all([new Response(check.stderr).text(), check.exited]);
  expect(stderr).toBe("");
  expect(code).toBe(0);
});

test("the operations that take an Idempotency-Key include the contract's writes", () => {
  for (const name of [
    "POST /workspaces/{workspace_id}/posts",
    "POST /workspaces/{workspace_id}/webhook-endpoints",
    "DELETE /workspaces/{workspace_id}/posts/{post_id}",
    "POST /account/invitations",
  ])
    expect(IDEMPOTENT_OPERATIONS.has(name)).toBe(true);
  expect(IDEMPOTENT_OPERATIONS.has("GET /workspaces")).toBe(false);
});
