// A real webhook receiver (Bun.serve on 127.0.0.1) that checks signatures with Stripe's verifier,
// and small helpers to create endpoints and run the webhook jobs.
import { expect } from "bun:test";
import Stripe from "stripe";
import { engineOf } from "../../src/db/engine.ts";
import type { Herald } from "../../src/herald.ts";
import type { RunningServer } from "../../src/server.ts";
import type { TestResponse, TestServer } from "../helpers/server.ts";

const stripe = new Stripe("sk_test_not_used_for_calls");

/** A request the receiver got, as it arrived. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The raw body, byte for byte. */
  raw: string;
  body: any;
}

/** A local receiver: what it got, and what it answers next. */
export interface Receiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** Status of the next answers, in order; then `defaultStatus`. */
  statuses: number[];
  defaultStatus: number;
  /** Extra headers of every answer (a Location for 3xx tests). */
  headers: Record<string, string>;
  /** Wait this long before answering. */
  delayMs: number;
  /** Decides the status of a request when set (before `statuses`). */
  respond: ((request: ReceivedRequest) => number) | null;
  /** The distinct Service-Event-Id values received (what a deduplicating receiver keeps). */
  eventIds(): Set<string>;
  stop(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 at a free port. */
export function startReceiver(): Receiver {
  const receiver: Receiver = {
    url: "",
    port: 0,
    received: [],
    statuses: [],
    defaultStatus: 200,
    headers: {},
    delayMs: 0,
    respond: null,
    eventIds: () => new Set(receiver.received.map((r) => r.headers["service-event-id"]!)),
    stop: async () => {
      await server.stop(true);
    },
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch: async (request) => {
      const raw = await request.text();
      const url = new URL(request.url);
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {
        body = null;
      }
      const received: ReceivedRequest = {
        method: request.method,
        path: url.pathname,
        headers: Object.fromEntries(request.headers),
        raw,
        body,
      };
      receiver.received.push(received);
      if (receiver.delayMs > 0) await Bun.sleep(receiver.delayMs);
      const status = receiver.respond?.(received) ?? receiver.statuses.shift() ?? receiver.defaultStatus;
      return new Response(status === 204 ? null : "ok", { status, headers: receiver.headers });
    },
  });
  receiver.port = server.port!;
  receiver.url = `http://127.0.0.1:${server.port}/hooks`;
  return receiver;
}

/**
 * Stripe's verifier on a received request (the independent check of our signatures). `nowMs` is the
 * receiver's clock: the server's ManualClock in tests. Throws when the signature does not verify.
 */
export async function verifyWithStripe(
  request: Pick<ReceivedRequest, "raw" | "headers">,
  secret: string,
  nowMs: number,
  toleranceSec = 300,
) {
  // Stripe takes the receiver's time in milliseconds.
  return stripe.webhooks.constructEventAsync(
    request.raw,
    request.headers["service-signature"]!,
    secret,
    toleranceSec,
    undefined,
    nowMs,
  );
}

/** Whether Stripe's verifier accepts the request with this secret. */
export async function verifies(
  request: Pick<ReceivedRequest, "raw" | "headers">,
  secret: string,
  nowMs: number,
): Promise<boolean> {
  try {
    await verifyWithStripe(request, secret, nowMs);
    return true;
  } catch {
    return false;
  }
}

let keys = 0;
/** A fresh Idempotency-Key header. */
export function idem(): Record<string, string> {
  return { "idempotency-key": `wh-${Date.now()}-${++keys}` };
}

/** The path of a workspace's endpoints. */
export function endpointsPath(workspaceId: string): string {
  return `/v1/workspaces/${workspaceId}/webhook-endpoints`;
}

/** POST an endpoint (with an Idempotency-Key). */
export function createEndpoint(
  s: TestServer,
  body: Record<string, unknown>,
  options: { key?: string; workspaceId?: string } = {},
): Promise<TestResponse> {
  return s.request("POST", endpointsPath(options.workspaceId ?? s.owner.workspaceId), {
    body,
    headers: idem(),
    key: options.key,
  });
}

/** Creates an endpoint that must succeed; returns the created resource (with `secret`). */
export async function mustCreateEndpoint(
  s: TestServer,
  body: Record<string, unknown>,
  workspaceId?: string,
): Promise<any> {
  const r = await createEndpoint(
    s,
    {
      name: "Receiver",
      event_types: ["post.published", "post.failed", "post.awaiting-provider", "post.needs-attention"],
      ...body,
    },
    { workspaceId },
  );
  expect({ status: r.status, body: r.body }).toMatchObject({ status: 201 });
  return r.body;
}

/** Fans out new events and sends what is due (each job once). */
export async function runWebhooks(server: RunningServer): Promise<void> {
  await server.scheduler.runNow("webhook-dispatch");
  await server.scheduler.runNow("webhook-deliveries");
}

/** The deliveries of an endpoint as the API lists them (first page of 100). */
export async function deliveriesOf(
  s: TestServer,
  endpointId: string,
  workspaceId = s.owner.workspaceId,
): Promise<any[]> {
  const r = await s.request("GET", `${endpointsPath(workspaceId)}/${endpointId}/deliveries?limit=100`);
  expect(r.status).toBe(200);
  return r.body.data;
}

/** A row count of a table (for "nothing else happened" checks); `where` is SQL both engines take. */
export async function count(h: Herald, table: string, where = "1 = 1"): Promise<number> {
  const [row] = await engineOf(h.db).query<{ n: number | string }>(
    `SELECT count(*) AS n FROM ${table} WHERE ${where}`,
  );
  // PostgreSQL returns count(*) as a bigint string.
  return Number(row!.n);
}
