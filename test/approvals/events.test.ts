import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mustCreateEndpoint, runWebhooks, startReceiver, type Receiver } from "../webhooks/helpers.ts";
import { awaitingPost, startApprovalWorld, type ApprovalWorld } from "./helpers.ts";

let w: ApprovalWorld;
let receiver: Receiver;
beforeAll(async () => {
  w = await startApprovalWorld();
  receiver = startReceiver();
});
afterAll(async () => {
  await w.stop();
  await receiver.stop();
});

const APPROVAL_EVENTS = ["post.approval-requested", "post.approved", "post.changes-requested"];

/** One post approved and one sent back, by the owner, after a member asked for both. */
async function approvalFlow(): Promise<{ approved: any; rejected: any }> {
  const approved = await awaitingPost(w);
  const rejected = await awaitingPost(w);
  const a = await w.call("POST", `/posts/${approved.id}/approve`, {
    confirmed: true,
    version: approved.version,
  });
  expect(a.status).toBe(200);
  const r = await w.call("POST", `/posts/${rejected.id}/reject`, {
    confirmed: true,
    comment: "Too <loud> & long",
  });
  expect(r.status).toBe(200);
  return { approved, rejected };
}

describe("webhooks", () => {
  test("only endpoints that list the approval events get them; the contract's four stay as they were", async () => {
    const byPath = (path: string) => receiver.received.filter((r) => r.path === path);
    const contractOnly = await mustCreateEndpoint(w.s, { url: `${receiver.url}/contract` });
    await mustCreateEndpoint(w.s, {
      url: `${receiver.url}/approvals`,
      event_types: APPROVAL_EVENTS,
      content_mode: "full",
    });
    expect(contractOnly.event_types).not.toContain("post.approved");
    const { approved, rejected } = await approvalFlow();
    await runWebhooks(w.s.server);
    expect(byPath("/hooks/contract")).toEqual([]);
    const got = byPath("/hooks/approvals").map((r) => [r.body.type, r.body.data.object.id]);
    expect(got.sort()).toEqual(
      [
        ["post.approval-requested", approved.id],
        ["post.approval-requested", rejected.id],
        ["post.approved", approved.id],
        ["post.changes-requested", rejected.id],
      ].sort(),
    );
    const changes = byPath("/hooks/approvals").find((r) => r.body.type === "post.changes-requested")!.body;
    expect(changes.workspace_id).toBe(w.ws);
    expect(changes.data.object).toMatchObject({
      id: rejected.id,
      object: "post",
      state: "draft",
      approval: { status: "changes_requested", requested_by: { kind: "credential" } },
      by: { kind: "credential" },
      comment: "Too <loud> & long",
      content: { body: ["Launch day"] },
    });
  });

  test("the API refuses an unknown event type", async () => {
    const r = await w.s.request("POST", `/v1/workspaces/${w.ws}/webhook-endpoints`, {
      body: { name: "x", url: `${receiver.url}/x`, event_types: ["post.rejected"] },
      headers: { "idempotency-key": "events-unknown-type" },
    });
    expect(r.status).toBe(400);
  });
});

describe("chat notifications", () => {
  test("settings never saved post the contract's types only: approval events are opt-in", async () => {
    const settings = await w.call("GET", "/chat-notifications");
    expect(settings.body.event_types).not.toContain("post.approved");
  });

  test("with the approval events chosen, each is posted with its own text", async () => {
    // Events from before notifications were switched on are not posted.
    w.s.clock.advance(1000);
    const on = await w.call("PATCH", "/chat-notifications", {
      chat_channel_id: "C0HERALD01",
      enabled: true,
      event_types: APPROVAL_EVENTS,
    });
    expect(on.status).toBe(200);
    w.slack.messages.length = 0;
    const { approved, rejected } = await approvalFlow();
    await w.s.server.scheduler.runNow("chat-notifications");
    const texts = w.slack.messages.map((m) => m.text);
    expect(texts).toHaveLength(4);
    const base = `${w.s.herald.config.baseUrl}/dashboard/workspaces/${w.ws}`;
    expect(texts.filter((t) => t.includes("asks for approval of a mastodon post"))).toHaveLength(2);
    expect(texts).toContainEqual(expect.stringContaining(`|Review it>`));
    expect(texts).toContainEqual(
      expect.stringMatching(
        new RegExp(`approved a mastodon post .*<${base}/posts/${approved.id}\\|Open the post>`),
      ),
    );
    const change = texts.find((t) => t.includes("requested changes"))!;
    expect(change).toContain("Too &lt;loud&gt; &amp; long");
    expect(change).toContain(`${base}/posts/${rejected.id}`);
  });
});
