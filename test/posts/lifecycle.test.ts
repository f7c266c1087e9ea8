// A post's life through the API: cancel, reschedule, exact schedules that publish on time, the
// state-derived fields of every reachable state, listing views and filters, paging, ETags, and the
// dry run POST …/posts/validate.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectProblem } from "../helpers/problems.ts";
import { api, countPosts, daily, insertAsset, ok } from "./fixtures.ts";
import { startPostsWorld, type PostsWorld } from "./helpers.ts";

describe("cancel, reschedule and exact schedules (now = 2026-03-01 12:00Z, UTC queue at 10:00 and 16:00)", () => {
  let w: PostsWorld;
  let a: ReturnType<typeof api>;
  const queued = async (group: string) =>
    ok(
      await a.create({
        when: "queue",
        confirmed: true,
        group,
        posts: [{ destination_id: w.destinationId, body: [group] }],
      }),
    ).body.posts[0];
  const published = async (group: string) => {
    const post = ok(
      await a.create({
        when: "now",
        confirmed: true,
        group,
        posts: [{ destination_id: w.destinationId, body: [group] }],
      }),
      202,
    ).body.posts[0];
    await w.s.server.engine.runUntilIdle();
    expect(ok(await a.get(post.id), 200).body.state).toBe("published");
    return post;
  };
  beforeAll(async () => {
    w = await startPostsWorld();
    a = api(w.s, w.ws);
    ok(await a.putQueue(daily("10:00", "16:00")), 200);
  });
  afterAll(async () => {
    await w.stop();
  });

  test("cancel needs confirmed: true", async () => {
    const post = await queued("c-confirm");
    expectProblem(await a.action(post.id, "cancel", {}), 400, "public_invalid_request", ["/confirmed"]);
    expectProblem(await a.action(post.id, "cancel", { confirmed: false }), 400, "public_invalid_request", [
      "/confirmed",
    ]);
    expect(ok(await a.get(post.id), 200).body.state).toBe("scheduled");
    ok(await a.action(post.id, "cancel", { confirmed: true }), 200);
  });

  test("a cancelled post is terminal, stamped, and frees its queue window", async () => {
    const post = await queued("c-slot");
    expect(post.scheduled_at).toBe("2026-03-01T16:00:00.000Z");
    w.s.clock.set("2026-03-01T12:05:00Z");
    const r = ok(await a.action(post.id, "cancel", { confirmed: true }), 200);
    expect(r.headers.get("etag")).toBeTruthy();
    expect(r.body).toMatchObject({
      id: post.id,
      state: "cancelled",
      cancelled_at: "2026-03-01T12:05:00.000Z",
      terminal: true,
      action_required: false,
      editable: false,
      available_actions: [],
      next_action_at: null,
      queue_window_id: null,
      queue_local_date: null,
      published_at: null,
    });
    const next = await queued("c-next");
    expect(next.scheduled_at).toBe("2026-03-01T16:00:00.000Z");
    expectProblem(await a.action(post.id, "cancel", { confirmed: true }), 409, "public_conflict");
    expectProblem(
      await a.action(post.id, "reschedule", { confirmed: true, scheduled_at: "2026-03-09T10:00:00Z" }),
      409,
      "public_conflict",
    );
  });

  test("a published post cannot be cancelled or rescheduled", async () => {
    const post = await published("c-published");
    expectProblem(await a.action(post.id, "cancel", { confirmed: true }), 409, "public_conflict");
    expectProblem(
      await a.action(post.id, "reschedule", { confirmed: true, scheduled_at: "2026-03-09T10:00:00Z" }),
      409,
      "public_conflict",
    );
    expectProblem(await a.action("send_nope", "cancel", { confirmed: true }), 404, "public_not_found");
  });

  test("reschedule moves a queued post to an exact time, leaving its window", async () => {
    const post = await queued("r-move");
    expect(post.scheduled_at).toBe("2026-03-02T10:00:00.000Z");
    const r = ok(
      await a.action(post.id, "reschedule", {
        confirmed: true,
        scheduled_at: "2026-03-04T08:30:00-05:00",
        time_zone: "America/New_York",
      }),
      200,
    );
    expect(r.body).toMatchObject({
      state: "scheduled",
      schedule_mode: "exact",
      scheduled_at: "2026-03-04T13:30:00.000Z",
      next_action_at: "2026-03-04T13:30:00.000Z",
      time_zone: "America/New_York",
      queue_window_id: null,
      queue_local_date: null,
      available_actions: ["cancel", "reschedule"],
    });
    expect(r.body.version).toBeGreaterThan(post.version);
    expect((await queued("r-after")).scheduled_at).toBe("2026-03-02T10:00:00.000Z");
  });

  const badReschedules: {
    name: string;
    body: Record<string, unknown>;
    status: number;
    code: string;
    pointers: string[];
  }[] = [
    {
      name: "a past time",
      body: { confirmed: true, scheduled_at: "2026-02-28T12:00:00Z" },
      status: 422,
      code: "public_unpublishable",
      pointers: ["/scheduled_at"],
    },
    {
      name: "a time without UTC offset",
      body: { confirmed: true, scheduled_at: "2026-03-09T10:00:00" },
      status: 400,
      code: "public_invalid_request",
      pointers: ["/scheduled_at"],
    },
    {
      name: "an unknown time zone",
      body: { confirmed: true, scheduled_at: "2026-03-09T10:00:00Z", time_zone: "Moon/Base" },
      status: 400,
      code: "public_invalid_request",
      pointers: ["/time_zone"],
    },
    {
      name: "no confirmation",
      body: { scheduled_at: "2026-03-09T10:00:00Z" },
      status: 400,
      code: "public_invalid_request",
      pointers: ["/confirmed"],
    },
  ];
  for (const c of badReschedules) {
    test(`reschedule refuses ${c.name}`, async () => {
      const post = await queued(`r-bad-${c.status}-${c.pointers[0]!.slice(1)}`);
      expectProblem(await a.action(post.id, "reschedule", c.body), c.status, c.code, c.pointers);
      expect(ok(await a.get(post.id), 200).body).toMatchObject({
        scheduled_at: post.scheduled_at,
        schedule_mode: "queue",
        version: post.version,
      });
    });
  }

  test("an exact schedule waits for its time, then publishes (and not a tick before)", async () => {
    w.s.clock.set("2026-03-01T12:10:00Z");
    const post = ok(
      await a.create({
        when: "2026-03-01T14:15:00+01:00",
        time_zone: "Europe/Paris",
        confirmed: true,
        group: "exact",
        posts: [{ destination_id: w.destinationId, body: ["on the dot"] }],
      }),
    ).body.posts[0];
    expect(post).toMatchObject({
      state: "scheduled",
      schedule_mode: "exact",
      scheduled_at: "2026-03-01T13:15:00.000Z",
      next_action_at: "2026-03-01T13:15:00.000Z",
      time_zone: "Europe/Paris",
      terminal: false,
    });
    const before = w.mastodon.statuses.length;
    w.s.clock.set("2026-03-01T13:14:59.999Z");
    await w.s.server.engine.runUntilIdle();
    expect(ok(await a.get(post.id), 200).body.state).toBe("scheduled");
    expect(w.mastodon.statuses.length).toBe(before);
    w.s.clock.set("2026-03-01T13:15:00Z");
    await w.s.server.engine.runUntilIdle();
    const after = ok(await a.get(post.id), 200).body;
    expect(after).toMatchObject({
      state: "published",
      published_at: "2026-03-01T13:15:00.000Z",
      terminal: true,
      time_zone: "Europe/Paris",
    });
    expect(w.mastodon.statuses.slice(before).map((x) => x.text)).toEqual(["on the dot"]);
  });

  test("the ETag is stable between reads and changes with the post", async () => {
    const post = await queued("etag");
    const one = ok(await a.get(post.id), 200);
    const two = ok(await a.get(post.id), 200);
    expect(one.headers.get("etag")).toBeTruthy();
    expect(two.headers.get("etag")).toBe(one.headers.get("etag"));
    ok(await a.action(post.id, "reschedule", { confirmed: true, scheduled_at: "2026-03-10T10:00:00Z" }), 200);
    const three = ok(await a.get(post.id), 200);
    expect(three.headers.get("etag")).not.toBe(one.headers.get("etag"));
  });
});

describe("states, listing and validation (now = 2026-03-01 12:00Z)", () => {
  let w: PostsWorld;
  let a: ReturnType<typeof api>;
  /** Every post made here, by the name of the state it was brought to. */
  const made: Record<string, any> = {};
  const create = async (name: string, body: Record<string, unknown>, status = 201) =>
    (made[name] = ok(await a.create(body), status).body.posts[0]);
  const item = (extra: Record<string, unknown> = {}) => ({
    destination_id: w.destinationId,
    body: ["hello"],
    ...extra,
  });

  beforeAll(async () => {
    w = await startPostsWorld();
    a = api(w.s, w.ws);
    ok(await a.putQueue(daily("18:00")), 200);
    await create("draft", {
      when: "draft",
      group: "st-draft",
      posts: [{ channel: "mastodon", body: ["d"] }],
    });
    await create("draft-bluesky", {
      when: "draft",
      group: "st-draft",
      posts: [{ channel: "bluesky", body: ["d"] }],
    });
    await create("scheduled-queue", { when: "queue", confirmed: true, group: "st-queue", posts: [item()] });
    await create("scheduled-exact", {
      when: "2026-03-05T10:00:00Z",
      confirmed: true,
      group: "st-exact",
      posts: [item()],
    });
    const later = await insertAsset(w.s, w.ws, { status: "pending_upload" });
    await create("preparing", {
      when: "2026-03-06T10:00:00Z",
      confirmed: true,
      group: "st-prep",
      posts: [item({ media: [later] })],
    });
    const soon = await insertAsset(w.s, w.ws, { status: "pending_upload" });
    await create("needs-attention", {
      when: "2026-03-01T12:30:00Z",
      confirmed: true,
      group: "st-attention",
      posts: [item({ media: [soon] })],
    });
    await create("missed", {
      when: "2026-03-01T12:10:00Z",
      confirmed: true,
      group: "st-missed",
      posts: [item()],
    });
    await create("cancelled", {
      when: "2026-03-07T10:00:00Z",
      confirmed: true,
      group: "st-cancel",
      posts: [item()],
    });
    ok(await a.action(made.cancelled.id, "cancel", { confirmed: true }), 200);
    await create("published", { when: "now", confirmed: true, group: "st-pub", posts: [item()] }, 202);
    await w.s.server.engine.runUntilIdle();
    w.mastodon.failNext(1, {
      status: 422,
      path: "/api/v1/statuses",
      body: { error: "Validation failed: Text is spam" },
    });
    await create("failed", { when: "now", confirmed: true, group: "st-fail", posts: [item()] }, 202);
    await w.s.server.engine.runUntilIdle();
    // 45 minutes on: the 12:10 post is past the 30-minute tolerance, the 12:30 one still lacks its asset.
    w.s.clock.set("2026-03-01T12:45:00Z");
    await w.s.server.engine.runUntilIdle();
    await create("ready", { when: "now", confirmed: true, group: "st-ready", posts: [item()] }, 202);
  });
  afterAll(async () => {
    await w.stop();
  });

  const listAll = async (query: string) => {
    const r = ok(await a.list(query), 200);
    expect(r.body.has_more).toBe(false);
    return r.body.data as any[];
  };
  const ids = (posts: any[]) => posts.map((p) => p.id).sort();
  const namesOf = (posts: any[]) =>
    posts.map((p) => Object.keys(made).find((k) => made[k].id === p.id)).sort();

  const fields: {
    name: string;
    state: string;
    editable: boolean;
    terminal: boolean;
    action_required: boolean;
    actions: string[];
  }[] = [
    {
      name: "draft",
      state: "draft",
      editable: true,
      terminal: false,
      action_required: false,
      actions: ["update", "publish", "delete"],
    },
    {
      name: "preparing",
      state: "preparing",
      editable: false,
      terminal: false,
      action_required: false,
      actions: ["cancel"],
    },
    {
      name: "scheduled-exact",
      state: "scheduled",
      editable: false,
      terminal: false,
      action_required: false,
      actions: ["cancel", "reschedule"],
    },
    {
      name: "scheduled-queue",
      state: "scheduled",
      editable: false,
      terminal: false,
      action_required: false,
      actions: ["cancel", "reschedule", "move"],
    },
    {
      name: "ready",
      state: "ready",
      editable: false,
      terminal: false,
      action_required: false,
      actions: ["cancel", "reschedule"],
    },
    {
      name: "published",
      state: "published",
      editable: false,
      terminal: true,
      action_required: false,
      actions: [],
    },
    {
      name: "cancelled",
      state: "cancelled",
      editable: false,
      terminal: true,
      action_required: false,
      actions: [],
    },
    {
      name: "failed",
      state: "failed",
      editable: false,
      terminal: true,
      action_required: false,
      actions: ["retry", "reschedule"],
    },
    {
      name: "needs-attention",
      state: "needs-attention",
      editable: false,
      terminal: false,
      action_required: true,
      actions: ["retry", "reschedule", "cancel"],
    },
    {
      name: "missed",
      state: "missed",
      editable: false,
      terminal: false,
      action_required: true,
      actions: ["retry", "reschedule", "cancel"],
    },
  ];
  for (const f of fields) {
    test(`${f.name}: editable ${f.editable}, terminal ${f.terminal}, action_required ${f.action_required}, actions [${f.actions}]`, async () => {
      const post = ok(await a.get(made[f.name].id), 200).body;
      expect({
        state: post.state,
        editable: post.editable,
        terminal: post.terminal,
        action_required: post.action_required,
      }).toEqual({
        state: f.state,
        editable: f.editable,
        terminal: f.terminal,
        action_required: f.action_required,
      });
      expect([...post.available_actions].sort()).toEqual([...f.actions].sort());
    });
  }

  test("each state carries its own details", async () => {
    const get = async (name: string) => ok(await a.get(made[name].id), 200).body;
    expect(await get("missed")).toMatchObject({
      missed_at: "2026-03-01T12:45:00.000Z",
      next_action_at: null,
      last_error: { code: "missed_schedule" },
    });
    expect(await get("needs-attention")).toMatchObject({
      last_error: { code: "assets_not_ready" },
      published_at: null,
    });
    expect(await get("failed")).toMatchObject({
      attempt_count: 1,
      last_error: { message: expect.stringContaining("Text is spam") },
    });
    expect(await get("preparing")).toMatchObject({
      scheduled_at: "2026-03-06T10:00:00.000Z",
      asset_ids: [expect.stringMatching(/^ast_/)],
    });
    expect(await get("ready")).toMatchObject({
      next_action_at: "2026-03-01T12:45:00.000Z",
      schedule_mode: "now",
    });
    const pub = await get("published");
    expect(pub.receipts).toHaveLength(1);
    expect(pub.receipts[0]).toMatchObject({ object: "receipt", item_index: 0, state: "published" });
  });

  // DESIGN.md: drafts={draft}; scheduled={preparing, scheduled, ready, processing, awaiting-provider};
  // published={published}; attention = failed = {failed, needs-attention, missed}.
  const views: { view: string; names: string[] }[] = [
    {
      view: "all",
      names: Object.keys(Object.fromEntries(fields.map((f) => [f.name, 1]))).concat("draft-bluesky"),
    },
    { view: "drafts", names: ["draft", "draft-bluesky"] },
    { view: "scheduled", names: ["preparing", "scheduled-exact", "scheduled-queue", "ready"] },
    { view: "published", names: ["published"] },
    { view: "attention", names: ["failed", "needs-attention", "missed"] },
    { view: "failed", names: ["failed", "needs-attention", "missed"] },
  ];
  for (const v of views) {
    test(`view=${v.view} lists exactly ${v.names.join(", ")}`, async () => {
      expect(namesOf(await listAll(`?view=${v.view}&limit=100`))).toEqual([...v.names].sort());
    });
  }

  test("no view means all", async () => {
    expect(ids(await listAll("?limit=100"))).toEqual(ids(await listAll("?view=all&limit=100")));
  });

  const filters: { name: string; query: string; names: string[] }[] = [
    { name: "channel", query: "channel=bluesky", names: ["draft-bluesky"] },
    { name: "group", query: "group=st-queue", names: ["scheduled-queue"] },
    { name: "group shared by two drafts", query: "group=st-draft", names: ["draft", "draft-bluesky"] },
    { name: "state", query: "state=missed", names: ["missed"] },
    { name: "state within its view", query: "view=attention&state=failed", names: ["failed"] },
    { name: "created_after", query: "created_after=2026-03-01T12:40:00Z", names: ["ready"] },
    {
      name: "created_after with an offset",
      query: `created_after=${encodeURIComponent("2026-03-01T13:40:00+01:00")}`,
      names: ["ready"],
    },
    {
      name: "scheduled_before",
      query: "scheduled_before=2026-03-01T12:20:00Z",
      names: ["failed", "missed", "published"],
    },
    {
      name: "filters combine",
      query: "view=scheduled&scheduled_before=2026-03-05T12:00:00Z",
      names: ["ready", "scheduled-exact", "scheduled-queue"],
    },
  ];
  for (const f of filters) {
    test(`filter ${f.name}`, async () => {
      expect(namesOf(await listAll(`?${f.query}&limit=100`))).toEqual([...f.names].sort());
    });
  }

  test("destination_id lists the posts on that destination (drafts by channel have none)", async () => {
    const all = await listAll("?limit=100");
    const expected = all.filter((p) => p.destination_id === w.destinationId);
    expect(expected.length).toBe(all.length - 2);
    expect(ids(await listAll(`?destination_id=${w.destinationId}&limit=100`))).toEqual(ids(expected));
    expect(await listAll("?destination_id=dest_nope")).toEqual([]);
  });

  const badParams: { query: string; parameter: string }[] = [
    { query: "scheduled_before=tomorrow", parameter: "scheduled_before" },
    { query: "scheduled_before=2026-03-01T12:00:00", parameter: "scheduled_before" },
    { query: "created_after=2026-03-01", parameter: "created_after" },
  ];
  for (const c of badParams) {
    test(`a bad time (${c.query}) is 400 naming the parameter`, async () => {
      const r = await a.list(`?${c.query}`);
      expectProblem(r, 400, "public_invalid_request");
      expect(r.body.errors[0].parameter).toBe(c.parameter);
      expect(r.body.detail).toContain(c.parameter);
    });
  }

  test("a state outside the view is 400", async () => {
    expectProblem(await a.list("?view=drafts&state=published"), 400, "public_invalid_request");
  });

  test("include=attempts adds attempts with provider details; without it there are none", async () => {
    const plain = await listAll("?state=published");
    expect(plain[0]).not.toHaveProperty("attempts");
    const withAttempts = await listAll("?include=attempts&view=attention&limit=100");
    for (const p of withAttempts) expect(Array.isArray(p.attempts)).toBe(true);
    const failed = withAttempts.find((p) => p.id === made.failed.id);
    expect(failed.attempts).toHaveLength(1);
    expect(failed.attempts[0]).toMatchObject({
      object: "publishing_attempt",
      number: 1,
      trigger: "initial",
      status: "failed",
      provider: { status_code: 422 },
    });
    expect(withAttempts.find((p) => p.id === made.missed.id).attempts).toEqual([]);
    const single = ok(await a.get(made.published.id, "?include=attempts"), 200).body;
    expect(single.attempts[0]).toMatchObject({
      status: "succeeded",
      provider: { operation: expect.any(String) },
    });
  });

  test("paging with limit walks every post once, newest first, with Link only while more exist", async () => {
    const all = ids(await listAll("?limit=100"));
    const seen: string[] = [];
    let path: string | null = `/v1/workspaces/${w.ws}/posts?limit=4`;
    let pages = 0;
    while (path) {
      const r = ok(await w.s.request("GET", path), 200);
      pages++;
      expect(r.body.data.length).toBeLessThanOrEqual(4);
      seen.push(...r.body.data.map((p: any) => p.id));
      const link = r.headers.get("link");
      if (r.body.has_more) {
        expect(r.body.data).toHaveLength(4);
        expect(typeof r.body.next_cursor).toBe("string");
        expect(link).toMatch(/^<.+>; rel="next"$/);
        const next = new URL(/^<(.+)>/.exec(link!)![1]!);
        expect(next.searchParams.get("after")).toBe(r.body.next_cursor);
        expect(next.searchParams.get("limit")).toBe("4");
        path = next.pathname + next.search;
      } else {
        expect(r.body.next_cursor).toBeNull();
        expect(link).toBeNull();
        path = null;
      }
    }
    expect(pages).toBe(Math.ceil(all.length / 4));
    expect(seen).toEqual([...all].sort().reverse());
  });

  test("validate: a valid request is valid and stores nothing", async () => {
    const before = await countPosts(w.s);
    for (const when of ["now", "queue", "2026-03-09T10:00:00+01:00"]) {
      const r = ok(
        await a.validate({
          when,
          confirmed: true,
          group: "dry-run",
          posts: [item({ body: ["one", "two"] })],
        }),
        200,
      );
      const lengths = ["one", "two"].map((text, n) => ({
        pointer: `/posts/0/body/${n}`,
        channel: "mastodon",
        destination_id: w.destinationId,
        used: text.length,
        limit: 500,
        unit: "characters",
      }));
      expect(r.body).toEqual({ object: "post_validation", valid: true, errors: [], warnings: [], lengths });
    }
    expect(await countPosts(w.s)).toBe(before);
    expect(await listAll("?group=dry-run")).toEqual([]);
  });

  test("validate: an invalid request lists every problem at once with its channel, and stores nothing", async () => {
    const before = await countPosts(w.s);
    const r = ok(
      await a.validate({
        when: "2026-03-09T10:00:00Z",
        time_zone: "Mars/Olympus",
        group: "dry-bad",
        posts: [
          { destination_id: "dest_nope", body: ["x"] },
          item({ body: ["fine", "y".repeat(501)] }),
          item({ body: ["z"], destination_options: { bluesky: { languages: ["en"] } } }),
        ],
      }),
      200,
    );
    expect(r.body.object).toBe("post_validation");
    expect(r.body.valid).toBe(false);
    const got = r.body.errors.map((e: any) => ({ pointer: e.pointer, code: e.code, channel: e.channel }));
    expect(got).toEqual(
      expect.arrayContaining([
        { pointer: "/confirmed", code: "public_invalid_request", channel: null },
        { pointer: "/time_zone", code: "public_invalid_request", channel: null },
        { pointer: "/posts/0/destination_id", code: "public_unpublishable", channel: null },
        { pointer: "/posts/1/body/1", code: "public_unpublishable", channel: "mastodon" },
        {
          pointer: "/posts/2/destination_options/bluesky",
          code: "public_invalid_request",
          channel: "mastodon",
        },
      ]),
    );
    expect(got).toHaveLength(5);
    for (const e of r.body.errors) expect(typeof e.detail).toBe("string");
    expect(await countPosts(w.s)).toBe(before);
  });
});
