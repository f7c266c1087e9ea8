// Example Social's adapter through the scenarios every network's adapter passes.
import type { DestinationRef, PasswordAdapter } from "../../src/providers/types.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { adapterScenarios } from "../providers/scenarios.ts";
import { EXAMPLE_NETWORK, EXAMPLE_RULES } from "./adapter.ts";
import { startExampleFake } from "./fake.ts";

adapterScenarios(
  "example",
  async () => {
    const fake = await startExampleFake();
    const adapter = EXAMPLE_NETWORK.create({ fetch, clock: systemClock, timeoutMs: 2000, apps: {} });
    const account = await (adapter as PasswordAdapter).connectWithPassword({
      origin: fake.origin,
      identifier: "ada.example",
      password: "ada-app-pass",
    });
    const destination: DestinationRef = {
      origin: fake.origin,
      externalId: account.externalId,
      handle: account.handle,
      credentials: account.credentials,
      limits: account.limits,
    };
    return {
      adapter,
      destination,
      fake,
      createPath: "/v1/posts",
      stored: () => fake.posts.map((p) => ({ id: p.id, text: p.text, replyTo: p.replyTo })),
      stop: () => fake.stop(),
    };
  },
  EXAMPLE_RULES,
);
