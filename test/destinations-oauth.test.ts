// Connecting through the shared OAuth module: the return page per channel, single-use state, and an
// instance that forgot Herald's app (a reset) is registered with again instead of failing forever.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startMastodonFake, type MastodonFake } from "./fakes/mastodon.ts";
import { expectProblem } from "./helpers/problems.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { systemClock } from "../src/lib/clock.ts";
import { createProviderRegistry } from "../src/providers/registry.ts";
import { returnFromOAuth } from "./helpers/oauth-return.ts";

let s: TestServer;
let fake: MastodonFake;
beforeAll(async () => {
  s = await startTestServer({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  fake = await startMastodonFake({ mediaProcessingPolls: 0 });
});
afterAll(async () => {
  await s.stop();
  await fake.stop();
});

const connections = () => `/v1/workspaces/${s.owner.workspaceId}/destination-connections`;
const start = () =>
  s.request("POST", connections(), { body: { provider: "mastodon", instance_origin: fake.origin } });

/** Follows the authorization URL through the fake's consent redirect to Herald's return page. */
async function authorize(url: string): Promise<Response> {
  const consent = await fetch(url, { redirect: "manual" });
  expect(consent.status).toBe(302);
  return returnFromOAuth(consent.headers.get("location")!);
}

describe("the OAuth return page", () => {
  test("is <origin>/oauth/callback/<channel>, and the state works once", async () => {
    const started = await start();
    expect(started.status).toBe(201);
    const url = new URL(started.body.authorization_url);
    expect(url.searchParams.get("redirect_uri")).toBe(`${s.herald.config.baseUrl}/oauth/callback/mastodon`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    const consent = await fetch(url, { redirect: "manual" });
    const back = consent.headers.get("location")!;
    expect((await fetch(back)).status).toBe(200);
    const again = await fetch(back);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("already used");
  });

  test("a state sent to another channel's return page is refused", async () => {
    const started = await start();
    const consent = await fetch(started.body.authorization_url, { redirect: "manual" });
    const back = new URL(consent.headers.get("location")!);
    const elsewhere = `${s.herald.config.baseUrl}/oauth/callback/bluesky?${back.searchParams}`;
    expect((await fetch(elsewhere)).status).toBe(400);
    expect((await fetch(back)).status).toBe(200);
  });
});

describe("an instance that forgot Herald's app", () => {
  test("is registered with again when a connection starts", async () => {
    expect((await authorize((await start()).body.authorization_url)).status).toBe(200);
    const registered = fake.apps.length;
    fake.apps.length = 0; // the instance was reset
    const started = await start();
    expect(started.status).toBe(201);
    expect(fake.apps.length).toBe(1);
    const clientId = new URL(started.body.authorization_url).searchParams.get("client_id");
    expect(clientId).toBe(fake.apps[0]!.clientId);
    expect(registered).toBeGreaterThan(0);
    expect((await authorize(started.body.authorization_url)).status).toBe(200);
    const done = await s.request("GET", `${connections()}/${started.body.id}`);
    expect(done.body).toMatchObject({ status: "completed" });
  });

  test("when it forgets between start and return, the connection fails and the next one registers again", async () => {
    const started = await start();
    const consent = await fetch(started.body.authorization_url, { redirect: "manual" });
    fake.apps.length = 0; // reset after the user approved, before Herald exchanged the code
    const page = await returnFromOAuth(consent.headers.get("location")!);
    expect(page.status).toBe(400);
    const failed = await s.request("GET", `${connections()}/${started.body.id}`);
    expect(failed.body.status).toBe("failed");
    const next = await start();
    expect(fake.apps.length).toBe(1);
    expect((await authorize(next.body.authorization_url)).status).toBe(200);
  });
});

/** The channels whose adapters connect through Herald's own app (HERALD_<CH>_CLIENT_ID/_SECRET). */
function fixedAppChannels(): string[] {
  const registry = createProviderRegistry({ fetch, clock: systemClock, timeoutMs: 1000, settings: {} });
  return registry.adapters
    .filter((a) => a.connection.kind === "oauth" && a.connection.registration === "fixed-app")
    .map((a) => a.channel);
}

describe("networks connected through Herald's own app", () => {
  test.each(fixedAppChannels())(
    "without HERALD_<CH>_CLIENT_ID/_SECRET connecting %s is a 422 naming both variables",
    async (channel) => {
      const r = await s.request("POST", connections(), { body: { provider: channel } });
      expectProblem(r, 422, "public_provider_app_not_configured", ["/provider"]);
      const prefix = `HERALD_${channel.toUpperCase()}`;
      expect(r.body.detail).toContain(`${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET`);
    },
  );
});
