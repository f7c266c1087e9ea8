// Retries with backoff and jitter for about three days, then the endpoint is disabled; all on the
// server's ManualClock. Re-enabling does not resend; redelivery does.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { tables } from "../helpers/tables.ts";
import { RETRY_WINDOW_MS, retryDelayMs } from "../../src/modules/webhooks/sender.ts";
import { setWebhookTransport } from "../../src/modules/webhooks/transport.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import {
  count,
  deliveriesOf,
  endpointsPath,
  mustCreateEndpoint,
  runWebhooks,
  startReceiver,
  verifies,
  type Receiver,
} from "./helpers.ts";

const { eventsOutbox, webhookEndpoints } = tables;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The documented schedule (docs/webhooks.md): the nominal wait before each retry. */
const SCHEDULE = [
  0.5 * MINUTE,
  MINUTE,
  2 * MINUTE,
  4 * MINUTE,
  8 * MINUTE,
  16 * MINUTE,
  32 * MINUTE,
  64 * MINUTE,
  128 * MINUTE,
  ...Array.from({ length: 30 }, () => 4 * HOUR),
];

let s: TestServer;
let receiver: Receiver;
beforeAll(async () => {
  s = await startTestServer({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  receiver = startReceiver();
});
afterAll(async () => {
  await s.stop();
  await receiver.stop();
});
// Each test starts with no endpoints (and so no pending deliveries) and an empty receiver.
beforeEach(async () => {
  const list = await s.request("GET", `${endpointsPath(ws())}?limit=100`);
  for (const e of list.body.data) await s.request("DELETE", pathOf(e.id));
  setWebhookTransport(s.herald, { random: () => 0.5 });
  receiver.received.length = 0;
  receiver.statuses.length = 0;
  receiver.defaultStatus = 200;
  receiver.respond = null;
});

const ws = () => s.owner.workspaceId;
const pathOf = (id: string) => `${endpointsPath(ws())}/${id}`;

async function queueTest(endpointId: string): Promise<any> {
  const r = await s.request("POST", `${pathOf(endpointId)}/test`, { body: {} });
  expect(r.status).toBe(202);
  return r.body;
}

/**
 * Moves the clock to the earliest pending attempt of the endpoint and runs the jobs; false when nothing is
 * pending.
 */
async function runNextAttempt(endpointId: string): Promise<boolean> {
  const pending = (await deliveriesOf(s, endpointId)).filter((d) => d.status === "pending");
  if (pending.length === 0) return false;
  const next = Math.min(...pending.map((d) => Date.parse(d.next_attempt_at)));
  if (next > s.clock.now()) s.clock.set(next);
  await runWebhooks(s.server);
  return true;
}

describe("the retry schedule", () => {
  test("30 s doubling to 4 h, then every 4 h, until three days have passed; then the endpoint is disabled", async () => {
    const endpoint = await mustCreateEndpoint(s, { url: receiver.url });
    receiver.defaultStatus = 500;
    const first = await queueTest(endpoint.id);
    const createdAt = s.clock.now();
    await runWebhooks(s.server);
    // A second delivery an hour later: still pending when the endpoint is disabled, so it fails with it.
    s.clock.advance(HOUR);
    const second = await queueTest(endpoint.id);
    s.clock.set(createdAt);

    while (await runNextAttempt(endpoint.id)) {
      /* every attempt fails */
    }

    const deliveries = await deliveriesOf(s, endpoint.id);
    const one = deliveries.find((d) => d.id === first.id)!;
    const starts = one.attempts.map((a: any) => Date.parse(a.started_at));
    const waits = starts.slice(1).map((t: number, i: number) => t - starts[i]!);
    // Expected: attempts until the first one at or after 72 h from creation.
    const expected: number[] = [];
    for (let at = 0, n = 1; at < RETRY_WINDOW_MS; n++) {
      expected.push(SCHEDULE[n - 1]!);
      at += SCHEDULE[n - 1]!;
    }
    expect(waits).toEqual(expected);
    expect(one.attempt_count).toBe(expected.length + 1);
    expect(one.attempt_count).toBe(27);
    const lastAt = starts[starts.length - 1]! - createdAt;
    expect(lastAt).toBeGreaterThanOrEqual(RETRY_WINDOW_MS);
    expect(lastAt).toBeLessThan(RETRY_WINDOW_MS + 4 * HOUR);
    expect(one).toMatchObject({
      status: "failed",
      next_attempt_at: null,
      last_response_status: 500,
      last_error: "HTTP 500",
      failed_at: new Date(starts[starts.length - 1]!).toISOString(),
    });
    expect(one.attempts.every((a: any) => a.response_status === 500 && a.error === "HTTP 500")).toBe(true);

    const other = deliveries.find((d) => d.id === second.id)!;
    expect(other).toMatchObject({
      status: "failed",
      last_error: "endpoint disabled after 3 days of failed deliveries",
      next_attempt_at: null,
    });
    expect(other.attempt_count).toBeGreaterThan(1);

    const disabled = (await s.request("GET", pathOf(endpoint.id))).body;
    expect(disabled).toMatchObject({
      enabled: false,
      disabled_reason: "delivery_failures",
      config_version: 2,
    });
    expect(
      await count(
        s.herald,
        "audit_records",
        `action = 'webhook_endpoint.disabled' AND target_id = '${endpoint.id}' AND credential_id IS NULL`,
      ),
    ).toBe(1);
    const disabledEvents = await s.herald.db
      .select({ payload: eventsOutbox.payload })
      .from(eventsOutbox)
      .where(eq(eventsOutbox.type, "webhook_endpoint.disabled"));
    const event = disabledEvents.find((e) => e.payload.id === endpoint.id)!;
    expect(event.payload).toMatchObject({
      id: endpoint.id,
      object: "webhook_endpoint",
      name: "Receiver",
      disabled_reason: "delivery_failures",
      failing_since: new Date(createdAt).toISOString(),
    });
    expect(s.logs.some((l) => l.includes("webhook endpoint disabled") && l.includes(endpoint.id))).toBe(true);

    // Nothing further goes out, and enabling again does not resend what failed.
    const sent = receiver.received.length;
    s.clock.advance(HOUR);
    await runWebhooks(s.server);
    receiver.defaultStatus = 200;
    const enabled = await s.request("PATCH", pathOf(endpoint.id), { body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null, config_version: 3 });
    s.clock.advance(HOUR);
    await runWebhooks(s.server);
    expect(receiver.received).toHaveLength(sent);

    // Redelivery does.
    const again = await s.request("POST", `${pathOf(endpoint.id)}/deliveries/${first.id}/redeliver`, {
      body: {},
    });
    expect(again.status).toBe(202);
    await runWebhooks(s.server);
    expect(receiver.received).toHaveLength(sent + 1);
    const last = receiver.received[sent]!;
    expect(last.headers["service-event-id"]).toBe(first.event_id);
    expect(await verifies(last, endpoint.secret, s.clock.now())).toBe(true);
    expect((await deliveriesOf(s, endpoint.id)).find((d) => d.id === again.body.id)).toMatchObject({
      status: "succeeded",
      attempt_count: 1,
    });
  });

  test("each wait is its nominal value ±20 % (jitter)", async () => {
    for (let n = 1; n <= 30; n++) {
      const nominal = SCHEDULE[n - 1]!;
      expect(retryDelayMs(n, 0)).toBe(Math.round(nominal * 0.8));
      expect(retryDelayMs(n, 0.5)).toBe(nominal);
      expect(retryDelayMs(n, 0.999999)).toBeLessThanOrEqual(Math.round(nominal * 1.2));
      expect(retryDelayMs(n, 0.999999)).toBeGreaterThan(Math.round(nominal * 1.19));
    }
    setWebhookTransport(s.herald, { random: Math.random });
    const endpoint = await mustCreateEndpoint(s, { url: receiver.url });
    receiver.defaultStatus = 503;
    const waits = new Set<number>();
    for (let i = 0; i < 5; i++) {
      const d = await queueTest(endpoint.id);
      await runWebhooks(s.server);
      const wait =
        Date.parse((await deliveriesOf(s, endpoint.id)).find((x) => x.id === d.id)!.next_attempt_at) -
        s.clock.now();
      expect(wait).toBeGreaterThanOrEqual(24_000);
      expect(wait).toBeLessThanOrEqual(36_000);
      waits.add(wait);
    }
    expect(waits.size).toBeGreaterThan(1);
  });

  test("a success in between keeps the endpoint enabled; the failing delivery still gives up after three days", async () => {
    const endpoint = await mustCreateEndpoint(s, { url: receiver.url });
    const failing = await queueTest(endpoint.id);
    receiver.respond = (r) => (r.headers["service-delivery-id"] === failing.id ? 500 : 200);
    const createdAt = s.clock.now();
    await runWebhooks(s.server);
    let succeededOther = false;
    while (await runNextAttempt(endpoint.id)) {
      if (!succeededOther && s.clock.now() - createdAt > 48 * HOUR) {
        await queueTest(endpoint.id);
        await runWebhooks(s.server);
        succeededOther = true;
      }
    }
    expect(succeededOther).toBe(true);
    const d = (await deliveriesOf(s, endpoint.id)).find((x) => x.id === failing.id)!;
    expect(d.status).toBe("failed");
    expect(Date.parse(d.failed_at) - createdAt).toBeGreaterThanOrEqual(RETRY_WINDOW_MS);
    expect((await s.request("GET", pathOf(endpoint.id))).body).toMatchObject({
      enabled: true,
      disabled_reason: null,
    });
  });

  test("a delivery that succeeds on a retry is done; the endpoint's failure streak ends", async () => {
    const endpoint = await mustCreateEndpoint(s, { url: receiver.url });
    receiver.statuses.push(500, 502);
    const d = await queueTest(endpoint.id);
    await runWebhooks(s.server);
    while (await runNextAttempt(endpoint.id)) {
      /* two failures, then 200 */
    }
    const done = (await deliveriesOf(s, endpoint.id)).find((x) => x.id === d.id)!;
    expect(done).toMatchObject({
      status: "succeeded",
      attempt_count: 3,
      last_response_status: 200,
      last_error: null,
    });
    expect(done.attempts.map((a: any) => a.response_status)).toEqual([500, 502, 200]);
    expect(receiver.eventIds().size).toBe(1);
    const [stored] = await s.herald.db
      .select({ failingSince: webhookEndpoints.failingSince })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, endpoint.id));
    expect(stored!.failingSince).toBeNull();
  });

  test("disabling an endpoint ends its pending deliveries", async () => {
    const endpoint = await mustCreateEndpoint(s, { url: receiver.url });
    receiver.defaultStatus = 500;
    const d = await queueTest(endpoint.id);
    await runWebhooks(s.server);
    await s.request("PATCH", pathOf(endpoint.id), { body: { enabled: false } });
    const after = (await deliveriesOf(s, endpoint.id)).find((x) => x.id === d.id)!;
    expect(after).toMatchObject({
      status: "failed",
      last_error: "endpoint disabled",
      next_attempt_at: null,
      attempt_count: 1,
    });
    s.clock.advance(HOUR);
    const sent = receiver.received.length;
    await runWebhooks(s.server);
    expect(receiver.received).toHaveLength(sent);
  });

  test("the delivery log keeps finished deliveries for 30 days", async () => {
    const endpoint = await mustCreateEndpoint(s, { url: receiver.url });
    const old = await queueTest(endpoint.id);
    await runWebhooks(s.server);
    s.clock.advance(30 * 24 * HOUR - 1);
    receiver.defaultStatus = 500;
    const recent = await queueTest(endpoint.id);
    await runWebhooks(s.server);
    await s.server.scheduler.runNow("webhook-log-cleanup");
    expect((await deliveriesOf(s, endpoint.id)).map((d) => d.id)).toEqual([recent.id, old.id]);
    s.clock.advance(2);
    await s.server.scheduler.runNow("webhook-log-cleanup");
    const left = await deliveriesOf(s, endpoint.id);
    expect(left.map((d) => d.id)).toEqual([recent.id]);
    expect(left[0]).toMatchObject({ status: "pending", attempts: [{ number: 1, response_status: 500 }] });
    expect(await count(s.herald, "webhook_delivery_attempts", `delivery_id = '${old.id}'`)).toBe(0);
  });
});
