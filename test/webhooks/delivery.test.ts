// Events from real post publications reach a real local receiver, signed; Stripe's verifier checks
// every signature. Filters by event type and destination, metadata vs full content, rotation,
// the test event, the delivery log and redelivery.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { connectMastodon, createPosts, startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { startMastodonFake, type MastodonFake } from "../fakes/mastodon.ts";
import { expectProblem } from "../helpers/problems.ts";
import {
  count,
  deliveriesOf,
  endpointsPath,
  idem,
  mustCreateEndpoint,
  runWebhooks,
  startReceiver,
  verifies,
  verifyWithStripe,
  type Receiver,
} from "./helpers.ts";

let w: PostsWorld;
let receiver: Receiver;
let secondFake: MastodonFake;
let secondDestination: string;

beforeAll(async () => {
  w = await startPostsWorld();
  receiver = startReceiver();
  secondFake = await startMastodonFake({ mediaProcessingPolls: 0 });
  secondDestination = await connectMastodon(w.s, secondFake);
});
afterAll(async () => {
  await w.stop();
  await receiver.stop();
  await secondFake.stop();
});

// Each test starts with no endpoints and an empty receiver.
beforeEach(async () => {
  const list = await w.s.request("GET", `${endpointsPath(w.ws)}?limit=100`);
  for (const e of list.body.data) await w.s.request("DELETE", `${endpointsPath(w.ws)}/${e.id}`);
  receiver.received.length = 0;
  receiver.statuses.length = 0;
  receiver.defaultStatus = 200;
  receiver.respond = null;
});

let groups = 0;
/** Publishes one post now on a destination and runs the engine until it is done. */
async function publish(text: string, destinationId = w.destinationId): Promise<any> {
  const r = await createPosts(w, {
    when: "now",
    confirmed: true,
    group: `wh-${++groups}`,
    posts: [{ destination_id: destinationId, body: [text, `${text} (reply)`] }],
  });
  expect(r.status).toBe(202);
  await w.s.server.engine.runUntilIdle();
  return r.body.posts[0];
}

const endpointPath = (id: string) => `${endpointsPath(w.ws)}/${id}`;
const now = () => w.s.clock.now();

describe("a published post", () => {
  test("reaches the receiver once, signed, with the contract's body and headers", async () => {
    const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url, event_types: ["post.published"] });
    const post = await publish("hello receivers");
    await runWebhooks(w.s.server);
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    expect(got.method).toBe("POST");
    expect(got.path).toBe("/hooks");
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["user-agent"]).toBe("Herald/0.1.0 (+webhooks)");
    expect(got.headers["service-event-id"]).toMatch(/^evt_[0-9a-z]{26}$/);
    expect(got.headers["service-delivery-id"]).toMatch(/^dlv_[0-9a-z]{26}$/);
    expect(got.headers["service-signature"]).toMatch(
      new RegExp(`^t=${Math.floor(now() / 1000)},v1=[0-9a-f]{64}$`),
    );

    // The body, key for key as the contract's Events section has it.
    expect(Object.keys(got.body)).toEqual([
      "id",
      "object",
      "api_version",
      "type",
      "workspace_id",
      "created_at",
      "data",
    ]);
    expect(got.body).toMatchObject({
      id: got.headers["service-event-id"],
      object: "event",
      api_version: "v1",
      type: "post.published",
      workspace_id: w.ws,
      created_at: new Date(now()).toISOString(),
    });
    expect(Object.keys(got.body.data)).toEqual(["object"]);
    const published = (await w.s.request("GET", `/v1/workspaces/${w.ws}/posts/${post.id}`)).body;
    expect(got.body.data.object).toEqual({
      id: post.id,
      object: "post",
      group: post.group,
      channel: "mastodon",
      destination_id: w.destinationId,
      state: "published",
      scheduled_at: published.scheduled_at,
      published_at: published.published_at,
      url: published.receipts[0].url,
      error: null,
    });
    expect(got.body.data.object).not.toHaveProperty("content");
    // The event is the outbox's event.
    expect(
      await count(w.s.herald, "events_outbox", `id = '${got.body.id}' AND type = 'post.published'`),
    ).toBe(1);

    // Stripe's verifier accepts it; a wrong secret, a tampered body and a stale receiver clock do not.
    const event = await verifyWithStripe(got, endpoint.secret, now());
    expect(event.id).toBe(got.body.id);
    expect(await verifies(got, "whsec_wrong", now())).toBe(false);
    expect(
      await verifies(
        { ...got, raw: got.raw.replace('"object":"event"', '"object":"evenT"') },
        endpoint.secret,
        now(),
      ),
    ).toBe(false);
    expect(
      await verifies(
        { ...got, raw: got.raw.replace('"state":"published"', '"state":"failed"') },
        endpoint.secret,
        now(),
      ),
    ).toBe(false);
    expect(await verifies({ ...got, raw: got.raw + " " }, endpoint.secret, now())).toBe(false);
    expect(await verifies(got, endpoint.secret, now() + 301_000)).toBe(false);

    // Running the jobs again sends nothing more.
    await runWebhooks(w.s.server);
    expect(receiver.received).toHaveLength(1);
    const [delivery] = await deliveriesOf(w.s, endpoint.id);
    expect(delivery).toMatchObject({
      id: got.headers["service-delivery-id"],
      object: "webhook_delivery",
      endpoint_id: endpoint.id,
      event_id: got.body.id,
      event_type: "post.published",
      status: "succeeded",
      attempt_count: 1,
      next_attempt_at: null,
      last_response_status: 200,
      last_error: null,
      delivered_at: new Date(now()).toISOString(),
      failed_at: null,
      redelivery_of: null,
    });
    expect(delivery.attempts).toEqual([
      {
        number: 1,
        started_at: new Date(now()).toISOString(),
        duration_ms: expect.any(Number),
        response_status: 200,
        error: null,
      },
    ]);
  });

  test("full content mode adds content; metadata mode leaves it out; same event id, separate deliveries", async () => {
    const full = await mustCreateEndpoint(w.s, { url: receiver.url, content_mode: "full", name: "Full" });
    const meta = await mustCreateEndpoint(w.s, { url: receiver.url, content_mode: "metadata", name: "Meta" });
    await publish("content or not");
    await runWebhooks(w.s.server);
    expect(receiver.received).toHaveLength(2);
    const bySecret = async (secret: string) => {
      for (const r of receiver.received) if (await verifies(r, secret, now())) return r;
      throw new Error("no request verifies with this secret");
    };
    const fullGot = await bySecret(full.secret);
    const metaGot = await bySecret(meta.secret);
    expect(fullGot.body.data.object.content).toEqual({
      headline: expect.any(String),
      body: ["content or not", "content or not (reply)"],
    });
    expect(metaGot.body.data.object).not.toHaveProperty("content");
    expect(fullGot.body.id).toBe(metaGot.body.id);
    expect(fullGot.headers["service-delivery-id"]).not.toBe(metaGot.headers["service-delivery-id"]);
    const { content, ...withoutContent } = fullGot.body.data.object;
    expect(withoutContent).toEqual(metaGot.body.data.object);
  });
});

describe("filters", () => {
  test("by destination: selected endpoints get their destinations' events only", async () => {
    const first = await mustCreateEndpoint(w.s, {
      url: receiver.url,
      name: "First",
      destination_filter_mode: "selected",
      destination_ids: [w.destinationId],
    });
    const second = await mustCreateEndpoint(w.s, {
      url: receiver.url,
      name: "Second",
      destination_filter_mode: "selected",
      destination_ids: [secondDestination],
    });
    const both = await mustCreateEndpoint(w.s, {
      url: receiver.url,
      name: "Both",
      destination_filter_mode: "selected",
      destination_ids: [secondDestination, w.destinationId],
    });
    const all = await mustCreateEndpoint(w.s, { url: receiver.url, name: "All" });
    const onFirst = await publish("on the first destination");
    const onSecond = await publish("on the second destination", secondDestination);
    await runWebhooks(w.s.server);
    const postsOf = async (endpoint: any) => {
      const got = [];
      for (const r of receiver.received)
        if (await verifies(r, endpoint.secret, now())) got.push(r.body.data.object.id);
      return got.sort();
    };
    expect(await postsOf(first)).toEqual([onFirst.id]);
    expect(await postsOf(second)).toEqual([onSecond.id]);
    expect(await postsOf(both)).toEqual([onFirst.id, onSecond.id].sort());
    expect(await postsOf(all)).toEqual([onFirst.id, onSecond.id].sort());
    expect(receiver.received).toHaveLength(6);
  });

  test("by event type: failed and needs-attention posts reach only endpoints that listed them", async () => {
    const failedOnly = await mustCreateEndpoint(w.s, {
      url: receiver.url,
      name: "Failed",
      event_types: ["post.failed"],
    });
    const attention = await mustCreateEndpoint(w.s, {
      url: receiver.url,
      name: "Attention",
      event_types: ["post.needs-attention", "post.published"],
    });
    w.mastodon.failNext(1, {
      path: "/api/v1/statuses",
      status: 422,
      body: { error: "Validation failed: Text contains a word this instance does not allow" },
    });
    const failed = await publish("rejected by the instance");
    await publish("published fine");
    await runWebhooks(w.s.server);
    const types = async (endpoint: any) => {
      const got = [];
      for (const r of receiver.received)
        if (await verifies(r, endpoint.secret, now())) got.push(`${r.body.type} ${r.body.data.object.state}`);
      return got.sort();
    };
    expect(await types(failedOnly)).toEqual(["post.failed failed"]);
    expect(await types(attention)).toEqual(["post.published published"]);
    const failedEvent = receiver.received.find((r) => r.body.type === "post.failed")!;
    expect(failedEvent.body.data.object).toMatchObject({
      id: failed.id,
      state: "failed",
      published_at: null,
      url: null,
      error: { code: "provider_rejected" },
    });

    secondFake.revokeTokens();
    await publish("the token is gone", secondDestination);
    await runWebhooks(w.s.server);
    const needsAttention = receiver.received.find((r) => r.body.type === "post.needs-attention")!;
    expect(needsAttention.body.data.object).toMatchObject({
      state: "needs-attention",
      destination_id: secondDestination,
    });
    expect(await verifies(needsAttention, attention.secret, now())).toBe(true);
  });

  test("disabled endpoints get nothing, and enabling one again does not send what it missed", async () => {
    const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url, enabled: false });
    await publish("while disabled");
    await runWebhooks(w.s.server);
    expect(receiver.received).toHaveLength(0);
    const enabled = await w.s.request("PATCH", endpointPath(endpoint.id), { body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, config_version: 2 });
    await runWebhooks(w.s.server);
    expect(receiver.received).toHaveLength(0);
    await publish("after enabling");
    await runWebhooks(w.s.server);
    expect(receiver.received.map((r) => r.body.data.object.state)).toEqual(["published"]);
  });

  test("an endpoint created after an event is not sent that event", async () => {
    await publish("before the endpoint");
    w.s.clock.advance(1000);
    await mustCreateEndpoint(w.s, { url: receiver.url });
    await runWebhooks(w.s.server);
    expect(receiver.received).toHaveLength(0);
  });
});

describe("secret rotation", () => {
  test("during the overlap every delivery carries one v1 per secret and both verify; afterwards only the new one", async () => {
    const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url });
    const rotated = await w.s.request("POST", `${endpointPath(endpoint.id)}/rotate-secret`, { body: {} });
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.secret as string;
    await publish("during rotation");
    await runWebhooks(w.s.server);
    const during = receiver.received[0]!;
    expect(during.headers["service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(await verifies(during, newSecret, now())).toBe(true);
    expect(await verifies(during, endpoint.secret, now())).toBe(true);
    const tampered = { ...during, raw: during.raw.replace('"state":"published"', '"state":"failed"') };
    expect(tampered.raw).not.toBe(during.raw);
    expect(await verifies(tampered, newSecret, now())).toBe(false);
    expect(await verifies(tampered, endpoint.secret, now())).toBe(false);

    w.s.clock.advance(24 * 3600_000);
    await publish("after the overlap");
    await runWebhooks(w.s.server);
    const after = receiver.received[1]!;
    expect(after.headers["service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(await verifies(after, newSecret, now())).toBe(true);
    expect(await verifies(after, endpoint.secret, now())).toBe(false);
  });
});

describe("the test event", () => {
  test("goes to that endpoint only, whatever its event types, signed", async () => {
    const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url, event_types: ["post.failed"] });
    const bystander = await mustCreateEndpoint(w.s, { url: receiver.url, name: "Bystander" });
    const r = await w.s.request("POST", `${endpointPath(endpoint.id)}/test`, { body: {} });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({
      object: "webhook_delivery",
      endpoint_id: endpoint.id,
      event_type: "webhook.test",
      status: "pending",
      attempt_count: 0,
      next_attempt_at: new Date(now()).toISOString(),
      attempts: [],
    });
    await runWebhooks(w.s.server);
    expect(receiver.received).toHaveLength(1);
    const got = receiver.received[0]!;
    expect(got.body).toEqual({
      id: r.body.event_id,
      object: "event",
      api_version: "v1",
      type: "webhook.test",
      workspace_id: w.ws,
      created_at: new Date(now()).toISOString(),
      data: { object: { id: endpoint.id, object: "webhook_endpoint" } },
    });
    expect(got.headers["service-delivery-id"]).toBe(r.body.id);
    expect(await verifies(got, endpoint.secret, now())).toBe(true);
    expect(await verifies(got, bystander.secret, now())).toBe(false);
    expect((await deliveriesOf(w.s, endpoint.id))[0]).toMatchObject({ id: r.body.id, status: "succeeded" });
  });

  test("without a body, and refused (409) while the endpoint is disabled", async () => {
    const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url });
    const bare = await w.s.request("POST", `${endpointPath(endpoint.id)}/test`);
    expect(bare.status).toBe(202);
    await w.s.request("PATCH", endpointPath(endpoint.id), { body: { enabled: false } });
    expectProblem(
      await w.s.request("POST", `${endpointPath(endpoint.id)}/test`, { body: {} }),
      409,
      "public_conflict",
    );
    expectProblem(
      await w.s.request("POST", `${endpointsPath(w.ws)}/wh_nope/test`, { body: {} }),
      404,
      "public_not_found",
    );
  });
});

describe("the delivery log and redelivery", () => {
  test("lists newest first, pages, filters by status", async () => {
    const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url });
    for (let i = 0; i < 3; i++) await w.s.request("POST", `${endpointPath(endpoint.id)}/test`, { body: {} });
    receiver.statuses.push(500);
    await runWebhooks(w.s.server);
    const all = await deliveriesOf(w.s, endpoint.id);
    expect(all).toHaveLength(3);
    expect(all.map((d) => d.id)).toEqual([...all.map((d) => d.id)].sort().reverse());
    const page = await w.s.request("GET", `${endpointPath(endpoint.id)}/deliveries?limit=2`);
    expect(page.body.has_more).toBe(true);
    const rest = await w.s.request(
      "GET",
      `${endpointPath(endpoint.id)}/deliveries?limit=2&after=${encodeURIComponent(page.body.next_cursor)}`,
    );
    expect([...page.body.data, ...rest.body.data].map((d: any) => d.id)).toEqual(all.map((d) => d.id));
    const pending = await w.s.request("GET", `${endpointPath(endpoint.id)}/deliveries?status=pending`);
    expect(pending.body.data).toHaveLength(1);
    expect(pending.body.data[0]).toMatchObject({
      status: "pending",
      attempt_count: 1,
      last_response_status: 500,
      last_error: "HTTP 500",
    });
    expect(Date.parse(pending.body.data[0].next_attempt_at)).toBeGreaterThan(now());
    const succeeded = await w.s.request("GET", `${endpointPath(endpoint.id)}/deliveries?status=succeeded`);
    expect(succeeded.body.data).toHaveLength(2);
    expectProblem(
      await w.s.request("GET", `${endpointPath(endpoint.id)}/deliveries?status=lost`),
      400,
      "public_invalid_request",
    );
    expectProblem(
      await w.s.request("GET", `${endpointsPath(w.ws)}/wh_nope/deliveries`),
      404,
      "public_not_found",
    );
  });

  test("redeliver sends the same event again as a new delivery", async () => {
    const endpoint = await mustCreateEndpoint(w.s, { url: receiver.url });
    await publish("send me twice");
    await runWebhooks(w.s.server);
    const [original] = await deliveriesOf(w.s, endpoint.id);
    const r = await w.s.request("POST", `${endpointPath(endpoint.id)}/deliveries/${original.id}/redeliver`, {
      body: {},
      headers: idem(),
    });
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({
      event_id: original.event_id,
      event_type: "post.published",
      status: "pending",
      redelivery_of: original.id,
    });
    expect(r.body.id).not.toBe(original.id);
    await runWebhooks(w.s.server);
    expect(receiver.received).toHaveLength(2);
    const [first, second] = receiver.received;
    expect(second!.headers["service-event-id"]).toBe(first!.headers["service-event-id"]);
    expect(second!.headers["service-delivery-id"]).toBe(r.body.id);
    expect(second!.raw).toBe(first!.raw);
    expect(await verifies(second!, endpoint.secret, now())).toBe(true);
    expect(receiver.eventIds().size).toBe(1);
    expect(
      await count(
        w.s.herald,
        "audit_records",
        `action = 'webhook_delivery.redelivered' AND target_id = '${r.body.id}'`,
      ),
    ).toBe(1);
    expectProblem(
      await w.s.request("POST", `${endpointPath(endpoint.id)}/deliveries/dlv_nope/redeliver`, { body: {} }),
      404,
      "public_not_found",
    );
  });

  test("a delivery of another endpoint is not found", async () => {
    const a = await mustCreateEndpoint(w.s, { url: receiver.url, name: "A" });
    const b = await mustCreateEndpoint(w.s, { url: receiver.url, name: "B" });
    const queued = await w.s.request("POST", `${endpointPath(a.id)}/test`, { body: {} });
    expectProblem(
      await w.s.request("POST", `${endpointPath(b.id)}/deliveries/${queued.body.id}/redeliver`, { body: {} }),
      404,
      "public_not_found",
    );
  });
});
