// No secret in any log line: the scenario of secrets-scenario.ts (password signup, session, API keys
// from the dashboard and the admin CLI, provider OAuth and app-password connections and their
// tokens, webhook secret and rotation, device authorization, invitation, signed URLs, publishing)
// runs against a test server (memory logger) and against a `herald serve` process (its stderr), then
// every line is searched for every secret. About 8 s (the process waits out the 5 s poll interval).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { engineOf } from "../../src/db/engine.ts";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { startMastodonFake, type MastodonFake } from "../fakes/mastodon.ts";
import { startTestServer } from "../helpers/server.ts";
import { bootstrapCli, openShared, startHerald, tempDataDir, waitFor } from "../posts/engine-helpers.ts";
import { runWebhooks, startReceiver, type Receiver } from "../webhooks/helpers.ts";
import { leaks, runSecretsScenario } from "./secrets-scenario.ts";

const ENV = {
  HERALD_SIGNUP_CONFIRM_EMAIL: "off",
  HERALD_SIGNUP_REQUESTS_PER_HOUR: "1000",
  HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
};

let mastodon: MastodonFake;
let bluesky: BlueskyFake;
let receiver: Receiver;
beforeAll(async () => {
  mastodon = await startMastodonFake({ mediaProcessingPolls: 0 });
  bluesky = await startBlueskyFake();
  receiver = startReceiver();
});
afterAll(async () => {
  await mastodon.stop();
  await bluesky.stop();
  await receiver.stop();
});

/** What the scenario must have collected (provider tokens and client secrets come on top). */
const SECRET_KINDS = [
  "password",
  "signup_token",
  "session",
  "dashboard_key",
  "admin_key",
  "oauth_code",
  "bluesky_app_password",
  "webhook_secret",
  "webhook_secret_rotated",
  "device_secret",
  "device_key",
  "invitation_token",
  "download_signature",
  "provider_token_0",
  "mastodon_client_secret_0",
];

describe("logs hold no secrets", () => {
  test("a test server's structured log (memory logger)", async () => {
    const s = await startTestServer({ env: ENV });
    try {
      const config = s.herald.config;
      const secrets = await runSecretsScenario({
        url: s.url,
        adminEnv: {
          HERALD_DATA_DIR: s.dataDir,
          HERALD_DATABASE_URL: config.databaseUrl ?? "",
          HERALD_SECRET_KEY: config.secretKey ?? "",
        },
        wait: async (ms) => s.clock.advance(ms),
        settle: async () => {
          await s.server.engine.runUntilIdle();
          await runWebhooks(s.server);
          await s.server.scheduler.runNow("mail-outbox");
        },
        mastodon,
        bluesky,
        receiverUrl: receiver.url,
      });
      expect(Object.keys(secrets)).toEqual(expect.arrayContaining(SECRET_KINDS));
      expect(s.logs.length).toBeGreaterThan(20);
      expect(leaks(s.logs, secrets)).toEqual([]);
      // The search itself finds a secret when one is there.
      expect(leaks([...s.logs, `{"token":"${secrets.device_secret}"}`], secrets)).toHaveLength(1);
    } finally {
      await s.stop();
    }
  }, 30_000);

  test("a herald serve process's stderr", async () => {
    const data = await tempDataDir();
    const db = await openShared(data);
    try {
      await bootstrapCli(data); // the first account; the scenario signs up another
      const server = await startHerald(data, ENV);
      const published = mastodon.statuses.length;
      const secrets = await runSecretsScenario({
        url: server.url,
        adminEnv: data.env,
        wait: (ms) => Bun.sleep(ms),
        settle: async () => {
          await waitFor("the post published", () =>
            mastodon.statuses.length > published ? true : undefined,
          );
          await waitFor("a webhook delivery", () => (receiver.received.length > 0 ? true : undefined));
        },
        mastodon,
        bluesky,
        receiverUrl: receiver.url,
      });
      await server.kill("SIGTERM");
      const lines = server.log().split("\n");
      expect(lines.filter((l) => l.startsWith("{")).length).toBeGreaterThan(20);
      expect(leaks(lines, secrets)).toEqual([]);
    } finally {
      await engineOf(db).close();
      await data.cleanup();
    }
  }, 40_000);
});
