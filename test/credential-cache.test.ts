// Each process keeps a key's credential for at most half a second (src/modules/keys/credential-cache.ts).
// Two `herald serve` processes on one database (on SQLite, one data directory): a key revoked through
// one is refused there at once, and by the other once its window has passed.
import { expect, test } from "bun:test";
import { CREDENTIAL_TTL_MS } from "../src/modules/keys/credential-cache.ts";
import { expectProblem } from "./helpers/problems.ts";
import type { TestResponse } from "./helpers/server.ts";
import { bootstrapCli, startHerald, tempDataDir, type HeraldProcess } from "./posts/engine-helpers.ts";

async function call(origin: string, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${origin}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, body: text ? JSON.parse(text) : null, headers: response.headers };
}

function expectRevoked(response: TestResponse): void {
  expectProblem(response, 401, "public_authentication_required");
  expect(response.body.detail).toBe("The API key has been revoked.");
  expect(response.headers.get("www-authenticate")).toStartWith("Bearer");
}

test("a key revoked in one process is refused there at once and in the other within a second", async () => {
  const data = await tempDataDir();
  const servers: HeraldProcess[] = [];
  try {
    const { workspaceId, apiKey } = await bootstrapCli(data);
    servers.push(...(await Promise.all([startHerald(data), startHerald(data)])));
    const [a, b] = servers.map((s) => s.url) as [string, string];
    // Both processes have just read the key: with the workspace, and without one.
    for (const origin of [a, b]) {
      expect((await call(origin, apiKey, "GET", `/workspaces/${workspaceId}`)).status).toBe(200);
      expect((await call(origin, apiKey, "GET", "/me")).status).toBe(200);
    }

    const revoked = await call(a, apiKey, "POST", "/me/revoke", { confirmed: true });
    expect(revoked.status).toBe(200);
    // The process that revoked it forgets the credential on commit.
    expectRevoked(await call(a, apiKey, "GET", `/workspaces/${workspaceId}`));
    expectRevoked(await call(a, apiKey, "GET", "/me"));

    // The other reads it again once its window has passed (well within the second allowed).
    await Bun.sleep(CREDENTIAL_TTL_MS + 100);
    expectRevoked(await call(b, apiKey, "GET", `/workspaces/${workspaceId}`));
    expectRevoked(await call(b, apiKey, "GET", "/me"));
    expectRevoked(await call(b, apiKey, "POST", `/workspaces/${workspaceId}/posts`, { when: "draft" }));
  } catch (error) {
    for (const s of servers) console.error(s.log());
    throw error;
  } finally {
    for (const s of servers) await s.kill();
    await data.cleanup();
  }
}, 60_000);
