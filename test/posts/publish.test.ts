import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectProblem } from "../helpers/problems.ts";
import { createPosts, getPost, idem, startPostsWorld, type PostsWorld } from "./helpers.ts";

let w: PostsWorld;
beforeAll(async () => {
  w = await startPostsWorld();
});
afterAll(async () => {
  await w.stop();
});

describe("publishing now on Mastodon", () => {
  test("a three-item thread goes out once, in order, each a reply to the previous one", async () => {
    const created = await createPosts(w, {
      when: "now",
      confirmed: true,
      group: "launch",
      posts: [{ destination_id: w.destinationId, body: ["one", "two", "three"] }],
    });
    expect(created.status).toBe(202);
    expect(Number(created.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(created.body.object).toBe("post_set");
    const post = created.body.posts[0];
    expect(post).toMatchObject({
      state: "ready",
      terminal: false,
      action_required: false,
      schedule_mode: "now",
      channel: "mastodon",
      group: "launch",
      attempt_count: 0,
    });
    await w.s.server.engine.runUntilIdle();
    const after = await getPost(w, post.id, true);
    expect(after.state).toBe("published");
    expect(after.terminal).toBe(true);
    expect(after.receipts.map((r: any) => r.item_index)).toEqual([0, 1, 2]);
    const statuses = w.mastodon.statuses.slice(-3);
    expect(statuses.map((s) => s.text)).toEqual(["one", "two", "three"]);
    expect(statuses[0]!.inReplyToId).toBeNull();
    expect(statuses[1]!.inReplyToId).toBe(statuses[0]!.id);
    expect(statuses[2]!.inReplyToId).toBe(statuses[1]!.id);
    expect(after.receipts[0].url).toBe(statuses[0]!.url);
    expect(after.attempts).toHaveLength(1);
    expect(after.attempts[0]).toMatchObject({
      object: "publishing_attempt",
      number: 1,
      trigger: "initial",
      status: "succeeded",
    });
    expect(after.published_at).not.toBeNull();
  });
});

describe("create validation", () => {
  const base = () => ({
    when: "now",
    confirmed: true,
    group: "g1",
    posts: [{ destination_id: w.destinationId, body: ["hi"] }],
  });
  const cases: { name: string; body: (b: any) => any; status: number; code: string; pointers?: string[] }[] =
    [
      {
        name: "confirmed missing",
        body: (b) => ({ ...b, confirmed: undefined }),
        status: 400,
        code: "public_invalid_request",
        pointers: ["/confirmed"],
      },
      {
        name: "when without offset",
        body: (b) => ({ ...b, when: "2026-05-01T10:00:00" }),
        status: 400,
        code: "public_invalid_request",
        pointers: ["/when"],
      },
      {
        name: "time_zone with queue",
        body: (b) => ({ ...b, when: "queue", time_zone: "UTC" }),
        status: 400,
        code: "public_invalid_request",
        pointers: ["/time_zone"],
      },
      {
        name: "bad time zone",
        body: (b) => ({ ...b, time_zone: "Mars/Base" }),
        status: 400,
        code: "public_invalid_request",
        pointers: ["/time_zone"],
      },
      {
        name: "group pattern",
        body: (b) => ({ ...b, group: "has space" }),
        status: 400,
        code: "public_invalid_request",
        pointers: ["/group"],
      },
      {
        name: "group 201 chars",
        body: (b) => ({ ...b, group: "g".repeat(201) }),
        status: 400,
        code: "public_invalid_request",
        pointers: ["/group"],
      },
      {
        name: "no posts",
        body: (b) => ({ ...b, posts: [] }),
        status: 400,
        code: "public_invalid_request",
        pointers: ["/posts"],
      },
      {
        name: "101 posts",
        body: (b) => ({ ...b, posts: Array.from({ length: 101 }, () => b.posts[0]) }),
        status: 400,
        code: "public_invalid_request",
        pointers: ["/posts"],
      },
      {
        name: "publishing without destination_id",
        body: (b) => ({ ...b, posts: [{ channel: "mastodon", body: ["x"] }] }),
        status: 400,
        code: "public_invalid_request",
        pointers: ["/posts/0/destination_id"],
      },
      {
        name: "unknown destination",
        body: (b) => ({ ...b, posts: [{ destination_id: "dest_nope", body: ["x"] }] }),
        status: 422,
        code: "public_unpublishable",
        pointers: ["/posts/0/destination_id"],
      },
      {
        name: "text over the instance limit",
        body: (b) => ({ ...b, posts: [{ destination_id: w.destinationId, body: ["ok", "x".repeat(501)] }] }),
        status: 422,
        code: "public_unpublishable",
        pointers: ["/posts/0/body/1"],
      },
      {
        name: "unknown property",
        body: (b) => ({ ...b, extra: 1 }),
        status: 400,
        code: "public_invalid_request",
        pointers: ["/extra"],
      },
    ];
  for (const c of cases) {
    test(c.name, async () => {
      const r = await createPosts(w, c.body(base()));
      expectProblem(r, c.status, c.code, c.pointers);
    });
  }

  test("500 characters is accepted at the boundary", async () => {
    const r = await createPosts(w, {
      ...base(),
      group: "boundary",
      when: "2026-03-02T12:00:00Z",
      posts: [{ destination_id: w.destinationId, body: ["x".repeat(500)] }],
    });
    expect(r.status).toBe(201);
  });

  test("Idempotency-Key is required to publish, not for drafts", async () => {
    const r = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, { body: base() });
    expectProblem(r, 400, "public_invalid_request");
    expect(r.body.errors[0].parameter).toBe("Idempotency-Key");
    const draft = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, {
      body: { when: "draft", group: "nokey", posts: [{ channel: "mastodon", body: ["d"] }] },
    });
    expect(draft.status).toBe(201);
  });

  test("a test key cannot publish", async () => {
    const key = await w.s.createKey({ environment: "test" });
    const r = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, {
      key,
      body: base(),
      headers: idem(),
    });
    expectProblem(r, 403, "public_live_credential_required");
  });
});

describe("drafts and the group constraint", () => {
  test("one draft per channel per group", async () => {
    const first = await createPosts(w, {
      when: "draft",
      group: "drafty",
      posts: [{ channel: "mastodon", body: ["d1"] }],
    });
    expect(first.status).toBe(201);
    expect(first.body.posts[0]).toMatchObject({
      state: "draft",
      editable: true,
      available_actions: ["update", "publish", "delete"],
      destination_id: null,
    });
    const second = await createPosts(w, {
      when: "draft",
      group: "drafty",
      posts: [{ destination_id: w.destinationId, body: ["d2"] }],
    });
    expectProblem(second, 409, "public_post_group_channel_conflict");
    const publish = await createPosts(w, {
      when: "now",
      confirmed: true,
      group: "drafty",
      posts: [{ destination_id: w.destinationId, body: ["p"] }],
    });
    expectProblem(publish, 409, "public_post_group_channel_conflict");
  });

  test("patch needs If-Match, delete needs If-Match and a key, submitted posts cannot be deleted", async () => {
    const created = await createPosts(w, {
      when: "draft",
      group: "edit",
      posts: [{ channel: "mastodon", body: ["v1"] }],
    });
    const id = created.body.posts[0].id;
    const path = `/v1/workspaces/${w.ws}/posts/${id}`;
    const got = await w.s.request("GET", path);
    const etag = got.headers.get("etag")!;
    expectProblem(
      await w.s.request("PATCH", path, { body: { body: ["v2"] } }),
      428,
      "public_precondition_required",
    );
    expectProblem(
      await w.s.request("PATCH", path, { body: { body: ["v2"] }, headers: { "if-match": '"stale"' } }),
      412,
      "public_precondition_failed",
    );
    const patched = await w.s.request("PATCH", path, {
      body: { body: ["v2"] },
      headers: { "if-match": etag },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.payload.body).toEqual(["v2"]);
    expect(patched.body.version).toBe(got.body.version + 1);
    expectProblem(
      await w.s.request("DELETE", path, { headers: { ...idem(), "if-match": etag } }),
      412,
      "public_precondition_failed",
    );
    const deleted = await w.s.request("DELETE", path, {
      headers: { ...idem(), "if-match": patched.headers.get("etag")! },
    });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id, object: "post", deleted: true });
    expectProblem(await w.s.request("GET", path), 404, "public_not_found");

    const scheduled = await createPosts(w, {
      when: "2026-03-05T10:00:00+01:00",
      confirmed: true,
      group: "nodelete",
      posts: [{ destination_id: w.destinationId, body: ["s"] }],
    });
    const sp = `/v1/workspaces/${w.ws}/posts/${scheduled.body.posts[0].id}`;
    const sg = await w.s.request("GET", sp);
    expectProblem(
      await w.s.request("DELETE", sp, { headers: { ...idem(), "if-match": sg.headers.get("etag")! } }),
      409,
      "public_conflict",
    );
  });

  test("publish drafts checks the version", async () => {
    const created = await createPosts(w, {
      when: "draft",
      group: "pub",
      posts: [{ channel: "mastodon", body: ["later"] }],
    });
    const draft = created.body.posts[0];
    const stale = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts/publish`, {
      body: {
        confirmed: true,
        when: "now",
        posts: [{ id: draft.id, version: draft.version + 1, destination_id: w.destinationId }],
      },
      headers: idem(),
    });
    expectProblem(stale, 409, "public_version_conflict");
    const ok = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts/publish`, {
      body: {
        confirmed: true,
        when: "2026-03-03T09:00:00Z",
        posts: [{ id: draft.id, version: draft.version, destination_id: w.destinationId }],
      },
      headers: idem(),
    });
    expect(ok.status).toBe(201);
    expect(ok.body.posts[0]).toMatchObject({
      state: "scheduled",
      schedule_mode: "exact",
      scheduled_at: "2026-03-03T09:00:00.000Z",
      destination_id: w.destinationId,
    });
  });
});
