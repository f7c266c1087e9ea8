// Two `herald serve` processes on one database publish X posts after the access token expired: X's
// refresh tokens are single-use, so exactly one process may refresh; the other waits for the stored
// pair. Every post goes out once, and the fake sees one refresh.
import { expect, test } from "bun:test";
import { startXFake, xFakeEnv } from "../fakes/x.ts";
import {
  apiClient,
  bootstrapCli,
  startHerald,
  tempDataDir,
  waitFor,
  type HeraldProcess,
} from "../posts/engine-helpers.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

const POSTS = 12;

test("a rotated refresh token is used once across two processes; every post is published once", async () => {
  const data = await tempDataDir();
  const fake = await startXFake({ processingPolls: 0 });
  const servers: HeraldProcess[] = [];
  try {
    const env = xFakeEnv(fake);
    const { workspaceId, apiKey } = await bootstrapCli(data);
    servers.push(...(await Promise.all([startHerald(data, env), startHerald(data, env)])));
    for (const server of servers) fake.redirectUris.push(`${server.url}/oauth/callback/x`);
    const apis = servers.map((s) => apiClient(() => s.url, apiKey));

    const started = await apis[0]!("POST", `/workspaces/${workspaceId}/destination-connections`, {
      provider: "x",
    });
    expect(started.status).toBe(201);
    const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
    expect((await returnFromOAuth(authorize.headers.get("location")!)).status).toBe(200);
    const done = await apis[0]!(
      "GET",
      `/workspaces/${workspaceId}/destination-connections/${started.body.id}`,
    );
    expect(done.body.status).toBe("completed");

    // Two hours later: the access token is refused, and both processes are at X at once.
    fake.expireAccessTokens();
    fake.delayMs = 30;
    const refreshesBefore = fake.grants.filter((g) => g.grantType === "refresh_token").length;
    const ids: string[] = [];
    for (let i = 0; i < POSTS; i++) {
      const r = await apis[i % 2]!(
        "POST",
        `/workspaces/${workspaceId}/posts`,
        {
          when: "now",
          confirmed: true,
          group: `rotation-${i}`,
          posts: [{ destination_id: done.body.destination_id, body: [`post ${i} after the expiry`] }],
        },
        { "idempotency-key": `rotation-${i}` },
      );
      expect(r.status).toBe(202);
      ids.push(r.body.posts[0].id);
    }
    const states = await waitFor(
      "every post to finish",
      async () => {
        const found = await Promise.all(
          ids.map(async (id) => (await apis[0]!("GET", `/workspaces/${workspaceId}/posts/${id}`)).body),
        );
        return found.every((p) => p.terminal || p.action_required) ? found : undefined;
      },
      30_000,
      100,
    );
    expect(states.map((p) => p.state)).toEqual(ids.map(() => "published"));
    const refreshes = fake.grants.filter((g) => g.grantType === "refresh_token").length - refreshesBefore;
    expect(refreshes).toBe(1);
    const texts = fake.tweets.map((t) => t.text).filter((t) => t.endsWith("after the expiry"));
    expect(texts.sort()).toEqual(ids.map((_, i) => `post ${i} after the expiry`).sort());
  } finally {
    await Promise.all(servers.map((s) => s.kill()));
    await fake.stop();
    await data.cleanup();
  }
}, 60_000);
