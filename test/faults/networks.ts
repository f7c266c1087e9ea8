// Three network fakes (Mastodon: idempotent creates; Bluesky and X: not) behind slow proxies, and
// their connection through a running Herald; `copies` counts what each network holds by text.
import { expect } from "bun:test";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { startMastodonFake, type MastodonFake } from "../fakes/mastodon.ts";
import { startXFake, type XFake } from "../fakes/x.ts";
import { slowProxy, type Client } from "./support.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

export interface Networks {
  mastodon: MastodonFake;
  bluesky: BlueskyFake;
  x: XFake;
  /** What every Herald process needs to reach X (its app and origins). */
  env: Record<string, string>;
  /** The origins Herald is given: the proxies in front of the fakes. */
  proxies: Record<"mastodon" | "bluesky" | "x", { origin: string; stop(): Promise<void> }>;
  /** How long the proxies hold answers back (ms); set by the test. */
  answerDelay: { min: number; max: number };
  stop(): Promise<void>;
}

/** Starts the fakes and their proxies; `random` picks each answer's delay. */
export async function startNetworks(random: () => number): Promise<Networks> {
  const mastodon = await startMastodonFake({ mediaProcessingPolls: 0 });
  const bluesky = await startBlueskyFake();
  const x = await startXFake({ processingPolls: 0, tweetsPer15Min: 1_000_000 });
  const answerDelay = { min: 0, max: 0 };
  const delay = () => answerDelay.min + Math.floor(random() * (answerDelay.max - answerDelay.min + 1));
  const proxies = {
    mastodon: slowProxy(mastodon.origin, delay),
    bluesky: slowProxy(bluesky.origin, delay),
    x: slowProxy(x.origin, delay),
  };
  return {
    mastodon,
    bluesky,
    x,
    proxies,
    answerDelay,
    env: {
      HERALD_X_CLIENT_ID: x.clientId,
      HERALD_X_CLIENT_SECRET: x.clientSecret,
      HERALD_X_API_BASE: proxies.x.origin,
      HERALD_X_AUTH_BASE: x.origin,
      // Publishing never waits on a daily cap here (X's documented 2,400 would not bind either).
      HERALD_DAILY_CAP_X: "1000000",
      HERALD_DAILY_CAP_BLUESKY: "1000000",
    },
    async stop() {
      for (const proxy of Object.values(proxies)) await proxy.stop();
      await mastodon.stop();
      await bluesky.stop();
      await x.stop();
    },
  };
}

/** Follows an OAuth authorization URL to Herald's callback (the fakes approve at once). */
async function approve(authorizationUrl: string): Promise<void> {
  const authorize = await fetch(authorizationUrl, { redirect: "manual" });
  expect(authorize.status).toBe(302);
  expect((await returnFromOAuth(authorize.headers.get("location")!)).status).toBe(200);
}

/** Connects the three accounts through the Herald at `baseUrl`; destination ids by channel. */
export async function connectAll(
  n: Networks,
  api: Client,
  workspaceId: string,
  baseUrl: string,
): Promise<Record<"mastodon" | "bluesky" | "x", string>> {
  const { proxies } = n;
  const path = `/workspaces/${workspaceId}/destination-connections`;
  const finish = async (id: string) => {
    const done = await api("GET", `${path}/${id}`);
    expect(done.body.status).toBe("completed");
    return done.body.destination_id as string;
  };
  const mastodon = await api("POST", path, {
    provider: "mastodon",
    instance_origin: proxies.mastodon.origin,
  });
  expect(mastodon.status).toBe(201);
  await approve(mastodon.body.authorization_url);
  n.x.redirectUris.push(`${baseUrl}/oauth/callback/x`);
  const x = await api("POST", path, { provider: "x" });
  expect(x.status).toBe(201);
  await approve(x.body.authorization_url);
  const bluesky = await api("POST", path, {
    provider: "bluesky",
    instance_origin: proxies.bluesky.origin,
    handle: "alice.test",
    app_password: "alice-app-pass",
  });
  expect(bluesky.status).toBe(201);
  return {
    mastodon: await finish(mastodon.body.id),
    x: await finish(x.body.id),
    bluesky: bluesky.body.destination_id,
  };
}

/** How many objects each network holds per text (a text published twice counts 2). */
export function copies(n: Networks): Map<string, number> {
  const texts = [
    ...n.mastodon.statuses.map((s) => s.text),
    ...n.bluesky.records.map((r) => String(r.record.text)),
    ...n.x.tweets.map((t) => t.text),
  ];
  const counts = new Map<string, number>();
  for (const text of texts) counts.set(text, (counts.get(text) ?? 0) + 1);
  return counts;
}
