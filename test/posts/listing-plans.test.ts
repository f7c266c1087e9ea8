// At a million posts a page of the listing must stay a walk over an index in id order, for every
// filter, and the engine's claim an index lookup: the plans are checked here with the database's own
// EXPLAIN, on a test database (no statistics, as a SQLite database that grew by itself has none).
// SQLite: no `SCAN posts` and no temporary B-tree for the order. PostgreSQL: with sequential scans,
// bitmap scans and sorts priced out, the plan is an index scan with no Sort node (an index exists
// that gives the rows in the order asked for).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { and, asc, eq, gt, isNull, lte, or } from "drizzle-orm";
import { engineOf, isPostgres } from "../../src/db/engine.ts";
import type { Db } from "../../src/db/open.ts";
import { tablesOf } from "../../src/db/tables.ts";
import { postListingFilter, type PostListingQuery } from "../../src/modules/posts/listing.ts";
import {
  listPosts,
  postListingQuery,
  TIME_RANGE_PROBE,
  timeRangeProbes,
} from "../../src/modules/posts/repo.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { readyHeadsQuery } from "../../src/modules/publishing/repo.ts";
import { tables } from "../helpers/tables.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
let pg: SQL | null = null;
beforeAll(async () => {
  s = await startTestServer();
  if (isPostgres(s.herald.db)) {
    pg = new SQL(s.herald.config.databaseUrl!, { max: 1 });
    await pg.unsafe("SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_sort = off");
  }
});
afterAll(async () => {
  await pg?.close();
  await s.stop();
});

/** The plan of a query, one line per step. */
async function planOf(
  query: { toSQL(): { sql: string; params: unknown[] } },
  { sorting = false } = {},
): Promise<string[]> {
  const { sql, params } = query.toSQL();
  if (pg) {
    // A bounded sort is allowed where the caller says so (a few hundred rows read by id).
    if (sorting) await pg.unsafe("SET enable_sort = on");
    const rows = (await pg.unsafe(`EXPLAIN ${sql}`, params as never[])) as { "QUERY PLAN": string }[];
    if (sorting) await pg.unsafe("SET enable_sort = off");
    return rows.map((r) => r["QUERY PLAN"]);
  }
  const rows = await engineOf(s.herald.db).query<{ detail: string }>(`EXPLAIN QUERY PLAN ${sql}`, params);
  return rows.map((r) => r.detail);
}

/** Fails with the plan when a step reads posts without an index or sorts them. */
function expectIndexWalk(plan: string[], what: string): void {
  const text = plan.join("\n");
  if (pg) {
    expect({ what, plan: text, seq: /Seq Scan on posts|Bitmap Heap Scan on posts/.test(text) }).toEqual({
      what,
      plan: text,
      seq: false,
    });
    expect({ what, plan: text, sorted: /\bSort\b/.test(text) }).toEqual({ what, plan: text, sorted: false });
    expect(text).toMatch(/Index (Only )?Scan (Backward )?using posts_/);
  } else {
    expect({ what, plan: text, scan: /\bSCAN posts\b(?! USING)/.test(text) }).toEqual({
      what,
      plan: text,
      scan: false,
    });
    expect({ what, plan: text, temp: /TEMP B-TREE/.test(text) }).toEqual({ what, plan: text, temp: false });
    expect(text).toMatch(/SEARCH posts USING (COVERING )?INDEX posts_/);
  }
}

const LISTINGS: PostListingQuery[] = [
  {},
  { view: "drafts" },
  { view: "scheduled" },
  { view: "published" },
  { view: "attention" },
  { view: "failed" },
  { state: "needs-attention" },
  { channel: "mastodon" },
  { group: "launch" },
  { destination_id: "dest_01" },
  { created_after: "2026-01-01T00:00:00Z" },
  { scheduled_before: "2026-01-01T00:00:00Z" },
  { view: "published", channel: "bluesky", created_after: "2026-01-01T00:00:00Z" },
  { group: "launch", channel: "x" },
  { view: "attention", destination_id: "dest_01" },
];

test("every filter of the listing reads its page from an index in id order, first page and later ones", async () => {
  const db = s.herald.db;
  for (const query of LISTINGS) {
    const filter = postListingFilter(query);
    // listPosts reads one range per state of a view, each with this query.
    for (const states of filter.states ? filter.states.map((state) => [state]) : [null]) {
      for (const after of [null, "send_01zzzzzzzzzzzzzzzzzzzzzzzz"]) {
        const plan = await planOf(
          postListingQuery(db, s.owner.workspaceId, { ...filter, states }, after, 20),
        );
        const what = `${JSON.stringify(query)} states=${states} after=${after}`;
        expectIndexWalk(plan, what);
        // An equality filter is a range of its own index, not a condition checked row by row.
        const columns = [
          states && "state",
          filter.channel && "channel",
          filter.group && "group_key",
          filter.destinationId && "destination_id",
        ].filter(Boolean);
        if (columns.length === 0) continue;
        const bound = pg
          ? new RegExp(`Index Cond: .*\\((${columns.join("|")}) = `)
          : new RegExp(
              `USING (COVERING )?INDEX posts_\\w+ \\(workspace_id=\\? AND (${columns.join("|")})=\\?`,
            );
        expect({ what, plan: plan.join("\n"), bound: bound.test(plan.join("\n")) }).toEqual({
          what,
          plan: plan.join("\n"),
          bound: true,
        });
      }
    }
  }
});

test("a time filter's range is counted along its own index, and a small one read by id", async () => {
  const db = s.herald.db;
  for (const query of LISTINGS.filter((q) => q.created_after || q.scheduled_before)) {
    const filter = postListingFilter(query);
    for (const probe of timeRangeProbes(db, s.owner.workspaceId, filter, "send_01zzzzzzzzzzzzzzzzzzzzzzzz")) {
      const plan = await planOf(probe);
      expectIndexWalk(plan, `probe ${JSON.stringify(query)}`);
      expect(plan.join("\n")).toMatch(/posts_workspace_(created|scheduled)/);
    }
    // At most TIME_RANGE_PROBE rows, found by their primary key.
    const byId = await planOf(
      postListingQuery(db, s.owner.workspaceId, filter, null, 20, ["send_a", "send_b"]),
      { sorting: true },
    );
    const text = byId.join("\n");
    expect(text).not.toMatch(/\bSCAN posts\b(?! USING)|Seq Scan on posts/);
    // SQLite takes the primary key; PostgreSQL's choice on an empty table is a tie between indexes
    // (with a million rows and statistics it takes the key too: bench/growth.ts measures it).
    expect(text).toMatch(pg ? /Index Scan/ : /USING INDEX sqlite_autoindex_posts_1 \(id=\?\)/);
  }
});

test("pages are the posts a plain filter and sort would give, whichever way they are read", async () => {
  // More posts than TIME_RANGE_PROBE, so both ways of reading a time filter are taken.
  const ws = s.owner.workspaceId;
  const { posts } = tables;
  const base = 1_800_000_000_000;
  const states = ["published", "draft", "scheduled", "failed", "needs-attention", "missed", "cancelled"];
  const channels = ["mastodon", "bluesky", "x"];
  const rows = Array.from({ length: TIME_RANGE_PROBE + 300 }, (_, i) => ({
    id: `send_00${String(i).padStart(24, "0")}`,
    workspaceId: ws,
    // One draft per group and channel (a unique index): drafts get a group each.
    groupKey: states[i % 7] === "draft" ? `d${i}` : `p${i % 50}`,
    channel: channels[i % 3]!,
    destinationId: null,
    state: states[i % 7]!,
    version: 1,
    headline: "",
    body: [`post ${i}`],
    destinationOptions: {},
    assetItems: [],
    scheduleMode: "exact",
    // Creation follows ids; scheduled times do not (a scheduled time can be anywhere).
    scheduledAt: i % 4 === 0 ? null : base + ((i * 7919) % 1300) * 60_000,
    timeZone: "UTC",
    retrySafety: "safe",
    createdAt: base + i * 60_000,
    updatedAt: base + i * 60_000,
  }));
  await inTransaction(s.herald.db, async (tx) => {
    for (let i = 0; i < rows.length; i += 200) await tx.insert(posts).values(rows.slice(i, i + 200));
  });
  const at = (minute: number) => new Date(base + minute * 60_000).toISOString();
  const queries: PostListingQuery[] = [
    { view: "attention" },
    { view: "scheduled", channel: "x" },
    { created_after: at(1290) }, // a small range
    { created_after: at(100) }, // a wide one
    { created_after: at(100), view: "failed" },
    { scheduled_before: at(50) },
    { scheduled_before: at(1200), channel: "bluesky" },
    { scheduled_before: at(1200), created_after: at(1250) },
    { group: "p7", created_after: at(500) },
  ];
  const seeded = rows.filter((r) => r.id.startsWith("send_00"));
  for (const query of queries) {
    const filter = postListingFilter(query);
    const expected = seeded
      .filter(
        (r) =>
          (!filter.states || filter.states.includes(r.state as never)) &&
          (!filter.channel || r.channel === filter.channel) &&
          (!filter.group || r.groupKey === filter.group) &&
          (filter.createdAfter === undefined || r.createdAt >= filter.createdAfter) &&
          (filter.scheduledBefore === undefined ||
            (r.scheduledAt !== null && r.scheduledAt < filter.scheduledBefore)),
      )
      .map((r) => r.id)
      .sort()
      .reverse();
    // Every page of 20, following the cursor as the API does.
    const listed: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page = await listPosts(s.herald.db, ws, filter, after, 20);
      listed.push(...page.slice(0, 20).map((p) => p.id));
      if (page.length <= 20) break;
      after = page[19]!.id;
    }
    expect({ query, listed }).toEqual({ query, listed: expected });
  }
});

/** The engine's claim and its wake-up lookup, as src/modules/publishing/repo.ts writes them. */
function claimQueries(db: Db) {
  const { posts } = tablesOf(db);
  const now = 1_800_000_000_000;
  const due = (state: string) =>
    state !== "scheduled"
      ? or(isNull(posts.nextActionAt), lte(posts.nextActionAt, now))
      : lte(posts.scheduledAt, now);
  return ["ready", "scheduled", "awaiting-provider"].flatMap((state) => [
    {
      what: `takeDue ${state}`,
      query: db
        .select()
        .from(posts)
        .where(and(eq(posts.state, state), due(state)))
        .orderBy(asc(posts.nextActionAt))
        .limit(16),
    },
    {
      what: `nextDueAt ${state}`,
      query: db
        .select({ at: posts.nextActionAt })
        .from(posts)
        .where(and(eq(posts.state, state), gt(posts.nextActionAt, now)))
        .orderBy(asc(posts.nextActionAt))
        .limit(1),
    },
  ]);
}

test("the engine's claim is an index lookup on posts_due, in due order", async () => {
  for (const { what, query } of claimQueries(s.herald.db)) {
    const plan = await planOf(query);
    expectIndexWalk(plan, what);
    expect(plan.join("\n")).toContain("posts_due");
  }
});

test("the engine's one-per-destination claim reads posts by index only (heads sorted, a few rows)", async () => {
  const plan = await planOf(readyHeadsQuery(s.herald.db, 1_800_000_000_000, 16), { sorting: true });
  const text = plan.join("\n");
  expect(text).not.toMatch(/\bSCAN posts\b(?! USING)|Seq Scan on posts|Bitmap Heap Scan on posts/);
  // Destinations, heads and processing checks along the queue index; the claimed rows by key.
  expect(text).toMatch(/posts_destination_queue/);
  expect(text).toMatch(pg ? /posts_pkey/ : /SEARCH posts USING INDEX sqlite_autoindex_posts_1 \(id=\?\)/);
});
