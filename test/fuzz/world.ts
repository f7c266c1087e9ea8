// The live server the fuzzer talks to, with real resources made beforehand through the API (a second
// workspace, destinations on the Mastodon and Bluesky fakes, posts, an asset, an upload, a webhook
// endpoint and a delivery, an invitation), the keys it sends, and nothing that can leave this machine.
import { expect } from "bun:test";
import { isLoopbackAddress } from "../../src/lib/network-guard.ts";
import { setWebhookTransport } from "../../src/modules/webhooks/transport.ts";
import { png } from "../assets/samples.ts";
import {
  assetsApi,
  completeBody,
  planUpload,
  sendAllParts,
  uploadAsset,
  uploadBody,
} from "../assets/helpers.ts";
import { startBlueskyFake, type BlueskyFake } from "../fakes/bluesky.ts";
import { startMastodonFake, type MastodonFake } from "../fakes/mastodon.ts";
import { startTestServer, type TestResponse, type TestServer } from "../helpers/server.ts";
import { connectMastodon } from "../posts/helpers.ts";
import { mustCreateEndpoint, startReceiver, type Receiver } from "../webhooks/helpers.ts";

/** Who a request claims to be. */
export type KeyKind = "live" | "test" | "none" | "other-account" | "narrow" | "malformed";

/** The server, its fakes, the keys and the ids of real resources by path parameter name. */
export interface World {
  s: TestServer;
  mastodon: MastodonFake;
  bluesky: BlueskyFake;
  receiver: Receiver;
  keys: { live: string; test: string; otherAccount: string; narrow: string };
  /** Real ids by the path parameter (or field) they fill: `workspace_id`, `post_id`, … */
  pools: Record<string, string[]>;
  /** Valid bodies that need real bytes behind them: an upload to start, one to complete. */
  bodies: { upload: unknown; complete: unknown };
  stop(): Promise<void>;
}

/** Only loopback hosts: a fuzzed origin must never make Herald dial out of this machine. */
function loopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "");
  return bare === "localhost" || (/^[\d.:a-f]+$/i.test(bare) && isLoopbackAddress(bare));
}

const loopbackFetch = ((input: string | URL | Request, init?: RequestInit) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  if (!loopbackHost(url.hostname)) return Promise.reject(new TypeError(`fuzz: ${url.host} is not loopback`));
  return fetch(input, init);
}) as typeof fetch;

function must(r: TestResponse, status: number): any {
  expect({ status: r.status, text: r.text.slice(0, 1000) }).toMatchObject({ status });
  return r.body;
}

/** Starts the server and its fakes and makes the resources. */
export async function startWorld(): Promise<World> {
  const mastodon = await startMastodonFake({ mediaProcessingPolls: 0 });
  const bluesky = await startBlueskyFake();
  const receiver = startReceiver();
  const s = await startTestServer({
    fetch: loopbackFetch,
    env: {
      HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
      HERALD_MASTODON_API_BASE: mastodon.origin,
      HERALD_MASTODON_AUTH_BASE: mastodon.origin,
      HERALD_BLUESKY_API_BASE: bluesky.origin,
      HERALD_BLUESKY_AUTH_BASE: bluesky.origin,
      // Thousands of requests a minute from one key and one address: the limits are not under test here.
      HERALD_RATE_LIMIT_PER_MINUTE: "1000000",
      HERALD_AUTH_FAILURES_PER_MINUTE: "1000000",
      HERALD_SIGNUP_REQUESTS_PER_HOUR: "1000000",
      HERALD_ACCESS_LOG: "0",
    },
  });
  // Webhook URLs are resolved by a stub: loopback names only, every other name does not exist.
  setWebhookTransport(s.herald, {
    resolve: async (host) => {
      if (loopbackHost(host)) return ["127.0.0.1"];
      throw Object.assign(new Error(`fuzz: ${host} is not resolved`), { code: "ENOTFOUND" });
    },
    fetch: (input, init) => loopbackFetch(input, init),
  });
  const ws = s.owner.workspaceId;
  const base = `/v1/workspaces/${ws}`;
  const idem = (n: string) => ({ "idempotency-key": `fuzz-setup-${n}` });

  const ws2 = must(await s.request("POST", "/v1/workspaces", { body: { name: "Second" } }), 201).id;
  const mastodonDest = await connectMastodon(s, mastodon);
  const connection = must(
    await s.request("POST", `${base}/destination-connections`, {
      body: {
        provider: "bluesky",
        instance_origin: bluesky.origin,
        handle: "alice.test",
        app_password: "alice-app-pass",
      },
    }),
    201,
  );
  const blueskyDest = connection.destination_id as string;
  const post = (when: string, group: string, destination: string) =>
    s.request("POST", `${base}/posts`, {
      headers: idem(group),
      body: {
        when,
        confirmed: true,
        group,
        posts: [{ destination_id: destination, body: [`Hello ${group}`] }],
      },
    });
  const draft = must(await post("draft", "g-draft", mastodonDest), 201).posts[0].id;
  const scheduled = must(await post("2026-03-05T09:00:00Z", "g-scheduled", blueskyDest), 201).posts[0].id;
  const published = must(await post("now", "g-now", mastodonDest), 202).posts[0].id;
  await s.server.engine.runUntilIdle();
  // A post the network refuses: something for retry to act on.
  mastodon.failNext(1, { status: 422, path: "/api/v1/statuses" });
  const failed = must(await post("now", "g-failed", mastodonDest), 202).posts[0].id;
  await s.server.engine.runUntilIdle();
  const asset = await uploadAsset(s, ws, png(64, 48));
  const plan = await planUpload(png(32, 32));
  const upload = must(await assetsApi(s, ws).start(uploadBody(plan)), 201).id;
  // Every part sent, not completed: the fuzzer's completion can succeed.
  const sent = must(await assetsApi(s, ws).start(uploadBody(plan)), 201);
  const complete = completeBody(plan, await sendAllParts(sent, plan));
  const device = must(
    await s.request("POST", "/v1/cli-authorizations", { key: null, body: { device_name: "fuzz" } }),
    201,
  );
  const endpoint = await mustCreateEndpoint(s, { url: receiver.url });
  const delivery = must(
    await s.request("POST", `${base}/webhook-endpoints/${endpoint.id}/test`, { headers: idem("test") }),
    202,
  ).id;
  const invitation = must(
    await s.request("POST", "/v1/account/invitations", {
      headers: idem("inv"),
      body: { email: "guest@example.com" },
    }),
    201,
  ).id;
  const members = must(await s.request("GET", "/v1/account/members"), 200).data.map((m: any) => m.id);
  const other = await s.bootstrap("other@example.com", "Other account");

  return {
    s,
    mastodon,
    bluesky,
    receiver,
    keys: {
      live: s.owner.apiKey,
      test: await s.createKey({ environment: "test" }),
      otherAccount: other.apiKey,
      narrow: await s.createKey({ scopes: ["workspaces:read"] }),
    },
    pools: {
      workspace_id: [ws, ws, ws, ws2, other.workspaceId],
      destination_id: [mastodonDest, blueskyDest],
      connection_id: [connection.id],
      post_id: [draft, scheduled, published, failed],
      asset_id: [asset.id],
      upload_id: [upload, sent.id],
      device_secret: [device.device_secret],
      endpoint_id: [endpoint.id],
      delivery_id: [delivery],
      invitation_id: [invitation],
      member_id: members,
      group: ["g-draft", "g-scheduled", "g-now", "g-failed"],
    },
    bodies: { upload: uploadBody(plan), complete },
    async stop() {
      await s.stop();
      await mastodon.stop();
      await bluesky.stop();
      await receiver.stop();
    },
  };
}
