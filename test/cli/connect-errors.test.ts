// `herald destinations connect` when the instance cannot be reached (issue 26, point 4): one clear
// line at once naming the host and what failed, the message never twice in a line; and when the
// client does wait for a retry, it says so instead of being silent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { closedPort, failed, herald, removeTempDirs, tempDir } from "./helpers.ts";

let s: TestServer;
let env: Record<string, string>;
beforeAll(async () => {
  s = await startTestServer({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  env = {
    HERALD_API_URL: s.url,
    HERALD_API_KEY: s.owner.apiKey,
    HERALD_CONFIG_DIR: join(tempDir(), "config"),
    HERALD_WORKSPACE_ID: s.owner.workspaceId,
  };
});
afterAll(async () => {
  await s.stop();
  removeTempDirs();
});

const REQUEST_ID = "request_id req_[0-9a-z]+";
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const UNREACHABLE_TAIL =
  ". Check the address; if it is right, the server Herald runs on cannot reach it now (DNS, network or firewall).";

/** Runs the command, asserting it ends well under the 90 s the client once spent retrying. */
async function timedConnect(instance: string) {
  const started = Date.now();
  const result = await herald(["destinations", "connect", "mastodon", "--instance", instance], env);
  expect(Date.now() - started).toBeLessThan(10_000);
  return failed(result, 1);
}

describe("an instance that cannot be reached", () => {
  test("a name that does not resolve: one line at once, naming the host and the failure", async () => {
    const line = await timedConnect("https://herald-nxdomain.example.com");
    const host = "herald-nxdomain.example.com";
    expect(line).toMatch(
      new RegExp(
        `^herald: Herald could not reach ${escape(host)}: its name does not resolve \\((ENOTFOUND|EAI_AGAIN)\\)` +
          `${escape(UNREACHABLE_TAIL)} \\[public_provider_unreachable, ${REQUEST_ID}\\]$`,
      ),
    );
  });

  test("a refused port: one line at once", async () => {
    const port = await closedPort();
    const line = await timedConnect(`http://127.0.0.1:${port}`);
    const detail = `Herald could not reach 127.0.0.1:${port}: the connection was refused (ECONNREFUSED)`;
    expect(line).toMatch(
      new RegExp(
        `^herald: ${escape(detail + UNREACHABLE_TAIL)} \\[public_provider_unreachable, ${REQUEST_ID}\\]$`,
      ),
    );
  });

  test("a reserved name (.invalid) is refused as invalid, the field error not repeated after the detail", async () => {
    const line = await timedConnect("https://mastodon.invalid");
    const detail =
      "`instance_origin` host mastodon.invalid cannot exist: .invalid is a reserved top-level domain that never " +
      "resolves publicly.";
    expect(line).toMatch(
      new RegExp(`^herald: ${escape(detail)} \\[public_invalid_request, ${REQUEST_ID}\\]$`),
    );
  });
});

test("a network app the operator has not configured: the settings to set, said once", async () => {
  const r = await herald(["destinations", "connect", "x"], env);
  const detail =
    "Connecting X needs Herald's own app on X, and this server has none yet: its operator must set " +
    "HERALD_X_CLIENT_ID and HERALD_X_CLIENT_SECRET (docs/networks.md) and restart Herald.";
  expect(failed(r, 1)).toMatch(
    new RegExp(`^herald: ${escape(detail)} \\[public_provider_app_not_configured, ${REQUEST_ID}\\]$`),
  );
});

/**
 * Runs `herald destinations list` against a stand-in API whose `answer` sees each request's number
 * (from 1); the result and how many requests the client made.
 */
async function listAgainst(answer: (call: number) => Response) {
  let calls = 0;
  const api = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => answer(++calls) });
  try {
    const result = await herald(["destinations", "list", "--workspace", "ws_1"], {
      ...env,
      HERALD_API_URL: `http://127.0.0.1:${api.port}`,
    });
    return { result, calls };
  } finally {
    await api.stop(true);
  }
}

describe("a wait before trying again", () => {
  test("is said on stderr: what the server answered and when the next try goes out", async () => {
    const { result, calls } = await listAgainst((call) => {
      if (call > 1) return Response.json({ object: "list", data: [], has_more: false, next_cursor: null });
      const problem = { code: "public_unavailable", detail: "Busy.", retryable: true, request_id: "req_1" };
      return Response.json(problem, { status: 503, headers: { "retry-after": "2" } });
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("No destinations in ws_1");
    expect(result.stderr).toBe(
      "Busy. [public_unavailable, request_id req_1]\nTrying again in 2 s (2 of 4 tries)…\n",
    );
    expect(calls).toBe(2);
  });

  test("a problem Herald calls not retryable is not sent again", async () => {
    const { result, calls } = await listAgainst(() => {
      const problem = { code: "public_provider_error", detail: "No.", retryable: false, request_id: "req_2" };
      return Response.json(problem, { status: 502 });
    });
    expect(failed(result, 1)).toBe("herald: No. [public_provider_error, request_id req_2]");
    expect(calls).toBe(1);
  });
});
