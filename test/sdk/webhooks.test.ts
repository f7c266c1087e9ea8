// verifyWebhook of @herald/client against real deliveries: a receiver verifies in its handler what a
// real Herald sends (an endpoint created and tested through the SDK), during a secret rotation with
// either secret, and a post's publication; it refuses tampered bodies, stale or future timestamps and unknown secrets.
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  createHeraldClient,
  type HeraldClient,
  type HeraldEvent,
  verifyWebhook,
  WebhookVerificationError,
} from "../../sdk/src/index.ts";
import type { TestServer } from "../helpers/server.ts";
import { startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { runWebhooks } from "../webhooks/helpers.ts";

/** A receiver whose handler verifies each delivery with the SDK, as sdk/README.md shows. */
interface VerifyingReceiver {
  url: string;
  secrets: string[];
  /** What each delivery came to: the event, or the reason it was refused. */
  outcomes: (HeraldEvent | string)[];
  /** The raw deliveries (for the refusal checks below). */
  raw: { headers: Headers; body: string }[];
  stop(): Promise<void>;
}

function startVerifyingReceiver(now: () => number): VerifyingReceiver {
  const receiver: VerifyingReceiver = {
    url: "",
    secrets: [],
    outcomes: [],
    raw: [],
    stop: async () => {
      await server.stop(true);
    },
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request) => {
      const body = await request.text();
      receiver.raw.push({ headers: request.headers, body });
      try {
        const event = await verifyWebhook({
          secrets: receiver.secrets,
          headers: request.headers,
          body,
          now: now(),
        });
        receiver.outcomes.push(event);
        return new Response(null, { status: 204 });
      } catch (error) {
        if (!(error instanceof WebhookVerificationError)) throw error;
        receiver.outcomes.push(error.reason);
        return new Response(error.reason, { status: 400 });
      }
    },
  });
  receiver.url = `http://127.0.0.1:${server.port}/herald`;
  return receiver;
}

let w: PostsWorld;
let s: TestServer;
let client: HeraldClient;
let receiver: VerifyingReceiver;

beforeAll(async () => {
  w = await startPostsWorld();
  s = w.s;
  client = createHeraldClient({ baseUrl: s.url, apiKey: s.owner.apiKey });
  // The receiver's clock is the server's (a ManualClock), so timestamps are fresh.
  receiver = startVerifyingReceiver(() => s.clock.now());
});
afterAll(async () => {
  await receiver.stop();
  await w.stop();
});

/** Sends the endpoint's test event and delivers it; returns the raw delivery. */
async function sendTestEvent(endpointId: string) {
  const sent = await client.POST("/workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}/test", {
    params: { path: { workspace_id: s.owner.workspaceId, endpoint_id: endpointId } },
    body: {},
  });
  expect(sent.response.status).toBeLessThan(300);
  const before = receiver.raw.length;
  await runWebhooks(s.server);
  expect(receiver.raw.length).toBe(before + 1);
  return receiver.raw.at(-1)!;
}

/** The reason verifyWebhook refuses with (null when it accepts). */
async function refusal(options: Parameters<typeof verifyWebhook>[0]): Promise<string | null> {
  try {
    await verifyWebhook(options);
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).reason;
  }
}

test("a real delivery verifies in the handler; rotation, tampering, staleness and wrong secrets", async () => {
  const created = await client.POST("/workspaces/{workspace_id}/webhook-endpoints", {
    params: { path: { workspace_id: s.owner.workspaceId } },
    body: { name: "SDK receiver", url: receiver.url, event_types: ["post.published"] },
  });
  expect(created.response.status).toBe(201);
  const endpoint = created.data!;
  const firstSecret = endpoint.secret!;
  receiver.secrets = [firstSecret];

  const delivery = await sendTestEvent(endpoint.id);
  const event = receiver.outcomes.at(-1) as HeraldEvent;
  expect(event).toMatchObject({
    object: "event",
    api_version: "v1",
    type: "webhook.test",
    workspace_id: s.owner.workspaceId,
    data: { object: { id: endpoint.id, object: "webhook_endpoint" } },
  });
  expect(event.id).toBe(delivery.headers.get("service-event-id")!);

  const now = s.clock.now();
  const base = { secrets: [firstSecret], headers: delivery.headers, body: delivery.body, now };
  // Node's request.headers shape and raw bytes verify the same.
  const nodeHeaders = Object.fromEntries(delivery.headers);
  const bytes = new TextEncoder().encode(delivery.body);
  expect(await refusal({ ...base, headers: nodeHeaders, body: bytes })).toBeNull();
  // Tampered body, another secret, no header, a malformed one.
  expect(await refusal({ ...base, body: delivery.body.replace("webhook.test", "webhook.tesT") })).toBe(
    "signature_mismatch",
  );
  expect(await refusal({ ...base, secrets: ["whsec_not_this_one"] })).toBe("signature_mismatch");
  expect(await refusal({ ...base, secrets: [] })).toBe("no_secrets");
  expect(await refusal({ ...base, headers: {} })).toBe("missing_signature");
  expect(await refusal({ ...base, headers: { "Service-Signature": "v1=abc" } })).toBe("malformed_signature");
  // Five minutes either way is accepted; a second more is not; the tolerance is the caller's.
  expect(await refusal({ ...base, now: now + 300_000 })).toBeNull();
  expect(await refusal({ ...base, now: now - 300_000 })).toBeNull();
  expect(await refusal({ ...base, now: now + 301_000 })).toBe("timestamp_too_old");
  expect(await refusal({ ...base, now: now - 301_000 })).toBe("timestamp_in_future");
  expect(await refusal({ ...base, now: now + 600_000, toleranceSeconds: 900 })).toBeNull();

  // Rotation: while the old secret overlaps, each delivery carries two signatures; either secret,
  // or a list holding either, verifies it.
  const rotated = await client.POST(
    "/workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}/rotate-secret",
    {
      params: { path: { workspace_id: s.owner.workspaceId, endpoint_id: endpoint.id } },
      body: { previous_secret_expires_in: 3600 },
    },
  );
  expect(rotated.response.status).toBe(200);
  const newSecret = rotated.data!.secret!;
  expect(newSecret).not.toBe(firstSecret);
  receiver.secrets = [firstSecret, newSecret];
  const during = await sendTestEvent(endpoint.id);
  expect(receiver.outcomes.at(-1)).toMatchObject({ type: "webhook.test" });
  expect(during.headers.get("service-signature")!.match(/v1=/g)).toHaveLength(2);
  const duringBase = { headers: during.headers, body: during.body, now };
  expect(await refusal({ ...duringBase, secrets: [firstSecret] })).toBeNull();
  expect(await refusal({ ...duringBase, secrets: newSecret })).toBeNull();
  expect(await refusal({ ...duringBase, secrets: ["whsec_unrelated", newSecret] })).toBeNull();
  expect(await refusal({ ...duringBase, secrets: ["whsec_unrelated"] })).toBe("signature_mismatch");

  // The receiver dropped the old secret: a delivery signed with the new one still passes.
  receiver.secrets = [newSecret];
  await sendTestEvent(endpoint.id);
  expect(receiver.outcomes.at(-1)).toMatchObject({ type: "webhook.test" });
  expect(receiver.outcomes.filter((o) => typeof o === "string")).toEqual([]);
});

test("a post's publication arrives as a verified post.published event", async () => {
  const created = await client.POST("/workspaces/{workspace_id}/webhook-endpoints", {
    params: { path: { workspace_id: w.ws } },
    body: { name: "Published posts", url: receiver.url, event_types: ["post.published"] },
  });
  expect(created.response.status).toBe(201);
  receiver.secrets = [...receiver.secrets, created.data!.secret!];
  const published = await client.POST("/workspaces/{workspace_id}/posts", {
    params: { path: { workspace_id: w.ws } },
    body: {
      when: "now",
      confirmed: true,
      group: "sdk-webhook",
      posts: [{ destination_id: w.destinationId, body: ["Published, then announced"] }],
    },
  });
  expect(published.response.status).toBeLessThan(300);
  const postId = published.data!.posts[0]!.id;
  await s.server.engine.runUntilIdle();
  await runWebhooks(s.server);
  const events = receiver.outcomes.filter(
    (o): o is HeraldEvent =>
      typeof o !== "string" && o.type === "post.published" && o.data.object.id === postId,
  );
  expect(events.length).toBeGreaterThanOrEqual(1);
  expect(events[0]!.data.object).toMatchObject({
    object: "post",
    group: "sdk-webhook",
    channel: "mastodon",
    destination_id: w.destinationId,
    state: "published",
  });
  expect(receiver.outcomes.filter((o) => typeof o === "string")).toEqual([]);
});
