import { afterAll, beforeAll, expect, test } from "bun:test";
import type { DashboardWorld, TestBrowser } from "../dashboard/support.ts";
import { count } from "../webhooks/helpers.ts";
import { authorizationCode, grantTokens, oauthWorld, registeredClient, tokenRequest } from "./support.ts";

let world: DashboardWorld;
let owner: TestBrowser;
beforeAll(async () => {
  world = await oauthWorld();
  owner = await world.signedIn();
});
afterAll(() => world.stop());

const DAY = 86_400_000;

test("codes go a day after they expire; rotated refresh tokens once no grant they belong to can live", async () => {
  const clientId = await registeredClient(world.s.url);
  const tokens = (await grantTokens(world, owner, clientId)).body;
  const next = await tokenRequest(world.s.url, {
    grant_type: "refresh_token",
    refresh_token: tokens.refresh_token,
    client_id: clientId,
  });
  expect(next.status).toBe(200);
  await authorizationCode(world, owner, clientId);
  const h = world.s.herald;
  const run = async () => {
    await world.s.server.scheduler.runNow("oauth-codes-cleanup");
    await world.s.server.scheduler.runNow("oauth-refresh-tokens-cleanup");
  };

  world.s.clock.advance(DAY - 60_000);
  await run();
  expect(await count(h, "oauth_authorization_codes")).toBe(2);
  world.s.clock.advance(10 * 60_000);
  await run();
  expect(await count(h, "oauth_authorization_codes")).toBe(0);
  expect(await count(h, "oauth_refresh_tokens")).toBe(2);

  world.s.clock.advance(90 * DAY);
  await run();
  // The rotated token is gone; the live one stays with its (now expired) grant.
  expect(await count(h, "oauth_refresh_tokens")).toBe(1);
  expect(await count(h, "oauth_refresh_tokens", "rotated_at IS NULL")).toBe(1);
});
