// GET /metrics: a scrape parsed line by line (tests/ops/exposition.ts), the expected families and
// labels present, no ids in any label, and values that move after activity (requests, a published
// post, lateness, a delivered webhook, outbox and queue gauges). Optional bearer token. About 1 s.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer } from "../helpers/server.ts";
import { createPosts, startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { mustCreateEndpoint, runWebhooks, startReceiver, type Receiver } from "../webhooks/helpers.ts";
import { parseExposition, valueOf, type Family } from "./exposition.ts";

let w: PostsWorld;
let receiver: Receiver;
beforeAll(async () => {
  w = await startPostsWorld();
  receiver = startReceiver();
});
afterAll(async () => {
  await w.stop();
  await receiver.stop();
});

async function scrape(): Promise<Map<string, Family>> {
  const r = await w.s.request("GET", "/metrics", { key: null });
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parseExposition(r.text);
}

const EXPECTED: Record<string, string> = {
  herald_build_info: "gauge",
  herald_process_start_time_seconds: "gauge",
  herald_database_up: "gauge",
  herald_storage_free_bytes: "gauge",
  herald_storage_size_bytes: "gauge",
  herald_storage_writable: "gauge",
  herald_posts: "gauge",
  herald_posts_due: "gauge",
  herald_posts_oldest_due_age_seconds: "gauge",
  herald_webhook_deliveries_pending: "gauge",
  herald_webhook_oldest_pending_age_seconds: "gauge",
  herald_outbox_size: "gauge",
  herald_http_request_duration_seconds: "histogram",
  herald_publish_attempts_total: "counter",
  herald_publish_lateness_seconds: "histogram",
  herald_webhook_attempt_duration_seconds: "histogram",
  herald_webhook_delivery_latency_seconds: "histogram",
};

describe("GET /metrics", () => {
  test("Prometheus text whose values move with activity, without ids in labels", async () => {
    const first = await scrape();
    for (const [name, type] of Object.entries(EXPECTED))
      expect({ name, type: first.get(name)?.type }).toEqual({ name, type });
    expect(valueOf(first, "herald_database_up")).toBe(1);
    expect(valueOf(first, "herald_storage_writable")).toBe(1);
    expect(valueOf(first, "herald_storage_free_bytes")).toBeGreaterThan(0);
    expect(valueOf(first, "herald_storage_size_bytes")).toBeGreaterThan(
      valueOf(first, "herald_storage_free_bytes")!,
    );
    expect(valueOf(first, "herald_posts_due")).toBe(0);

    await mustCreateEndpoint(w.s, { url: receiver.url });
    const created = await createPosts(w, {
      when: "now",
      confirmed: true,
      group: "metrics",
      posts: [{ destination_id: w.destinationId, body: ["counted"] }],
    });
    expect(created.status).toBe(202);
    w.s.clock.advance(3_000); // claimed 3 s after its time
    const due = await scrape();
    expect(valueOf(due, "herald_posts_due")).toBe(1);
    expect(valueOf(due, "herald_posts_oldest_due_age_seconds")).toBe(3);
    expect(valueOf(due, "herald_posts", { state: "ready" })).toBe(1);

    await w.s.server.engine.runUntilIdle();
    const published = await scrape();
    expect(
      valueOf(published, "herald_publish_attempts_total", { network: "mastodon", outcome: "published" }),
    ).toBe(1);
    expect(valueOf(published, "herald_publish_lateness_seconds_count", { network: "mastodon" })).toBe(1);
    expect(
      valueOf(published, "herald_publish_lateness_seconds_bucket", { network: "mastodon", le: "2" }),
    ).toBe(0);
    expect(
      valueOf(published, "herald_publish_lateness_seconds_bucket", { network: "mastodon", le: "5" }),
    ).toBe(1);
    expect(valueOf(published, "herald_posts_due")).toBe(0);
    expect(valueOf(published, "herald_outbox_size", { outbox: "events" })).toBe(1);

    await runWebhooks(w.s.server);
    const delivered = await scrape();
    expect(receiver.received.length).toBe(1);
    expect(valueOf(delivered, "herald_outbox_size", { outbox: "events" })).toBe(0);
    expect(
      valueOf(delivered, "herald_webhook_attempt_duration_seconds_count", { outcome: "delivered" }),
    ).toBe(1);
    expect(valueOf(delivered, "herald_webhook_delivery_latency_seconds_count")).toBe(1);
    expect(valueOf(delivered, "herald_webhook_deliveries_pending")).toBe(0);

    // Requests by route pattern and status: the create above, and the scrapes themselves.
    const route = "/v1/workspaces/:workspace_id/posts";
    const posts = delivered
      .get("herald_http_request_duration_seconds")!
      .samples.filter((s) => s.labels.route === route);
    expect(posts.length).toBeGreaterThan(0);
    expect(
      valueOf(delivered, "herald_http_request_duration_seconds_count", {
        method: "POST",
        route,
        status: "202",
      }),
    ).toBe(1);
    const scrapes = { method: "GET", route: "/metrics", status: "200" };
    // Four scrapes so far; each is counted once answered, so this one sees the first three.
    expect(valueOf(delivered, "herald_http_request_duration_seconds_count", scrapes)).toBe(3);

    // No label value is an id, a path with one, or anything secret-looking.
    for (const family of delivered.values())
      for (const sample of family.samples)
        for (const value of Object.values(sample.labels))
          expect({ metric: sample.name, value }).not.toEqual({
            metric: sample.name,
            value: expect.stringMatching(
              /(^|[/_])(ws|acc|pst|ast|key|whe|dst|dlv|evt|usr)_[0-9a-z]{10,}|hk_(live|test)_/,
            ),
          });
  });

  test("HERALD_METRICS_TOKEN: the scrape needs it as a bearer token", async () => {
    const s = await startTestServer({ env: { HERALD_METRICS_TOKEN: "scrape-token-0123456789" } });
    try {
      const without = await s.request("GET", "/metrics", { key: null });
      expect(without.status).toBe(401);
      expect(without.headers.get("www-authenticate")).toBe("Bearer");
      expect((await s.request("GET", "/metrics", { key: "wrong" })).status).toBe(401);
      const ok = await s.request("GET", "/metrics", { key: "scrape-token-0123456789" });
      expect(ok.status).toBe(200);
      expect(parseExposition(ok.text).get("herald_database_up")?.samples[0]?.value).toBe(1);
      expect((await s.request("GET", "/health", { key: null })).status).toBe(200);
    } finally {
      await s.stop();
    }
  });
});
