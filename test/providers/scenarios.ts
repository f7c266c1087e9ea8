// The scenarios every network adapter passes against its fake: one call per network's test file
// (`adapterScenarios("mastodon", start)`), so a new network proves the same contract as the others.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { runTyped } from "../../src/providers/http.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { createProviderRegistry, NETWORK_RULES } from "../../src/providers/registry.ts";
import type {
  DestinationRef,
  NetworkRules,
  ProviderAdapter,
  PublishItemInput,
} from "../../src/providers/types.ts";
import type { FakeControls } from "../fakes/shared.ts";
import { closedOrigin, expectProviderError, mediaItem, publishFully, publishInput } from "./support.ts";

/** A connected account on a running fake, and what the fake stored. */
export interface ScenarioWorld {
  adapter: ProviderAdapter;
  destination: DestinationRef;
  fake: FakeControls;
  /** A fragment of the create call's path, for `failNext`. */
  createPath: string;
  /** The items the network holds: id, text and the id each replies to. */
  stored(): { id: string; text: string; replyTo: string | null }[];
  stop(): Promise<void>;
}

let counter = 0;
function item(world: ScenarioWorld, over: Partial<PublishItemInput> = {}): PublishItemInput {
  counter += 1;
  return publishInput(world.destination, {
    text: `scenario ${counter}`,
    idempotencyKey: `scenario-${counter}`,
    ...over,
  });
}

/**
 * Runs the shared scenarios for one adapter; `rules` are what its network registers (by default the
 * registry's rules for the channel; a network outside src/ passes its own).
 */
export function adapterScenarios(
  channel: string,
  start: () => Promise<ScenarioWorld>,
  rules: NetworkRules = NETWORK_RULES.find((n) => n.channel === channel)!,
): void {
  describe(`${channel}: shared adapter scenarios`, () => {
    let w: ScenarioWorld;
    beforeAll(async () => {
      w = await start();
    });
    afterAll(async () => {
      await w.stop();
    });

    test("its rules are the registry's rules for the channel", () => {
      expect(w.adapter.channel).toBe(channel);
      const { dailyCap, monthlyPostLimit, supportsThreads, optionsSchema } = w.adapter;
      expect({ dailyCap, monthlyPostLimit, supportsThreads, optionsSchema }).toEqual({
        dailyCap: rules.dailyCap,
        monthlyPostLimit: rules.monthlyPostLimit,
        supportsThreads: rules.supportsThreads,
        optionsSchema: rules.optionsSchema,
      });
    });

    test("publishes an item the network then holds, and a reply to it where threads exist", async () => {
      const first = item(w);
      const published = await publishFully(w.adapter, first);
      expect(published.url).toMatch(/^https?:\/\//);
      expect(w.stored().find((s) => s.id === published.providerObjectId)).toMatchObject({
        text: first.text,
        replyTo: null,
      });
      if (!w.adapter.supportsThreads) return;
      const reply = item(w, { itemIndex: 1, root: published, parent: published });
      const second = await publishFully(w.adapter, reply);
      const held = w.stored();
      expect(held.find((s) => s.id === published.providerObjectId)).toMatchObject({
        text: first.text,
        replyTo: null,
      });
      expect(held.find((s) => s.id === second.providerObjectId)).toMatchObject({
        text: reply.text,
        replyTo: published.providerObjectId,
      });
    });

    test("a 429 is transient and says when to retry", async () => {
      w.fake.failNext(1, { status: 429, path: w.createPath });
      const error = await expectProviderError(w.adapter.publishItem(item(w)), "transient");
      expect(error.retryAt).not.toBeNull();
    });

    test("a 500 on the create call is an unknown outcome unless the create is idempotent", async () => {
      w.fake.failNext(1, { status: 500, path: w.createPath });
      await expectProviderError(
        w.adapter.publishItem(item(w)),
        w.adapter.idempotentCreate ? "transient" : "outcome_unknown",
      );
    });

    test("a 401 asks for a refresh or a new authorization", async () => {
      w.fake.failNext(1, { status: 401, path: w.createPath });
      let kind = "";
      try {
        await w.adapter.publishItem(item(w));
      } catch (error) {
        kind = (error as { kind: string }).kind;
      }
      expect(["auth_expired", "auth_revoked"]).toContain(kind);
    });

    test("an error before anything was sent is typed not_sent, and nothing is on the network", async () => {
      // Both ways a network gets media fail: its bytes, and its public URL (pull-by-URL networks).
      const broken = {
        ...mediaItem({}),
        read: async () => {
          throw new TypeError("bytes went missing");
        },
        publicUrl: () => {
          throw new TypeError("bytes went missing");
        },
      };
      const input = item(w, { media: [broken] });
      const error = await expectProviderError(
        runTyped({ operation: "publish", work: () => w.adapter.publishItem(input) }),
        "not_sent",
      );
      expect(error.message).toContain("bytes went missing");
      expect(w.stored().some((s) => s.text === input.text)).toBe(false);
    });

    test("a network that refuses connections is transient (nothing was sent)", async () => {
      const destination = { ...w.destination, origin: await closedOrigin() };
      await expectProviderError(w.adapter.publishItem(item(w, { destination })), "transient");
    });
  });
}

/** What the registry builds for a channel: how it is connected and how its publishing may be retried. */
export function registeredAs(
  channel: string,
  facts: {
    /** `password`, or the OAuth registration. */
    connection: "password" | "per-instance" | "fixed-app";
    idempotentCreate: boolean;
    pendingChecksRepeatable: boolean;
  },
): void {
  test(`${channel}: the registry builds it, connected and retried as the network documents`, () => {
    const registry = createProviderRegistry({ fetch, clock: systemClock, timeoutMs: 1000, settings: {} });
    const adapter = registry.adapter(channel);
    expect(adapter).not.toBeNull();
    const { connection, idempotentCreate, pendingChecksRepeatable } = adapter!;
    expect({
      connection: connection.kind === "oauth" ? connection.registration : connection.kind,
      idempotentCreate,
      pendingChecksRepeatable,
    }).toEqual(facts);
  });
}
