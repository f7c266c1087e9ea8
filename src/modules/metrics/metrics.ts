// Herald's in-process metrics (docs/operations.md, "/metrics"): what happens in this process, counted
// as it happens. Labels are bounded sets (route patterns, networks, outcomes), never ids or secrets.
// Each Herald value has its own set (tests run many servers in one process).
import type { Herald } from "../../herald.ts";
import { Counter, Histogram } from "./exposition.ts";

/** Seconds: 1 ms to 30 s, for request and webhook attempt durations. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds: 10 ms to a day, for lateness and end-to-end webhook latency (retries take hours). */
const DELAY_BUCKETS = [0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 86_400];

export function createMetrics() {
  return {
    startedAt: Date.now(),
    requests: new Histogram(
      "herald_http_request_duration_seconds",
      "HTTP requests by method, route pattern and status: time to the response (_count counts them).",
      ["method", "route", "status"],
      DURATION_BUCKETS,
    ),
    publishAttempts: new Counter(
      "herald_publish_attempts_total",
      "Publishing attempts by network and outcome (published, awaiting, retry, failed, needs-attention).",
      ["network", "outcome"],
    ),
    lateness: new Histogram(
      "herald_publish_lateness_seconds",
      "From the time a post (or its retry or status check) was due to the time this process claimed it.",
      ["network"],
      DELAY_BUCKETS,
    ),
    webhookAttempts: new Histogram(
      "herald_webhook_attempt_duration_seconds",
      "Webhook delivery attempts by outcome (delivered, failed): time to the receiver's answer.",
      ["outcome"],
      DURATION_BUCKETS,
    ),
    webhookLatency: new Histogram(
      "herald_webhook_delivery_latency_seconds",
      "From a webhook delivery's creation (its event fanned out) to the attempt that delivered it.",
      [],
      DELAY_BUCKETS,
    ),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

const sets = new WeakMap<Herald, Metrics>();

/** The metrics of one Herald value (made on first use). */
export function metricsOf(h: Herald): Metrics {
  let metrics = sets.get(h);
  if (!metrics) sets.set(h, (metrics = createMetrics()));
  return metrics;
}

/** One answered request: its route pattern (never the path, which can carry tokens). */
export function observeRequest(
  h: Herald,
  request: Request,
  route: string | null,
  status: number,
  startedAt: number,
) {
  const seconds = (performance.now() - startedAt) / 1000;
  metricsOf(h).requests.observe(
    { method: request.method, route: route ?? "(unmatched)", status: String(status) },
    seconds,
  );
}

/** One publishing attempt's outcome as written. */
export function observePublishAttempt(h: Herald, network: string, outcome: string): void {
  metricsOf(h).publishAttempts.inc({ network, outcome });
}

/** A claimed post's lateness: `dueAt` its due time, `claimedAt` the claim (Herald's clock, ms). */
export function observeLateness(h: Herald, network: string, dueAt: number | null, claimedAt: number): void {
  if (dueAt === null) return;
  metricsOf(h).lateness.observe({ network }, Math.max(0, claimedAt - dueAt) / 1000);
}

/** One webhook attempt: its duration, and for a delivered one the time since the delivery was made. */
export function observeWebhookAttempt(
  h: Herald,
  attempt: { ok: boolean; durationMs: number; finishedAt: number },
  deliveryCreatedAt: number,
): void {
  const m = metricsOf(h);
  m.webhookAttempts.observe({ outcome: attempt.ok ? "delivered" : "failed" }, attempt.durationMs / 1000);
  if (attempt.ok) m.webhookLatency.observe({}, Math.max(0, attempt.finishedAt - deliveryCreatedAt) / 1000);
}
