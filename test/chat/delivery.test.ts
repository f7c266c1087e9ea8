import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { tables } from "../helpers/tables.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { markDestinationForReauthorization } from "../../src/modules/chat/events.ts";
import { CHAT_RETRY_WINDOW_MS, chatRetryDelayMs } from "../../src/modules/chat/delivery.ts";
import { insertOutboxEvent } from "../../src/modules/webhooks/repo.ts";
import { startSlackFake, type SlackFake } from "../fakes/slack.ts";
import { insertXDestination } from "../posts/fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const { chatNotifications, destinations } = tables;

const HOUR = 60 * 60 * 1000;
let slack: SlackFake;
let s: TestServer;

beforeAll(async () => {
  slack = startSlackFake();
  s = await startTestServer({
    env: { HERALD_SLACK_BOT_TOKEN: slack.token, HERALD_SLACK_API_BASE: slack.origin },
  });
});
afterAll(async () => {
  await s.stop();
  await slack.stop();
});
afterEach(() => {
  slack.messages.length = 0;
  slack.requests.length = 0;
});

const settingsPath = (ws: string) => `/v1/workspaces/${ws}/chat-notifications`;
const run = () => s.server.scheduler.runNow("chat-notifications");
const rows = () => s.herald.db.select().from(chatNotifications).orderBy(chatNotifications.id);

/** A new workspace with notifications on for `channel`. */
async function workspaceWithChat(channel = "C0HERALD01", eventTypes?: string[]): Promise<string> {
  const ws = (await s.request("POST", "/v1/workspaces", { body: { name: `Team <${channel}> & co` } })).body
    .id;
  const body: Record<string, unknown> = { chat_channel_id: channel, enabled: true };
  if (eventTypes) body.event_types = eventTypes;
  const r = await s.request("PATCH", settingsPath(ws), { body });
  expect(r.status).toBe(200);
  expect(r.body.active).toBe(true);
  return ws;
}

function postEvent(ws: string, type: string, extra: Record<string, unknown> = {}) {
  return inTransaction(s.herald.db, (tx) =>
    insertOutboxEvent(
      tx,
      {
        workspaceId: ws,
        type,
        payload: {
          id: "send_01testpost",
          object: "post",
          channel: "x",
          state: type === "post.failed" ? "failed" : "needs-attention",
          error: { code: "provider_rejected", message: "The text is too long for X" },
          ...extra,
        },
      },
      s.clock.now(),
    ),
  );
}

describe("posting to Slack", () => {
  test("a failed post is posted with the bot token, to the channel, escaped, with a link", async () => {
    const ws = await workspaceWithChat();
    await postEvent(ws, "post.failed");
    await run();
    expect(slack.messages.length).toBe(1);
    const message = slack.messages[0]!;
    expect(message.channel).toBe("C0HERALD01");
    expect(message.text).toContain("A x post failed in *Team &lt;C0HERALD01&gt; &amp; co*");
    expect(message.text).toContain("The text is too long for X");
    expect(message.text).toContain(
      `<${s.url}/dashboard/workspaces/${ws}/posts/send_01testpost|Open the post>`,
    );
    const request = slack.requests.at(-1)!;
    expect(request).toMatchObject({ method: "POST", path: "/api/chat.postMessage" });
    expect(request.headers.authorization).toBe(`Bearer ${slack.token}`);
    expect(request.headers["content-type"]).toBe("application/json; charset=utf-8");
    const [row] = (await rows()).filter((r) => r.workspaceId === ws);
    expect(row).toMatchObject({ status: "sent", attempts: 1, sentAt: s.clock.now(), lastError: null });
    // Sent once: nothing goes out again.
    await run();
    expect(slack.messages.length).toBe(1);
  });

  test("the four event types are posted; other types, workspaces and older events are not", async () => {
    const before = await (async () => {
      const ws = (await s.request("POST", "/v1/workspaces", { body: { name: "Early" } })).body.id;
      await postEvent(ws, "post.failed"); // happened before notifications were switched on
      s.clock.advance(1);
      return ws;
    })();
    await s.request("PATCH", settingsPath(before), {
      body: { chat_channel_id: "C0HERALD01", enabled: true },
    });
    const ws = await workspaceWithChat();
    const quiet = (await s.request("POST", "/v1/workspaces", { body: { name: "Quiet" } })).body.id;
    const destination = await insertXDestination(s, ws);
    await postEvent(ws, "post.needs-attention", { state: "missed", error: null });
    await postEvent(ws, "post.published");
    await postEvent(quiet, "post.failed");
    await inTransaction(s.herald.db, (tx) =>
      markDestinationForReauthorization(tx, destination, s.clock.now()),
    );
    await inTransaction(s.herald.db, (tx) =>
      insertOutboxEvent(
        tx,
        {
          workspaceId: ws,
          type: "webhook_endpoint.disabled",
          payload: {
            id: "wh_01x",
            object: "webhook_endpoint",
            name: "CRM hook",
            disabled_reason: "delivery_failures",
          },
        },
        s.clock.now(),
      ),
    );
    await run();
    const texts = slack.messages.map((m) => m.text);
    expect(texts.length).toBe(3);
    expect(texts[0]).toStartWith("A x post missed its time in");
    expect(texts[1]).toContain("The x destination Herald on X in");
    expect(texts[1]).toContain(`/dashboard/workspaces/${ws}/destinations|Reconnect it>`);
    expect(texts[2]).toContain("The webhook endpoint CRM hook in");
    expect(texts[2]).toContain(`/dashboard/workspaces/${ws}/webhooks/wh_01x|Open the endpoint>`);
    const [dest] = await s.herald.db.select().from(destinations).where(eq(destinations.id, destination));
    expect(dest!.unavailableReason).toBe("reauthorization_required");
  });

  test("a destination already marked is not announced again", async () => {
    const ws = await workspaceWithChat();
    const destination = await insertXDestination(s, ws);
    for (let i = 0; i < 3; i++)
      await inTransaction(s.herald.db, (tx) =>
        markDestinationForReauthorization(tx, destination, s.clock.now()),
      );
    await run();
    expect(slack.messages.length).toBe(1);
  });

  test("only the event types chosen are posted", async () => {
    const ws = await workspaceWithChat("C0HERALD01", ["webhook_endpoint.disabled"]);
    await postEvent(ws, "post.failed");
    await run();
    expect(slack.messages.length).toBe(0);
  });
});

describe("Slack's refusals and retries", () => {
  test("429: Retry-After is honoured for the whole bot; the rest of the round waits too", async () => {
    const ws = await workspaceWithChat();
    await postEvent(ws, "post.failed");
    await postEvent(ws, "post.needs-attention");
    slack.failNext(1, { status: 429, headers: { "retry-after": "7" } });
    const start = s.clock.now();
    await run();
    expect(slack.messages.length).toBe(0);
    expect(slack.requests.length).toBe(1); // the second was not tried during the pause
    const mine = (await rows()).filter((r) => r.workspaceId === ws);
    expect(mine.map((r) => [r.status, r.attempts, r.nextAttemptAt])).toEqual([
      ["pending", 1, start + 7000],
      ["pending", 0, start + 7000],
    ]);
    expect(mine[0]!.lastError).toBe("HTTP 429 rate limited");
    s.clock.advance(6999);
    await run();
    expect(slack.requests.length).toBe(1);
    s.clock.advance(1);
    await run();
    expect(slack.messages.length).toBe(2);
  });

  test("5xx and connection failures back off from 30 s; after 72 h the notification fails", async () => {
    const ws = await workspaceWithChat();
    await postEvent(ws, "post.failed");
    const made = s.clock.now();
    slack.failNext(1, { status: 503 });
    await run();
    let [row] = (await rows()).filter((r) => r.workspaceId === ws);
    expect(row).toMatchObject({ status: "pending", attempts: 1, lastError: "HTTP 503" });
    expect(row!.nextAttemptAt).toBe(made + chatRetryDelayMs(1));
    // internal_error in an HTTP 200 answer is Slack's own "try again".
    slack.failNext(1, { status: 200, body: { ok: false, error: "internal_error" } });
    s.clock.set(row!.nextAttemptAt);
    await run();
    [row] = (await rows()).filter((r) => r.workspaceId === ws);
    expect(row).toMatchObject({ status: "pending", attempts: 2, lastError: "internal_error" });
    expect(row!.nextAttemptAt).toBe(s.clock.now() + chatRetryDelayMs(2));
    // Past the window, the next failure is the last.
    slack.failNext(1, { status: 500 });
    s.clock.set(made + CHAT_RETRY_WINDOW_MS);
    await run();
    [row] = (await rows()).filter((r) => r.workspaceId === ws);
    expect(row).toMatchObject({ status: "failed", attempts: 3, lastError: "HTTP 500" });
    expect([1, 2, 3, 7, 8, 20].map(chatRetryDelayMs)).toEqual([
      30_000, 60_000, 120_000, 1_920_000, 3_600_000, 3_600_000,
    ]);
  });

  const permanent = [
    { name: "the bot was not invited", channel: "C0NOTJOIND", error: "not_in_channel" },
    { name: "an unknown channel", channel: "C0NOSUCHCH", error: "channel_not_found" },
    { name: "an archived channel", channel: "C0ARCHIVED", error: "is_archived" },
  ];
  for (const c of permanent) {
    test(`${c.name} (${c.error}) fails at once and shows on the settings`, async () => {
      const ws = await workspaceWithChat(c.channel);
      await postEvent(ws, "post.failed");
      await run();
      const [row] = (await rows()).filter((r) => r.workspaceId === ws);
      expect(row).toMatchObject({ status: "failed", attempts: 1, lastError: c.error });
      const settings = await s.request("GET", settingsPath(ws));
      expect(settings.body.last_error).toEqual({
        message: c.error,
        occurred_at: new Date(s.clock.now()).toISOString(),
      });
      s.clock.advance(HOUR);
      await run();
      expect(slack.requests.length).toBe(1);
      // Choosing another channel clears the error.
      const fixed = await s.request("PATCH", settingsPath(ws), { body: { chat_channel_id: "C0HERALD01" } });
      expect(fixed.body.last_error).toBeNull();
    });
  }

  test("a wrong token (invalid_auth) fails at once", async () => {
    const ws = await workspaceWithChat();
    const token = slack.token;
    slack.token = "xoxb-rotated";
    try {
      await postEvent(ws, "post.failed");
      await run();
      const [row] = (await rows()).filter((r) => r.workspaceId === ws);
      expect(row).toMatchObject({ status: "failed", lastError: "invalid_auth" });
    } finally {
      slack.token = token;
    }
  });
});

describe("without a token", () => {
  test("events make no notifications and nothing is posted", async () => {
    const other = await startTestServer({ env: { HERALD_SLACK_API_BASE: slack.origin } });
    try {
      const ws = other.owner.workspaceId;
      await other.request("PATCH", settingsPath(ws), {
        body: { chat_channel_id: "C0HERALD01", enabled: true },
      });
      await inTransaction(other.herald.db, (tx) =>
        insertOutboxEvent(
          tx,
          { workspaceId: ws, type: "post.failed", payload: { id: "send_1" } },
          other.clock.now(),
        ),
      );
      await other.server.scheduler.runNow("chat-notifications");
      expect(await other.herald.db.select().from(chatNotifications)).toEqual([]);
      expect(slack.requests.length).toBe(0);
    } finally {
      await other.stop();
    }
  });
});
