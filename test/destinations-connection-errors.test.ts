// Connecting an account says what failed (issue 26, points 4 and 7): the way to the instance or PDS
// (a name that does not resolve, a refused port: 502 public_provider_unreachable at once, not
// retryable), credentials the network refused (422 public_provider_credentials_refused), an instance
// that refused Herald's app (502 public_provider_error), and a network app the operator has not
// configured (422 public_provider_app_not_configured naming the settings), each with its own title.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startBlueskyFake, type BlueskyFake } from "./fakes/bluesky.ts";
import { closedPort } from "./cli/helpers.ts";
import { expectProblem } from "./helpers/problems.ts";
import { startTestServer, type TestResponse, type TestServer } from "./helpers/server.ts";

/** A name under example.com: reserved (RFC 2606) and without a wildcard, so it never resolves. */
const NOWHERE = "herald-nxdomain.example.com";
const UNRESOLVED = /^its name does not resolve \((ENOTFOUND|EAI_AGAIN)\)$/;

let s: TestServer;
let bluesky: BlueskyFake;
let notMastodon: ReturnType<typeof Bun.serve>;
beforeAll(async () => {
  // Bluesky's default PDS is a name that does not resolve: the path without instance_origin.
  s = await startTestServer({
    env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1", HERALD_BLUESKY_API_BASE: `https://${NOWHERE}` },
  });
  bluesky = await startBlueskyFake();
  notMastodon = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response("no", { status: 404 }),
  });
});
afterAll(async () => {
  await s.stop();
  await bluesky.stop();
  await notMastodon.stop(true);
});

const connect = (body: Record<string, string>) =>
  s.request("POST", `/v1/workspaces/${s.owner.workspaceId}/destination-connections`, { body });

/** An unreachable instance or PDS: said at once, naming the host and what failed, never retryable. */
function expectUnreachable(r: TestResponse, host: string, reason: string | RegExp): void {
  expectProblem(r, 502, "public_provider_unreachable", ["/instance_origin"]);
  expect(r.body).toMatchObject({ title: "Network unreachable", retryable: false, category: "provider" });
  expect(r.body.retry).toEqual({ safety: "not_retryable", after: null });
  expect(r.headers.get("retry-after")).toBeNull();
  const [, said] =
    /^Herald could not reach ([^:]+(?::\d+)?): (.*)\. Check the address; /.exec(r.body.detail) ?? [];
  expect(said).toBe(host);
  const reasonSaid = r.body.detail.slice(`Herald could not reach ${host}: `.length).split(". Check")[0];
  if (typeof reason === "string") expect(reasonSaid).toBe(reason);
  else expect(reasonSaid).toMatch(reason);
  expect(r.body.detail).toEndWith(
    "the server Herald runs on cannot reach it now (DNS, network or firewall).",
  );
  expect(r.body.errors[0].detail).toBe(`${host}: ${reasonSaid}`);
}

describe("the way to the network failed", () => {
  test("a Mastodon instance whose name does not resolve: 502 at once, naming the host", async () => {
    const started = Date.now();
    const r = await connect({ provider: "mastodon", instance_origin: `https://${NOWHERE}` });
    expect(Date.now() - started).toBeLessThan(5_000);
    expectUnreachable(r, NOWHERE, UNRESOLVED);
  });

  test("a Mastodon instance that refuses the connection", async () => {
    const port = await closedPort();
    const r = await connect({ provider: "mastodon", instance_origin: `http://127.0.0.1:${port}` });
    expectUnreachable(r, `127.0.0.1:${port}`, "the connection was refused (ECONNREFUSED)");
  });

  test("a Bluesky PDS whose name does not resolve is not blamed on the app password", async () => {
    const r = await connect({
      provider: "bluesky",
      instance_origin: `https://pds.${NOWHERE}`,
      handle: "alice.test",
      app_password: "alice-app-pass",
    });
    expectUnreachable(r, `pds.${NOWHERE}`, UNRESOLVED);
  });

  test("Bluesky's default PDS (HERALD_BLUESKY_API_BASE) not resolving: the same, from the network call", async () => {
    const r = await connect({ provider: "bluesky", handle: "alice.test", app_password: "alice-app-pass" });
    expectUnreachable(r, NOWHERE, UNRESOLVED);
  });

  test("a Bluesky PDS that refuses the connection", async () => {
    const port = await closedPort();
    const r = await connect({
      provider: "bluesky",
      instance_origin: `http://127.0.0.1:${port}`,
      handle: "alice.test",
      app_password: "alice-app-pass",
    });
    expectUnreachable(r, `127.0.0.1:${port}`, "the connection was refused (ECONNREFUSED)");
  });
});

describe("the network answered", () => {
  test("a wrong app password: 422 public_provider_credentials_refused at /app_password", async () => {
    const r = await connect({
      provider: "bluesky",
      instance_origin: bluesky.origin,
      handle: "alice.test",
      app_password: "not-the-password",
    });
    expectProblem(r, 422, "public_provider_credentials_refused", ["/app_password"]);
    const host = new URL(bluesky.origin).host;
    expect(r.body.title).toBe("Credentials refused by the network");
    expect(r.body.detail).toBe(
      `${host} refused the handle and app password: Invalid identifier or password (HTTP 401)`,
    );
  });

  test("the right app password connects (the same origin, so the failures above were not the fake's)", async () => {
    const r = await connect({
      provider: "bluesky",
      instance_origin: bluesky.origin,
      handle: "alice.test",
      app_password: "alice-app-pass",
    });
    expect(r.status).toBe(201);
    expect(r.body.status).toBe("completed");
  });

  test("a server that is no Mastodon instance refuses Herald's app: 502 public_provider_error, not retryable", async () => {
    const origin = `http://127.0.0.1:${notMastodon.port}`;
    const r = await connect({ provider: "mastodon", instance_origin: origin });
    expectProblem(r, 502, "public_provider_error", ["/instance_origin"]);
    expect(r.body.retryable).toBe(false);
    expect(r.body.detail).toBe(
      `127.0.0.1:${notMastodon.port} refused to register Herald's app: POST /api/v1/apps failed with ` +
        "HTTP 404. Check that the address is the instance's.",
    );
  });
});

describe("a network app the operator has not configured", () => {
  test("X without HERALD_X_CLIENT_ID/_SECRET: its own title, naming both settings", async () => {
    const r = await connect({ provider: "x" });
    expectProblem(r, 422, "public_provider_app_not_configured", ["/provider"]);
    expect(r.body).toMatchObject({
      title: "Network app not configured",
      category: "configuration",
      user_action: "contact_operator",
    });
    expect(r.body.detail).toBe(
      "Connecting X needs Herald's own app on X, and this server has none yet: its operator must set " +
        "HERALD_X_CLIENT_ID and HERALD_X_CLIENT_SECRET (docs/networks.md) and restart Herald.",
    );
    expect(r.body.errors[0]).toMatchObject({ code: "app_not_configured" });
  });
});
