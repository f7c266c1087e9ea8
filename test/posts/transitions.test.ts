// The state door (src/modules/posts/transition.ts) on a real database: every (from, to) pair
// of the 11 states against the moves docs/posts.md draws, and the bookkeeping of representative
// moves (lease, deferral, X usage, outbox events).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { engineOf } from "../../src/db/engine.ts";
import { newId } from "../../src/db/ids.ts";
import { tables } from "../helpers/tables.ts";
import { inTransaction } from "../../src/db/transaction.ts";
import { ProblemError } from "../../src/core/problem.ts";
import { findPostById, insertPost, type PostRow } from "../../src/modules/posts/repo.ts";
import {
  availableActions,
  LIVE_STATES,
  POST_STATES,
  type PostState,
} from "../../src/modules/posts/states.ts";
import {
  editPostIfStill,
  enterPosts,
  isMoveAllowed,
  POST_MOVES,
  postMovesDiagram,
  PostMoveRefused,
  transitionPost,
  transitionPosts,
  type PostMoveRequest,
} from "../../src/modules/posts/transition.ts";
import { findXUsage } from "../../src/modules/posts/repo-x-usage.ts";
import { X_MONTHLY_LIMIT_DEFAULT as X_MONTHLY_LIMIT } from "../../src/modules/posts/x-usage.ts";
import { ROOT } from "../helpers/process.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { insertXDestination, X_APP_ENV } from "./fixtures.ts";

const { xUsage } = tables;

let s: TestServer;
let ws: string;
const NOW = Date.parse("2026-03-01T12:00:00Z");
const APRIL = Date.parse("2026-04-10T09:00:00Z");
const MAY = Date.parse("2026-05-10T09:00:00Z");
const EVENTS: Partial<Record<PostState, string>> = {
  published: "post.published",
  failed: "post.failed",
  "needs-attention": "post.needs-attention",
  "awaiting-provider": "post.awaiting-provider",
  missed: "post.needs-attention",
};

beforeAll(async () => {
  s = await startTestServer({ env: X_APP_ENV });
  ws = (await s.bootstrap()).workspaceId;
});
afterAll(() => s.stop());

/** A post row in `state` (not stored). */
function row(state: PostState, extra: Partial<PostRow> = {}): PostRow {
  return {
    id: newId("send"),
    workspaceId: ws,
    groupKey: `g-${newId("send")}`,
    channel: "mastodon",
    destinationId: null,
    state,
    version: 1,
    headline: "h",
    body: ["h"],
    destinationOptions: {},
    assetItems: [],
    scheduleMode: state === "draft" ? "draft" : "exact",
    scheduledAt: state === "draft" ? null : APRIL,
    timeZone: "UTC",
    queueLocalDate: null,
    queueWindowId: null,
    deferredReason: null,
    deferredUntil: null,
    retrySafety: "safe",
    lastError: null,
    linkTracking: false,
    providerPending: null,
    attemptCount: 0,
    nextTrigger: "initial",
    autoRetries: 0,
    nextActionAt: null,
    leaseOwner: state === "processing" ? "proc_a" : null,
    leaseExpiresAt: state === "processing" ? NOW + 60_000 : null,
    publishedAt: null,
    cancelledAt: null,
    missedAt: null,
    recycle: null,
    recycledFrom: null,
    recycleNumber: null,
    createdAt: NOW,
    updatedAt: NOW,
    ...extra,
  };
}

/** Stores a post in any state directly (a fixture: the door's own entry allows only four). */
async function stored(state: PostState, extra: Partial<PostRow> = {}): Promise<PostRow> {
  const r = row(state, extra);
  await inTransaction(s.herald.db, (tx) => insertPost(tx, r));
  return r;
}

function move(request: PostMoveRequest & { xErrors?: [] }): Promise<PostRow | null> {
  const lease = request.to === "processing" ? { owner: "proc_b", until: NOW + 60_000 } : undefined;
  return inTransaction(s.herald.db, (tx) =>
    transitionPost({ tx, now: NOW, xLimit: X_MONTHLY_LIMIT, lease, ...request }),
  );
}

/** The error `work` rejects with, or null when it succeeds. */
async function failureOf(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  return null;
}

/** The messages of an error and of the errors it wraps (drizzle wraps the driver's). */
function causes(error: unknown): string {
  const messages: string[] = [];
  for (let e: unknown = error; e instanceof Error; e = e.cause) messages.push(e.message);
  return messages.join(" / ");
}

/** A post's outbox event types, oldest first (outbox ids grow with time). */
async function events(postId: string): Promise<string[]> {
  const sql = "SELECT type FROM events_outbox WHERE post_id = ? ORDER BY id";
  const rows = await engineOf(s.herald.db).query<{ type: string }>(sql, [postId]);
  return rows.map((r) => r.type);
}

const current = async (id: string) => (await findPostById(s.herald.db, id))!;

/** The moves docs/posts.md draws, as "from>to" (`[*]` as "new"). */
function documentedMoves(): Set<string> {
  const doc = readFileSync(join(ROOT, "docs/posts.md"), "utf8");
  const block = doc.slice(doc.indexOf("```mermaid"), doc.indexOf("```", doc.indexOf("```mermaid") + 3));
  const name = (n: string) => (n === "[*]" ? "new" : n.replace("_", "-"));
  return new Set([...block.matchAll(/^ {4}(\S+) --> (\S+):/gm)].map((m) => `${name(m[1]!)}>${name(m[2]!)}`));
}

describe("the table", () => {
  test("docs/posts.md shows the diagram rendered from POST_MOVES", () => {
    expect(readFileSync(join(ROOT, "docs/posts.md"), "utf8")).toContain(postMovesDiagram());
  });

  test("every (from, to) pair of the 11 states: the documented moves happen, the rest are refused", async () => {
    const documented = documentedMoves();
    expect(documented.size).toBeGreaterThan(30);
    let allowed = 0;
    for (const from of POST_STATES) {
      for (const to of POST_STATES) {
        const post = await stored(from);
        const expected = documented.has(`${from}>${to}`);
        expect({ from, to, allowed: isMoveAllowed(from, to) }).toEqual({ from, to, allowed: expected });
        if (expected) {
          const after = await move({ post, to });
          expect({ from, to, state: after?.state, version: after?.version }).toEqual({
            from,
            to,
            state: to,
            version: 2,
          });
          allowed++;
        } else {
          const refused = await failureOf(() => move({ post, to }));
          expect(refused).toBeInstanceOf(PostMoveRefused);
          expect(refused).toBeInstanceOf(ProblemError);
          expect((refused as ProblemError).code).toBe("public_conflict");
          expect({ from, to, state: (await current(post.id)).state }).toEqual({
            from,
            to,
            state: from,
          });
        }
      }
    }
    expect(allowed).toBe([...documented].filter((m) => !m.startsWith("new>")).length);
  });

  test("new posts: only draft, preparing, scheduled and ready, as documented", async () => {
    const documented = documentedMoves();
    for (const state of POST_STATES) {
      const r = row(state, { leaseOwner: null, leaseExpiresAt: null });
      const expected = documented.has(`new>${state}`);
      const refused = await failureOf(() =>
        inTransaction(s.herald.db, (tx) => enterPosts({ tx, rows: [r], xLimit: X_MONTHLY_LIMIT })),
      );
      expect({ state, entered: refused === null }).toEqual({ state, entered: expected });
      if (!expected) expect(refused).toBeInstanceOf(PostMoveRefused);
      expect((await findPostById(s.herald.db, r.id))?.state).toBe(expected ? state : undefined);
    }
  });

  test("user verbs cause moves only from states whose available_actions name them, and all of them", () => {
    const verbs = ["publish", "cancel", "retry", "reschedule", "move"] as const;
    for (const from of POST_STATES) {
      for (const verb of verbs) {
        const inTable = POST_MOVES.some((m) => m.from === from && m.action === verb);
        const available = availableActions(from, "queue").includes(verb);
        expect({ from, verb, available }).toEqual({ from, verb, available: inTable });
      }
    }
  });

  // Checked by behaviour, the same on both engines: a second post in a taken slot is refused by the
  // index exactly when it is live (the slot's first post is scheduled, a live state).
  test("the queue slot index covers exactly the live states", async () => {
    const slot = {
      destinationId: await insertXDestination(s, ws),
      queueWindowId: newId("qw"),
      queueLocalDate: "2026-04-10",
    };
    await stored("scheduled", slot);
    const refusedStates: PostState[] = [];
    for (const state of POST_STATES) {
      const refused = await failureOf(() => stored(state, slot));
      if (refused === null) continue;
      expect(causes(refused)).toMatch(/UNIQUE constraint failed|duplicate key value/);
      refusedStates.push(state);
    }
    expect(new Set(refusedStates)).toEqual(new Set(LIVE_STATES));
  });
});

describe("bookkeeping", () => {
  test("entering processing takes the lease; leaving it clears the lease", async () => {
    const claimed = (await move({ post: await stored("ready"), to: "processing" }))!;
    expect(claimed).toMatchObject({
      state: "processing",
      leaseOwner: "proc_b",
      leaseExpiresAt: NOW + 60_000,
    });
    for (const to of ["published", "ready", "failed", "needs-attention", "awaiting-provider"] as const) {
      const after = (await move({ post: await stored("processing"), to, leasedBy: "proc_a" }))!;
      expect({ to, owner: after.leaseOwner, expires: after.leaseExpiresAt }).toEqual({
        to,
        owner: null,
        expires: null,
      });
    }
    const post = await stored("scheduled");
    await expect(move({ post, to: "ready", lease: { owner: "x", until: 1 } })).rejects.toThrow();
  });

  test("a lost race writes nothing and is not an error: another owner's lease, or a state moved on", async () => {
    const leased = await stored("processing");
    expect(await move({ post: leased, to: "published", leasedBy: "proc_other" })).toBeNull();
    expect(await current(leased.id)).toMatchObject({
      state: "processing",
      version: 1,
      leaseOwner: "proc_a",
    });
    expect(await events(leased.id)).toEqual([]);

    const post = await stored("scheduled");
    expect((await move({ post, to: "ready" }))!.state).toBe("ready");
    expect(await move({ post, to: "missed" })).toBeNull(); // the caller's copy still says scheduled
    expect(await current(post.id)).toMatchObject({ state: "ready", version: 2 });
    const edit = (state: string, headline: string) =>
      inTransaction(s.herald.db, (tx) => editPostIfStill(tx, post.id, { state }, { headline }));
    expect(await edit("scheduled", "no")).toBe(false);
    expect(await edit("ready", "yes")).toBe(true);
  });

  test("a claim of several posts (one UPDATE on PostgreSQL) takes each only if still in its state", async () => {
    const ready = await stored("ready", { deferredReason: "provider_rate_limit", deferredUntil: NOW });
    const checked = await stored("awaiting-provider", { attemptCount: 1 });
    const movedOn = await stored("ready");
    await move({ post: movedOn, to: "cancelled" }); // the caller's copy still says ready
    const lease = { owner: "proc_c", until: NOW + 60_000 };
    const moves: PostMoveRequest[] = [
      { post: ready, to: "processing", lease, current: true, changes: { attemptCount: 1 } },
      { post: movedOn, to: "processing", lease, current: true, changes: { attemptCount: 1 } },
      { post: checked, to: "processing", lease, current: true },
    ];
    const after = await inTransaction(s.herald.db, (tx) =>
      transitionPosts({ tx, now: NOW, xLimit: X_MONTHLY_LIMIT, moves }),
    );
    expect(after.map((p) => p && [p.id, p.state, p.attemptCount, p.leaseOwner, p.version])).toEqual([
      [ready.id, "processing", 1, "proc_c", 2],
      null,
      [checked.id, "processing", 1, "proc_c", 2],
    ]);
    expect(await current(ready.id)).toMatchObject({ deferredReason: null, deferredUntil: null });
    expect(await current(movedOn.id)).toMatchObject({
      state: "cancelled",
      leaseOwner: null,
      attemptCount: 0,
    });
  });

  test("a deferral lives only on a post entering ready", async () => {
    const deferral = { deferredReason: "publishing_velocity", deferredUntil: NOW + 5_000 };
    const claimed = (await move({ post: await stored("ready", deferral), to: "processing" }))!;
    expect(claimed).toMatchObject({ deferredReason: null, deferredUntil: null });
    const cancelled = (await move({ post: await stored("ready", deferral), to: "cancelled" }))!;
    expect(cancelled).toMatchObject({ deferredReason: null, deferredUntil: null });
    const until = NOW + 9_000;
    const changes = { deferredReason: "provider_rate_limit", deferredUntil: until, nextActionAt: until };
    const retrying = (await move({
      post: await stored("processing"),
      to: "ready",
      changes,
      leasedBy: "proc_a",
    }))!;
    expect(retrying).toMatchObject(changes);
    const failing = (await move({
      post: await stored("processing"),
      to: "failed",
      changes,
      leasedBy: "proc_a",
    }))!;
    expect(failing).toMatchObject({ deferredReason: null, deferredUntil: null });
  });

  test("an outbox event for published, failed, needs-attention, awaiting-provider, missed only", async () => {
    const seen = new Set<string>();
    for (const m of POST_MOVES) {
      if (m.from === null || seen.has(`${m.from}>${m.to}`)) continue;
      seen.add(`${m.from}>${m.to}`);
      const post = await stored(m.from);
      const leasedBy = m.from === "processing" ? "proc_a" : undefined;
      await move({ post, to: m.to, leasedBy });
      const expected = EVENTS[m.to];
      expect({ from: m.from, to: m.to, events: await events(post.id) }).toEqual({
        from: m.from,
        to: m.to,
        events: expected ? [expected] : [],
      });
    }
  });
});

describe("X usage", () => {
  let xws: string;
  const usage = (month: string) => findXUsage(s.herald.db, xws, month);
  const reserved = async (month: string) => (await usage(month)).reserved;
  const x = (state: PostState) => stored(state, { workspaceId: xws, channel: "x" });
  /** Fixture posts are stored without reserving: give the month room to release from. */
  const setUsage = (month: string, reserved: number, used = 0) =>
    inTransaction(s.herald.db, (tx) =>
      tx
        .insert(xUsage)
        .values({ workspaceId: xws, month, reserved, used })
        .onConflictDoUpdate({ target: [xUsage.workspaceId, xUsage.month], set: { reserved, used } }),
    );

  beforeAll(async () => {
    xws = (await s.bootstrap()).workspaceId;
  });

  test("a new scheduled X post reserves its month; a draft reserves nothing", async () => {
    const r = row("scheduled", { workspaceId: xws, channel: "x" });
    const d = row("draft", { workspaceId: xws, channel: "x", groupKey: "xd" });
    await inTransaction(s.herald.db, (tx) => enterPosts({ tx, rows: [r, d], xLimit: X_MONTHLY_LIMIT }));
    expect(await usage("2026-04")).toEqual({ reserved: 1, used: 0 });
  });

  test("through the engine: the reservation stays until publishing consumes it", async () => {
    const before = await usage("2026-04");
    const post = await x("scheduled");
    const ready = (await move({ post, to: "ready" }))!;
    const claimed = (await move({ post: ready, to: "processing" }))!;
    expect(await usage("2026-04")).toEqual(before);
    await move({ post: claimed, to: "published", leasedBy: "proc_b" });
    expect(await usage("2026-04")).toEqual({ reserved: before.reserved - 1, used: before.used + 1 });
  });

  test("cancel, fail and miss release; cancelling a missed post releases nothing more", async () => {
    await setUsage("2026-04", 10, 2);
    await move({ post: await x("scheduled"), to: "cancelled" });
    await move({ post: await x("processing"), to: "failed", leasedBy: "proc_a" });
    const missed = (await move({ post: await x("scheduled"), to: "missed" }))!;
    expect(await usage("2026-04")).toEqual({ reserved: 7, used: 2 });
    const after = await usage("2026-04");
    await move({ post: missed, to: "cancelled" });
    expect(await usage("2026-04")).toEqual(after);
  });

  test("retry of a failed or missed post reserves again; of a needs-attention post, not", async () => {
    const start = await reserved("2026-04");
    await move({ post: await x("failed"), to: "ready" });
    await move({ post: await x("missed"), to: "ready" });
    expect(await reserved("2026-04")).toBe(start + 2);
    await move({ post: await x("needs-attention"), to: "ready" });
    expect(await reserved("2026-04")).toBe(start + 2);
  });

  test("a move between months carries the reservation; reschedule re-checks the limit within a month", async () => {
    await setUsage("2026-04", 10);
    await setUsage("2026-05", 10);
    const [april, may] = [10, 10];
    const post = await x("scheduled");
    const moved = (await move({ post, to: "scheduled", changes: { scheduledAt: MAY } }))!;
    expect([await reserved("2026-04"), await reserved("2026-05")]).toEqual([april - 1, may + 1]);
    await move({ post: moved, to: "scheduled", changes: { scheduledAt: MAY + 3_600_000 } });
    expect([await reserved("2026-04"), await reserved("2026-05")]).toEqual([april - 1, may + 1]);

    // With the month over the limit, a plain move within it passes and a reschedule (re-reserve) is 402.
    await engineOf(s.herald.db).query(
      "UPDATE x_usage SET used = ? WHERE workspace_id = ? AND month = '2026-05'",
      [X_MONTHLY_LIMIT, xws],
    );
    expect(
      await move({ post: await current(post.id), to: "scheduled", changes: { scheduledAt: MAY } }),
    ).not.toBeNull();
    const again = await current(post.id);
    const refused = await failureOf(() =>
      move({ post: again, to: "scheduled", changes: { scheduledAt: MAY + 60_000 }, reReserve: true }),
    );
    expect((refused as ProblemError).code).toBe("public_usage_limit_reached");
    expect((await current(post.id)).scheduledAt).toBe(MAY); // rolled back with the transaction
  });
});
