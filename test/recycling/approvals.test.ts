// Recycling in a workspace that requires approval: the member's post waits with its plan, and once
// the owner approves it and it is published, its copies are scheduled without another approval.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startApprovalWorld, type ApprovalWorld } from "../approvals/helpers.ts";

let w: ApprovalWorld;
beforeAll(async () => {
  w = await startApprovalWorld();
});
afterAll(() => w.stop());

test("an approved original's copies need no approval of their own", async () => {
  const recycle = { every_days: 3, count: 2, variations: [["Approved variation"]] };
  const asked = await w.call(
    "POST",
    "/posts",
    {
      when: "now",
      confirmed: true,
      group: "approved-evergreen",
      posts: [{ destination_id: w.destinationId, body: ["Approved evergreen"], recycle }],
    },
    w.memberKey,
  );
  expect({ status: asked.status, text: asked.text }).toMatchObject({ status: 202 });
  const waiting = asked.body.posts[0];
  expect(waiting).toMatchObject({ state: "draft", approval: { status: "requested" } });
  expect(waiting.recycle).toMatchObject({ every_days: 3, count: 2, variations: [["Approved variation"]] });

  const approved = await w.call("POST", `/posts/${waiting.id}/approve`, {
    confirmed: true,
    version: waiting.version,
  });
  expect({ status: approved.status, text: approved.text }).toMatchObject({ status: 200 });
  await w.s.server.engine.runUntilIdle();

  const original = (await w.call("GET", `/posts/${waiting.id}`)).body;
  expect(original.state).toBe("published");
  const copy = (await w.call("GET", `/posts/${original.recycle.next_copy_id}`)).body;
  expect(copy).toMatchObject({
    state: "scheduled",
    approval: null,
    recycled_from: original.id,
    recycle_number: 1,
    payload: { body: ["Approved variation"] },
  });
  w.s.clock.set(copy.scheduled_at);
  await w.s.server.engine.runUntilIdle();
  expect((await w.call("GET", `/posts/${copy.id}`)).body.state).toBe("published");
  expect(w.mastodon.statuses.filter((s) => s.text === "Approved variation")).toHaveLength(1);
});
