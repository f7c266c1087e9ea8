// Create Post under concurrency: requests racing for queue windows and for a group's draft, in one
// server and across two `herald serve` processes on one data dir. Every request gets a distinct
// window or a 409 problem, never a 500; no two live posts share a slot. One Idempotency-Key and the
// monthly X limit raced too. Also the mapping of the
// posts' unique indexes to 409 problems, and migration 0004 on a database that already has duplicates.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { engineOf, type Db } from "../../src/db/engine.ts";
import { sqliteMigrations } from "../../src/db/migrations-macro.ts";
import { ProblemError } from "../../src/core/problem.ts";
import { inPostsTransaction } from "../../src/modules/posts/constraints.ts";
import { findPost, insertPost } from "../../src/modules/posts/repo.ts";
import { findXUsage } from "../../src/modules/posts/repo-x-usage.ts";
import { LIVE_STATES } from "../../src/modules/posts/states.ts";
import { expectProblem } from "../helpers/problems.ts";
import {
  apiClient,
  bootstrapCli,
  connectMastodonVia,
  openShared,
  startHerald,
  startMastodonFake,
  tempDataDir,
  type HeraldProcess,
} from "./engine-helpers.ts";
import { api, daily, insertXDestination, ok, X_APP_ENV } from "./fixtures.ts";
import { startPostsWorld, type PostsWorld } from "./helpers.ts";

const N = 20;

/** (destination, window, date) keys shared by more than one live post. */
function sharedSlots(db: Db): Promise<{ slot: string; n: unknown }[]> {
  const live = LIVE_STATES.map(() => "?").join(", ");
  return engineOf(db).query(
    `SELECT destination_id || '|' || queue_window_id || '|' || queue_local_date AS slot, count(*) AS n
     FROM posts
     WHERE state IN (${live}) AND queue_window_id IS NOT NULL
     GROUP BY destination_id, queue_window_id, queue_local_date HAVING count(*) > 1`,
    [...LIVE_STATES],
  );
}

/** The body of a queued Create Post for one destination. */
function queued(group: string, destinationId: string) {
  const posts = [{ destination_id: destinationId, body: [`queued ${group}`] }];
  return { when: "queue", confirmed: true, group, posts };
}

/** The queue slot of a created post set's first post. */
function slotOf(body: { posts: { queue_window_id: string; queue_local_date: string }[] }): string {
  return `${body.posts[0]!.queue_window_id}|${body.posts[0]!.queue_local_date}`;
}

/** The body of a draft for one channel of a group. */
function draft(group: string, i: number) {
  return { when: "draft", group, posts: [{ channel: "mastodon", body: [`draft ${i}`] }] };
}

describe("one server", () => {
  let w: PostsWorld;
  beforeAll(async () => {
    w = await startPostsWorld();
    ok(await api(w.s, w.ws).putQueue(daily("09:00")), 200);
  });
  afterAll(() => w.stop());

  test(`${N} concurrent queued creates for one destination take ${N} distinct windows`, async () => {
    const a = api(w.s, w.ws);
    const responses = await Promise.all(
      Array.from({ length: N }, (_, i) => a.create(queued(`q${i}`, w.destinationId))),
    );
    for (const r of responses) ok(r);
    expect(new Set(responses.map((r) => slotOf(r.body))).size).toBe(N);
    expect(await sharedSlots(w.s.herald.db)).toEqual([]);
  });

  test(`${N} concurrent drafts for one channel of one group: one is made, the rest are 409`, async () => {
    const a = api(w.s, w.ws);
    const responses = await Promise.all(Array.from({ length: N }, (_, i) => a.create(draft("one-group", i))));
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of responses.filter((x) => x.status !== 201)) {
      expectProblem(r, 409, "public_post_group_channel_conflict");
    }
  });

  test("a unique index of posts that fires inside a write answers its 409 problem, not 500", async () => {
    const db = w.s.herald.db;
    const taken = (await api(w.s, w.ws).list("?view=scheduled&limit=1")).body.data[0];
    const row = (await findPost(db, w.ws, taken.id))!;
    const copy = { ...row, id: `${row.id}x`, groupKey: "copy" };
    const slot = await catchProblem(() => inPostsTransaction(db, (tx) => insertPost(tx, copy)));
    expect(slot).toMatchObject({ code: "public_conflict", status: 409 });
    expect(await findPost(db, w.ws, copy.id)).toBeUndefined();

    const existing = (await api(w.s, w.ws).list("?group=one-group")).body.data[0];
    const draftRow = (await findPost(db, w.ws, existing.id))!;
    const twinRow = { ...draftRow, id: `${draftRow.id}x` };
    const twin = await catchProblem(() => inPostsTransaction(db, (tx) => insertPost(tx, twinRow)));
    expect(twin).toMatchObject({ code: "public_post_group_channel_conflict", status: 409 });
    // Other failures pass through unchanged.
    await expect(
      inPostsTransaction(db, () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
  });
});

// Create Post without assets or a queue slot runs at READ COMMITTED on PostgreSQL: its invariants are
// held by unique indexes and locked rows (docs/decisions.md, issue 28), raced here over HTTP.
describe("Create Post's invariants under concurrent requests", () => {
  let w: PostsWorld;
  let xDestination: string;
  beforeAll(async () => {
    w = await startPostsWorld({ ...X_APP_ENV, HERALD_X_MONTHLY_POST_LIMIT: "5" });
    xDestination = await insertXDestination(w.s, w.ws);
  });
  afterAll(() => w.stop());

  test(`${N} concurrent requests with one Idempotency-Key create one post; the rest replay it or are 409`, async () => {
    const body = draft("one-key", 0);
    const headers = { "idempotency-key": `race-${Date.now()}` };
    const path = `/v1/workspaces/${w.ws}/posts`;
    const responses = await Promise.all(
      Array.from({ length: N }, () => w.s.request("POST", path, { body, headers })),
    );
    const created = responses.filter((r) => r.status === 201);
    expect(created.filter((r) => r.headers.get("idempotent-replayed") !== "true")).toHaveLength(1);
    for (const r of created) expect(r.body).toEqual(created[0]!.body);
    for (const r of responses.filter((x) => x.status !== 201))
      expectProblem(r, 409, "public_idempotency_outcome_unknown");
    expect((await api(w.s, w.ws).list("?group=one-key")).body.data).toHaveLength(1);
  });

  test(`${N} concurrent X posts for one month with room for 5: 5 are scheduled, the rest are 402`, async () => {
    const at = new Date(w.s.clock.now() + 7 * 86_400_000).toISOString();
    const responses = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        api(w.s, w.ws).create({
          when: at,
          confirmed: true,
          group: `x-race-${i}`,
          posts: [{ destination_id: xDestination, body: [`x race ${i}`] }],
        }),
      ),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(5);
    for (const r of responses.filter((x) => x.status !== 201))
      expectProblem(r, 402, "public_usage_limit_reached");
    const month = at.slice(0, 7);
    expect(await findXUsage(w.s.herald.db, w.ws, month)).toEqual({ reserved: 5, used: 0 });
  });

  test("a post refused inside its transaction (the month's X posts used up) leaves its key free", async () => {
    // Runs after the race above: the month holds 5 of 5. The refusal rolls back the key with the post,
    // so the same key with other input is a new request (not 409 key reused), as a refused request is.
    const at = new Date(w.s.clock.now() + 7 * 86_400_000).toISOString();
    const headers = { "idempotency-key": `x-over-${crypto.randomUUID()}` };
    const send = (body: Record<string, unknown>) =>
      w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, { body, headers });
    const over = { destination_id: xDestination, body: ["one over the month"] };
    expectProblem(
      await send({ when: at, confirmed: true, group: "x-over", posts: [over] }),
      402,
      "public_usage_limit_reached",
    );
    const draft = await send({ when: "draft", group: "x-over-draft", posts: [over] });
    expect(draft.status).toBe(201);
    expect(draft.headers.get("idempotent-replayed")).toBeNull();
  });
});

async function catchProblem(work: () => Promise<unknown>): Promise<ProblemError | null> {
  try {
    await work();
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  return null;
}

test(`two processes, one data dir: ${N} queued creates, ${N} racing drafts, no 500, no shared slot`, async () => {
  const data = await tempDataDir();
  const fake = await startMastodonFake({ mediaProcessingPolls: 0 });
  const servers: HeraldProcess[] = [];
  try {
    const { workspaceId, apiKey } = await bootstrapCli(data);
    servers.push(...(await Promise.all([startHerald(data), startHerald(data)])));
    const apis = servers.map((s) => apiClient(() => s.url, apiKey));
    const destinationId = await connectMastodonVia(apis[0]!, workspaceId, fake);
    const put = await apis[0]!("PUT", `/workspaces/${workspaceId}/queue`, { windows: daily("09:00") });
    expect(put.status).toBe(200);

    const path = `/workspaces/${workspaceId}/posts`;
    const queuedResponses = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        apis[i % 2]!("POST", path, queued(`pq${i}`, destinationId), { "idempotency-key": `pq-${i}` }),
      ),
    );
    expect(queuedResponses.map((r) => r.status)).toEqual(Array(N).fill(201));
    expect(new Set(queuedResponses.map((r) => slotOf(r.body))).size).toBe(N);

    const drafts = await Promise.all(
      Array.from({ length: N }, (_, i) => apis[i % 2]!("POST", path, draft("shared", i))),
    );
    expect(drafts.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of drafts.filter((x) => x.status !== 201)) {
      expect({ status: r.status, code: r.body.code }).toEqual({
        status: 409,
        code: "public_post_group_channel_conflict",
      });
    }

    const db = await openShared(data);
    try {
      expect(await sharedSlots(db)).toEqual([]);
    } finally {
      await engineOf(db).close();
    }
  } catch (error) {
    for (const s of servers) console.error(s.log());
    throw error;
  } finally {
    for (const s of servers) await s.kill();
    await fake.stop();
    await data.cleanup();
  }
}, 60_000);

// SQLite's migration history (PostgreSQL starts from one baseline with the index): runs on any pass.
test("migration 0004 keeps the oldest of live posts sharing a slot, then builds the unique index", () => {
  const db = new Database(":memory:");
  const migrations = sqliteMigrations();
  const index = migrations.findIndex((m) => m.tag === "0004_queue_slot_unique");
  expect(index).toBeGreaterThan(0);
  for (const m of migrations.slice(0, index)) for (const statement of m.statements) db.exec(statement);
  const insert = db.query(
    `INSERT INTO posts (id, workspace_id, group_key, channel, destination_id, state, version, headline, body,
       destination_options, asset_items, schedule_mode, scheduled_at, time_zone, queue_local_date,
       queue_window_id,
       retry_safety, created_at, updated_at)
     VALUES (?, 'ws_1', ?, 'mastodon', 'dst_1', ?, 1, 'h', '["h"]', '{}', '[]', 'queue', 1, 'UTC',
       '2026-04-01', 'qw_1',
       'safe', 1, 1)`,
  );
  insert.run("send_a", "g1", "scheduled");
  insert.run("send_b", "g2", "scheduled");
  insert.run("send_c", "g3", "published");
  db.transaction(() => {
    for (const statement of migrations[index]!.statements) db.exec(statement);
  })();
  const rows = db
    .query<{ id: string; window: string | null }, []>(
      "SELECT id, queue_window_id AS window FROM posts ORDER BY id",
    )
    .all();
  expect(rows).toEqual([
    { id: "send_a", window: "qw_1" },
    { id: "send_b", window: null },
    { id: "send_c", window: "qw_1" },
  ]);
  expect(() => insert.run("send_d", "g4", "ready")).toThrow("UNIQUE constraint failed");
  db.close();
});
