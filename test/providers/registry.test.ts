import { expect, test } from "bun:test";
import { systemClock } from "../../src/lib/clock.ts";
import { createProviderRegistry } from "../../src/providers/registry.ts";
import { CHANNELS } from "../../src/providers/types.ts";

test("the registry has Mastodon and Bluesky and answers null for every other channel", () => {
  const registry = createProviderRegistry({ fetch, clock: systemClock, timeoutMs: 1000 });
  expect(registry.adapter("mastodon")).toBe(registry.mastodon);
  expect(registry.adapter("bluesky")).toBe(registry.bluesky);
  expect(CHANNELS.filter((c) => registry.adapter(c) !== null)).toEqual(["bluesky", "mastodon"]);
  expect([registry.mastodon.idempotentCreate, registry.bluesky.idempotentCreate]).toEqual([true, false]);
});
