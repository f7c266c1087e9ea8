// Chat notifications from the engine's own writes: a post whose destination's grant was revoked goes
// to needs-attention and the destination to reauthorization_required, each writing its outbox event
// in the transaction of the change; the chat job posts both to the Slack fake.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSlackFake, type SlackFake } from "../fakes/slack.ts";
import { destinationOf, type EngineWorld, publish, startEngineWorld } from "../posts/engine-helpers.ts";

let slack: SlackFake;
let w: EngineWorld;
beforeAll(async () => {
  slack = startSlackFake();
  w = await startEngineWorld({
    HERALD_PROVIDER_TIMEOUT_SECONDS: "1",
    HERALD_SLACK_BOT_TOKEN: slack.token,
    HERALD_SLACK_API_BASE: slack.origin,
  });
});
afterAll(async () => {
  await w.stop();
  await slack.stop();
});

test("a revoked grant: needs-attention and the destination's reauthorization are posted", async () => {
  const settings = await w.s.request("PATCH", `/v1/workspaces/${w.ws}/chat-notifications`, {
    body: { chat_channel_id: "C0HERALD01", enabled: true },
  });
  expect(settings.body.active).toBe(true);
  const dest = destinationOf(w, "mastodon");
  w.mastodon.revokeTokens();
  const created = await publish(w, dest, ["this will not go out"]);
  await w.s.server.engine.runUntilIdle();
  await w.s.server.scheduler.runNow("chat-notifications");
  const texts = slack.messages.map((m) => m.text);
  expect(texts.length).toBe(2);
  expect(texts[0]).toContain("A mastodon post needs attention in *Test workspace*");
  expect(texts[0]).toContain(`/dashboard/workspaces/${w.ws}/posts/${created.id}|Open the post>`);
  expect(texts[1]).toContain("The mastodon destination");
  expect(texts[1]).toContain("must be connected again");
  expect(slack.messages.every((m) => m.channel === "C0HERALD01")).toBe(true);
  // The webhooks' fan-out still sees the same events (each has its own mark).
  await w.s.server.scheduler.runNow("webhook-dispatch");
  await w.s.server.scheduler.runNow("chat-notifications");
  expect(slack.messages.length).toBe(2);
});
