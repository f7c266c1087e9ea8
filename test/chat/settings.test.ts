import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectProblem } from "../helpers/problems.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const ALL_TYPES = [
  "post.failed",
  "post.needs-attention",
  "destination.reauthorization_required",
  "webhook_endpoint.disabled",
];

const path = (s: TestServer, ws = s.owner.workspaceId) => `/v1/workspaces/${ws}/chat-notifications`;

describe("without HERALD_SLACK_BOT_TOKEN", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s.stop();
  });

  test("GET answers the defaults: off, no channel, every event type, inactive", async () => {
    const r = await s.request("GET", path(s));
    expect(r.status).toBe(200);
    expect(r.headers.get("etag")).toMatch(/^"/);
    expect(r.body).toEqual({
      object: "chat_notification_settings",
      workspace_id: s.owner.workspaceId,
      provider: "slack",
      chat_channel_id: null,
      enabled: false,
      event_types: ALL_TYPES,
      active: false,
      inactive_reason: "slack_not_configured",
      last_error: null,
      updated_at: null,
    });
  });

  test("PATCH saves the settings; the answer says notifications are inactive and why", async () => {
    const r = await s.request("PATCH", path(s), {
      body: {
        chat_channel_id: "C0HERALD01",
        enabled: true,
        event_types: ["webhook_endpoint.disabled", "post.failed"],
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      chat_channel_id: "C0HERALD01",
      enabled: true,
      event_types: ["post.failed", "webhook_endpoint.disabled"],
      active: false,
      inactive_reason: "slack_not_configured",
      updated_at: "2026-03-01T12:00:00.000Z",
    });
    const again = await s.request("GET", path(s));
    expect(again.body).toEqual(r.body);
    expect(again.headers.get("etag")).toBe(r.headers.get("etag"));
    const audit = await s.request("GET", "/v1/audit-records");
    expect(audit.body.data[0]).toMatchObject({
      action: "chat_notifications.updated",
      workspace_id: s.owner.workspaceId,
      target: { type: "chat_notification_settings", id: s.owner.workspaceId },
    });
  });

  test("If-Match: a stale ETag is 412, the current one is accepted", async () => {
    const current = await s.request("GET", path(s));
    const stale = await s.request("PATCH", path(s), {
      headers: { "if-match": '"stale"' },
      body: { enabled: false },
    });
    expectProblem(stale, 412, "public_precondition_failed");
    const ok = await s.request("PATCH", path(s), {
      headers: { "if-match": current.headers.get("etag")! },
      body: { enabled: false },
    });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ enabled: false, inactive_reason: "slack_not_configured" });
  });

  const bad: { name: string; body: unknown; pointer: string }[] = [
    {
      name: "a channel name instead of an id",
      body: { chat_channel_id: "#alerts" },
      pointer: "/chat_channel_id",
    },
    { name: "a lower-case id", body: { chat_channel_id: "c0herald01" }, pointer: "/chat_channel_id" },
    { name: "an empty channel", body: { chat_channel_id: "" }, pointer: "/chat_channel_id" },
    { name: "a channel that is a number", body: { chat_channel_id: 42 }, pointer: "/chat_channel_id" },
    { name: "enabled as a string", body: { enabled: "yes" }, pointer: "/enabled" },
    { name: "an unknown event type", body: { event_types: ["post.published"] }, pointer: "/event_types/0" },
    {
      name: "an event type listed twice",
      body: { event_types: ["post.failed", "post.failed"] },
      pointer: "/event_types/1",
    },
    { name: "event_types not an array", body: { event_types: "post.failed" }, pointer: "/event_types" },
    { name: "an unknown property", body: { channel: "C0HERALD01" }, pointer: "/channel" },
    {
      name: "enabling with no event type",
      body: { chat_channel_id: "C0HERALD01", enabled: true, event_types: [] },
      pointer: "/event_types",
    },
    {
      name: "enabling without a channel",
      body: { chat_channel_id: null, enabled: true },
      pointer: "/chat_channel_id",
    },
  ];
  for (const c of bad) {
    test(`${c.name} is 400 at ${c.pointer} and changes nothing`, async () => {
      const before = await s.request("GET", path(s));
      const r = await s.request("PATCH", path(s), { body: c.body });
      expectProblem(r, 400, "public_invalid_request", [c.pointer]);
      expect((await s.request("GET", path(s))).body).toEqual(before.body);
    });
  }

  test("clearing the channel while disabled is allowed", async () => {
    const r = await s.request("PATCH", path(s), { body: { chat_channel_id: null } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ chat_channel_id: null, enabled: false });
  });

  test("another account's workspace is 404; scopes are notifications:read and :write", async () => {
    const other = await s.bootstrap();
    expectProblem(await s.request("GET", path(s, other.workspaceId)), 404, "public_not_found");
    const reader = await s.createKey({ scopes: ["notifications:read"] });
    expect((await s.request("GET", path(s), { key: reader })).status).toBe(200);
    expectProblem(
      await s.request("PATCH", path(s), { key: reader, body: { enabled: false } }),
      403,
      "public_scope_missing",
    );
  });
});

describe("with HERALD_SLACK_BOT_TOKEN", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { HERALD_SLACK_BOT_TOKEN: "xoxb-test" } });
  });
  afterAll(async () => {
    await s.stop();
  });

  test("the reason follows the settings: disabled, then no channel, then active", async () => {
    expect((await s.request("GET", path(s))).body).toMatchObject({
      active: false,
      inactive_reason: "disabled",
    });
    const on = await s.request("PATCH", path(s), { body: { chat_channel_id: "C0HERALD01", enabled: true } });
    expect(on.body).toMatchObject({ active: true, inactive_reason: null, enabled: true });
  });
});
