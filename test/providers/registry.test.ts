import { expect, test } from "bun:test";
import { systemClock } from "../../src/lib/clock.ts";
import { createProviderRegistry, NETWORK_RULES } from "../../src/providers/registry.ts";
import { CHANNELS } from "../../src/providers/types.ts";

test("the registry has Mastodon and Bluesky and answers null for every other channel", () => {
  const registry = createProviderRegistry({ fetch, clock: systemClock, timeoutMs: 1000, apps: {} });
  expect(registry.adapters.map((a) => a.channel)).toEqual(["bluesky", "mastodon"]);
  expect(CHANNELS.filter((c) => registry.adapter(c) !== null)).toEqual(["bluesky", "mastodon"]);
  const [bluesky, mastodon] = registry.adapters;
  expect([mastodon!.idempotentCreate, bluesky!.idempotentCreate]).toEqual([true, false]);
  expect([mastodon!.connection.kind, bluesky!.connection.kind]).toEqual(["oauth", "password"]);
});

test("every channel of the contract has rules, once, in the contract's order", () => {
  expect(NETWORK_RULES.map((n) => n.channel)).toEqual([...CHANNELS]);
  const registry = createProviderRegistry({ fetch, clock: systemClock, timeoutMs: 1000, apps: {} });
  // An adapter carries the same rules the static list has (schemas and caps derive from the list).
  for (const adapter of registry.adapters) {
    const rules = NETWORK_RULES.find((n) => n.channel === adapter.channel)!;
    expect([adapter.dailyCap, adapter.supportsThreads, adapter.optionsSchema]).toEqual([
      rules.dailyCap,
      rules.supportsThreads,
      rules.optionsSchema,
    ]);
  }
});
