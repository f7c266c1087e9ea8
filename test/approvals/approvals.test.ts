import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectProblem } from "../helpers/problems.ts";
import { idem } from "../posts/helpers.ts";
import { awaitingPost, postBody, startApprovalWorld, type ApprovalWorld } from "./helpers.ts";

let w: ApprovalWorld;
beforeAll(async () => {
  w = await startApprovalWorld();
});
afterAll(async () => {
  await w.stop();
});

const FUTURE = "2026-03-02T09:00:00.000Z";

describe("approval_required on the workspace", () => {
  test("is shown on the workspace; changing it needs posts:approve as well as workspaces:write", async () => {
    expect((await w.call("GET", "")).body.approval_required).toBe(true);
    const writer = await w.s.createKey({ scopes: ["workspaces:read", "workspaces:write"] });
    expectProblem(
      await w.call("PATCH", "", { approval_required: false }, writer),
      403,
      "public_scope_missing",
    );
    expect((await w.call("PATCH", "", { name: "Renamed" }, writer)).status).toBe(200);
    expect((await w.call("GET", "")).body.approval_required).toBe(true);
  });
});

describe("a request that would publish or schedule, from a credential without posts:approve", () => {
  const cases = [
    { when: FUTURE, requested_when: FUTURE },
    { when: "now", requested_when: "now" },
    { when: "2026-03-02T10:00:00+01:00", requested_when: "2026-03-02T10:00:00+01:00" },
  ];
  for (const c of cases)
    test(`when ${c.when}: 202, stored as a draft with approval requested`, async () => {
      const r = await w.call("POST", "/posts", postBody(w, c.when), w.memberKey);
      expect(r.status).toBe(202);
      expect(r.headers.get("retry-after")).toBeNull();
      const post = r.body.posts[0];
      expect(post).toMatchObject({
        state: "draft",
        scheduled_at: null,
        destination_id: w.destinationId,
        approval: {
          status: "requested",
          requested_when: c.requested_when,
          requested_at: new Date(w.s.clock.now()).toISOString(),
          requested_by: { kind: "credential" },
          history: [{ status: "requested", by: { kind: "credential" } }],
        },
      });
      // GET shows the same approval; the listing filter finds it.
      expect((await w.call("GET", `/posts/${post.id}`)).body.approval).toEqual(post.approval);
      const listed = await w.call("GET", `/posts?approval=requested&group=${post.group}`);
      expect(listed.body.data.map((p: any) => p.id)).toEqual([post.id]);
    });

  test("drafts stay drafts (201, no approval); the owner's request schedules at once", async () => {
    const draft = await w.call("POST", "/posts", postBody(w, "draft"), w.memberKey);
    expect(draft.status).toBe(201);
    expect(draft.body.posts[0].approval).toBeNull();
    const owner = await w.call("POST", "/posts", postBody(w, FUTURE));
    expect(owner.status).toBe(201);
    expect(owner.body.posts[0]).toMatchObject({ state: "scheduled", approval: null });
  });

  test("publish drafts from the member: 202, the drafts wait for approval with the requested when", async () => {
    const draft = (await w.call("POST", "/posts", postBody(w, "draft"), w.memberKey)).body.posts[0];
    const r = await w.call(
      "POST",
      "/posts/publish",
      {
        confirmed: true,
        when: FUTURE,
        posts: [{ id: draft.id, version: draft.version, destination_id: w.destinationId }],
      },
      w.memberKey,
    );
    expect(r.status).toBe(202);
    expect(r.body.posts[0]).toMatchObject({
      id: draft.id,
      state: "draft",
      approval: { status: "requested", requested_when: FUTURE },
    });
  });

  test("the request is still checked as publishing: no confirmed is 400 at /confirmed", async () => {
    const body = { ...postBody(w, FUTURE), confirmed: undefined };
    expectProblem(await w.call("POST", "/posts", body, w.memberKey), 400, "public_invalid_request", [
      "/confirmed",
    ]);
  });
});

describe("approve", () => {
  test("the owner approves: the post leaves draft for its requested time, approval approved", async () => {
    const post = await awaitingPost(w, FUTURE);
    const r = await w.call("POST", `/posts/${post.id}/approve`, { confirmed: true, version: post.version });
    expect({ status: r.status, text: r.text }).toMatchObject({ status: 200 });
    expect(r.headers.get("etag")).toBe(`"${post.id}.v${r.body.version}"`);
    expect(r.body).toMatchObject({ state: "scheduled", scheduled_at: FUTURE, schedule_mode: "exact" });
    expect(r.body.approval.status).toBe("approved");
    expect(r.body.approval.history.map((s: any) => s.status)).toEqual(["requested", "approved"]);
    expect(r.body.approval.history[1].by.kind).toBe("credential");
  });

  test("approving a post that asked for now publishes it", async () => {
    const post = await awaitingPost(w, "now");
    const r = await w.call("POST", `/posts/${post.id}/approve`, { confirmed: true, version: post.version });
    expect(r.body.state).toBe("ready");
    await w.s.server.engine.runUntilIdle();
    expect((await w.call("GET", `/posts/${post.id}`)).body.state).toBe("published");
  });

  const refusals: {
    name: string;
    body: (post: any) => Record<string, unknown>;
    key?: () => string;
    status: number;
    code: string;
    pointers?: string[];
  }[] = [
    {
      name: "without confirmed",
      body: (p) => ({ version: p.version }),
      status: 400,
      code: "public_invalid_request",
      pointers: ["/confirmed"],
    },
    {
      name: "confirmed false",
      body: (p) => ({ confirmed: false, version: p.version }),
      status: 400,
      code: "public_invalid_request",
      pointers: ["/confirmed"],
    },
    {
      name: "a stale version",
      body: (p) => ({ confirmed: true, version: p.version + 1 }),
      status: 409,
      code: "public_version_conflict",
      pointers: ["/version"],
    },
    {
      name: "a member's key (no posts:approve)",
      body: (p) => ({ confirmed: true, version: p.version }),
      key: () => w.memberKey,
      status: 403,
      code: "public_scope_missing",
    },
  ];
  for (const c of refusals)
    test(`${c.name}: ${c.status} ${c.code}, the post still awaits approval`, async () => {
      const post = await awaitingPost(w);
      expectProblem(
        await w.call("POST", `/posts/${post.id}/approve`, c.body(post), c.key?.()),
        c.status,
        c.code,
        c.pointers,
      );
      expect((await w.call("GET", `/posts/${post.id}`)).body).toMatchObject({
        state: "draft",
        approval: { status: "requested" },
      });
    });

  test("an edit while awaiting approval moves the version on: approving what was seen is 409", async () => {
    const post = await awaitingPost(w);
    const seen = await w.call("GET", `/posts/${post.id}`);
    const edited = await w.s.request("PATCH", `/v1/workspaces/${w.ws}/posts/${post.id}`, {
      key: w.memberKey,
      body: { body: ["Launch day, edited"] },
      headers: { "if-match": seen.headers.get("etag")! },
    });
    expect(edited.status).toBe(200);
    expect(edited.body.approval.status).toBe("requested");
    expectProblem(
      await w.call("POST", `/posts/${post.id}/approve`, { confirmed: true, version: post.version }),
      409,
      "public_version_conflict",
      ["/version"],
    );
    const r = await w.call("POST", `/posts/${post.id}/approve`, {
      confirmed: true,
      version: edited.body.version,
    });
    expect(r.body.payload.body).toEqual(["Launch day, edited"]);
  });

  test("a post not awaiting approval is 409 public_conflict saying so; approving twice too", async () => {
    const draft = (await w.call("POST", "/posts", postBody(w, "draft"))).body.posts[0];
    const never = await w.call("POST", `/posts/${draft.id}/approve`, {
      confirmed: true,
      version: draft.version,
    });
    expectProblem(never, 409, "public_conflict");
    expect(never.body.detail).toContain("not awaiting approval");
    const post = await awaitingPost(w);
    expect(
      (await w.call("POST", `/posts/${post.id}/approve`, { confirmed: true, version: post.version })).status,
    ).toBe(200);
    const again = await w.call("POST", `/posts/${post.id}/approve`, {
      confirmed: true,
      version: post.version,
    });
    expectProblem(again, 409, "public_conflict");
    expect(again.body.detail).toContain("not awaiting approval");
  });

  test("the same Idempotency-Key replays the answer: one approval step", async () => {
    const post = await awaitingPost(w);
    const headers = idem();
    const path = `/v1/workspaces/${w.ws}/posts/${post.id}/approve`;
    const body = { confirmed: true, version: post.version };
    const first = await w.s.request("POST", path, { body, headers });
    const second = await w.s.request("POST", path, { body, headers });
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(first.body.approval.history.map((s: any) => s.status)).toEqual(["requested", "approved"]);
  });

  test("a requested time that has passed is 422: the requester publishes again with a new time", async () => {
    const post = await awaitingPost(w, "2026-03-01T12:30:00Z");
    w.s.clock.advance(60 * 60 * 1000);
    expectProblem(
      await w.call("POST", `/posts/${post.id}/approve`, { confirmed: true, version: post.version }),
      422,
      "public_unpublishable",
      ["/when"],
    );
  });
});

describe("reject", () => {
  test("needs a comment (400 at /comment) and confirmed (400 at /confirmed)", async () => {
    const post = await awaitingPost(w);
    expectProblem(
      await w.call("POST", `/posts/${post.id}/reject`, { confirmed: true }),
      400,
      "public_invalid_request",
      ["/comment"],
    );
    expectProblem(
      await w.call("POST", `/posts/${post.id}/reject`, { confirmed: true, comment: "   " }),
      400,
      "public_invalid_request",
      ["/comment"],
    );
    expectProblem(
      await w.call("POST", `/posts/${post.id}/reject`, { comment: "No" }),
      400,
      "public_invalid_request",
      ["/confirmed"],
    );
    expectProblem(
      await w.call("POST", `/posts/${post.id}/reject`, { confirmed: true, comment: "No" }, w.memberKey),
      403,
      "public_scope_missing",
    );
  });

  test("keeps the draft with changes_requested and adds the comment; publishing again asks again", async () => {
    const post = await awaitingPost(w);
    const r = await w.call("POST", `/posts/${post.id}/reject`, {
      confirmed: true,
      comment: "Use the new name.",
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ state: "draft", approval: { status: "changes_requested" } });
    const comments = await w.call("GET", `/posts/${post.id}/comments`);
    expect(comments.body.data).toEqual([
      {
        id: expect.stringMatching(/^cmt_/),
        object: "post_comment",
        post_id: post.id,
        author: { kind: "credential", name: expect.any(String) },
        body: "Use the new name.",
        created_at: new Date(w.s.clock.now()).toISOString(),
      },
    ]);
    expectProblem(
      await w.call("POST", `/posts/${post.id}/reject`, { confirmed: true, comment: "Again" }),
      409,
      "public_conflict",
    );
    const again = await w.call(
      "POST",
      "/posts/publish",
      {
        confirmed: true,
        when: FUTURE,
        posts: [{ id: post.id, version: r.body.version, destination_id: w.destinationId }],
      },
      w.memberKey,
    );
    expect(again.status).toBe(202);
    expect(again.body.posts[0].approval.history.map((s: any) => s.status)).toEqual([
      "requested",
      "changes_requested",
      "requested",
    ]);
  });
});

describe("comments", () => {
  test("a member comments; the listing is newest first and paged", async () => {
    const post = (await w.call("POST", "/posts", postBody(w, "draft"))).body.posts[0];
    for (const body of ["first", "second", "third"]) {
      const r = await w.call("POST", `/posts/${post.id}/comments`, { body }, w.memberKey);
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ object: "post_comment", body, author: { kind: "credential" } });
    }
    const page = await w.call("GET", `/posts/${post.id}/comments?limit=2`);
    expect(page.body.data.map((c: any) => c.body)).toEqual(["third", "second"]);
    expect(page.body.has_more).toBe(true);
    const next = await w.call("GET", `/posts/${post.id}/comments?limit=2&after=${page.body.next_cursor}`);
    expect(next.body.data.map((c: any) => c.body)).toEqual(["first"]);
    expect(next.body.has_more).toBe(false);
  });

  const bad = [
    { name: "an empty body", body: { body: "" }, pointer: "/body" },
    { name: "only spaces", body: { body: "  " }, pointer: "/body" },
    { name: "too long", body: { body: "x".repeat(5001) }, pointer: "/body" },
    { name: "an unknown property", body: { body: "hi", pinned: true }, pointer: "/pinned" },
  ];
  for (const c of bad)
    test(`${c.name}: 400 at ${c.pointer}`, async () => {
      const post = (await w.call("POST", "/posts", postBody(w, "draft"))).body.posts[0];
      expectProblem(
        await w.call("POST", `/posts/${post.id}/comments`, c.body),
        400,
        "public_invalid_request",
        [c.pointer],
      );
    });

  test("an unknown post is 404; a key without posts:write cannot comment (403)", async () => {
    expectProblem(await w.call("POST", "/posts/send_nope/comments", { body: "hi" }), 404, "public_not_found");
    expectProblem(await w.call("GET", "/posts/send_nope/comments"), 404, "public_not_found");
    const reader = await w.s.createKey({ scopes: ["posts:read"] });
    const post = (await w.call("POST", "/posts", postBody(w, "draft"))).body.posts[0];
    expectProblem(
      await w.call("POST", `/posts/${post.id}/comments`, { body: "hi" }, reader),
      403,
      "public_scope_missing",
    );
    expect((await w.call("GET", `/posts/${post.id}/comments`, undefined, reader)).status).toBe(200);
  });
});
