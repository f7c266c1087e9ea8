import { expect, test } from "bun:test";
import { systemClock } from "../../src/lib/clock.ts";
import { createProviderRegistry, NETWORK_RULES } from "../../src/providers/registry.ts";
import { CHANNELS } from "../../src/providers/types.ts";

// Each network's own facts (connection, retries) are checked in its test: registeredAs in scenarios.ts.
test("the registry has an adapter for every channel of the contract, in its order", () => {
  const registry = createProviderRegistry({ fetch, clock: systemClock, timeoutMs: 1000, settings: {} });
  expect(registry.adapters.map((a) => a.channel)).toEqual([...CHANNELS]);
});

test("every channel of the contract has rules, once, in the contract's order", () => {
  expect(NETWORK_RULES.map((n) => n.channel)).toEqual([...CHANNELS]);
  const registry = createProviderRegistry({ fetch, clock: systemClock, timeoutMs: 1000, settings: {} });
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
