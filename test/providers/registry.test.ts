import { expect, test } from "bun:test";
import { systemClock } from "../../src/lib/clock.ts";
import { createProviderRegistry, NETWORK_RULES } from "../../src/providers/registry.ts";
import { CHANNELS, type Channel } from "../../src/providers/types.ts";

test("the registry has the five networks that publish, in the contract's order; null for the others", () => {
  const registry = createProviderRegistry({ fetch, clock: systemClock, timeoutMs: 1000, apps: {} });
  const publishing: Channel[] = ["bluesky", "threads", "mastodon", "x", "linkedin"];
  expect(registry.adapters.map((a) => a.channel)).toEqual(publishing);
  expect(CHANNELS.filter((c) => registry.adapter(c) !== null)).toEqual(publishing);
  const facts = registry.adapters.map((a) => [
    a.channel,
    a.idempotentCreate,
    a.connection.kind === "oauth" ? a.connection.registration : a.connection.kind,
  ]);
  // Only Mastodon's create call honours an idempotency key; the new three use Herald's own apps.
  expect(facts).toEqual([
    ["bluesky", false, "password"],
    ["threads", false, "fixed-app"],
    ["mastodon", true, "per-instance"],
    ["x", false, "fixed-app"],
    ["linkedin", false, "fixed-app"],
  ]);
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
