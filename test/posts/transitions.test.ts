// The state door (src/modules/posts/transition.ts) on a real SQLite database: every (from, to) pair
// of the 11 states against the moves docs/posts.md draws, and the bookkeeping of representative
// moves (lease, deferral, X usage, outbox events).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { newId } from "../../src/db/ids.ts";
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
  type PostMoveRequest,
} from "../../src/modules/posts/transition.ts";
import { findXUsage, X_MONTHLY_LIMIT } from "../../src/modules/posts/x-usage.ts";
import { ROOT } from "../helpers/process.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

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
  s = await startTestServer();
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
    attemptCount: 0,
    nextTrigger: "initial",
    autoRetries: 0,
    nextActionAt: null,
    leaseOwner: state === "processing" ? "proc_a" : null,
    leaseExpiresAt: state === "processing" ? NOW + 60_000 : null,
    publishedAt: null,
    cancelledAt: null,
    missedAt: null,
    createdAt: NOW,
    updatedAt: NOW,
    ...extra,
  };
}

/** Stores a post in any state directly (a fixture: the door's own entry allows only four). */
function stored(state: PostState, extra: Partial<PostRow> = {}): PostRow {
  const r = row(state, extra);
  insertPost(s.herald.db, r);
  return r;
}

function move(request: PostMoveRequest & { xErrors?: [] }): PostRow | null {
  const lease = request.to === "processing" ? { owner: "proc_b", until: NOW + 60_000 } : undefined;
  return inTransaction(s.herald.db, (tx) => transitionPost({ tx, now: NOW, lease, ...request }));
}

function events(postId: string): string[] {
  const sql = "SELECT type FROM events_outbox WHERE post_id = ? ORDER BY rowid";
  return s.herald.db.$client
    .query<{ type: string }, [string]>(sql)
    .all(postId)
    .map((r) => r.type);
}

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

  test("every (from, to) pair of the 11 states: the documented moves happen, the rest are refused", () => {
    const documented = documentedMoves();
    expect(documented.size).toBeGreaterThan(30);
    let allowed = 0;
    for (const from of POST_STATES) {
      for (const to of POST_STATES) {
        const post = stored(from);
        const expected = documented.has(`${from}>${to}`);
        expect({ from, to, allowed: isMoveAllowed(from, to) }).toEqual({ from, to, allowed: expected });
        if (expected) {
          const after = move({ post, to });
          expect({ from, to, state: after?.state, version: after?.version }).toEqual({
            from,
            to,
            state: to,
            version: 2,
          });
          allowed++;
        } else {
          let refused: unknown = null;
          try {
            move({ post, to });
          } catch (error) {
            refused = error;
          }
          expect(refused).toBeInstanceOf(PostMoveRefused);
          expect(refused).toBeInstanceOf(ProblemError);
          expect((refused as ProblemError).code).toBe("public_conflict");
          expect({ from, to, state: findPostById(s.herald.db, post.id)!.state }).toEqual({
            from,
            to,
            state: from,
          });
        }
      }
    }
    expect(allowed).toBe([...documented].filter((m) => !m.startsWith("new>")).length);
  });

  test("new posts: only draft, preparing, scheduled and ready, as documented", () => {
    const documented = documentedMoves();
    for (const state of POST_STATES) {
      const r = row(state, { leaseOwner: null, leaseExpiresAt: null });
      const expected = documented.has(`new>${state}`);
      let refused: unknown = null;
      try {
        inTransaction(s.herald.db, (tx) => enterPosts({ tx, rows: [r] }));
      } catch (error) {
        refused = error;
      }
      expect({ state, entered: refused === null }).toEqual({ state, entered: expected });
      if (!expected) expect(refused).toBeInstanceOf(PostMoveRefused);
      expect(findPostById(s.herald.db, r.id)?.state).toBe(expected ? state : undefined);
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

  test("the queue slot index covers exactly the live states", () => {
    const index = s.herald.db.$client
      .query<{ sql: string }, []>(
        "SELECT sql FROM sqlite_master WHERE name = 'posts_one_live_post_per_queue_slot'",
      )
      .get()!.sql;
    const states = /state IN \(([^)]*)\)/
      .exec(index)![1]!
      .split(",")
      .map((x) => x.trim().replaceAll("'", ""));
    expect(new Set(states)).toEqual(new Set(LIVE_STATES));
  });
});

describe("bookkeeping", () => {
  test("entering processing takes the lease; leaving it clears the lease", () => {
    const claimed = move({ post: stored("ready"), to: "processing" })!;
    expect(claimed).toMatchObject({
      state: "processing",
      leaseOwner: "proc_b",
      leaseExpiresAt: NOW + 60_000,
    });
    for (const to of ["published", "ready", "failed", "needs-attention", "awaiting-provider"] as const) {
      const after = move({ post: stored("processing"), to, leasedBy: "proc_a" })!;
      expect({ to, owner: after.leaseOwner, expires: after.leaseExpiresAt }).toEqual({
        to,
        owner: null,
        expires: null,
      });
    }
    expect(() => move({ post: stored("scheduled"), to: "ready", lease: { owner: "x", until: 1 } })).toThrow();
  });

  test("a lost race writes nothing and is not an error: another owner's lease, or a state moved on", () => {
    const leased = stored("processing");
    expect(move({ post: leased, to: "published", leasedBy: "proc_other" })).toBeNull();
    expect(findPostById(s.herald.db, leased.id)).toMatchObject({
      state: "processing",
      version: 1,
      leaseOwner: "proc_a",
    });
    expect(events(leased.id)).toEqual([]);

    const post = stored("scheduled");
    expect(move({ post, to: "ready" })!.state).toBe("ready");
    expect(move({ post, to: "missed" })).toBeNull(); // the caller's copy still says scheduled
    expect(findPostById(s.herald.db, post.id)).toMatchObject({ state: "ready", version: 2 });
    expect(editPostIfStill(s.herald.db, post.id, { state: "scheduled" }, { headline: "no" })).toBe(false);
    expect(editPostIfStill(s.herald.db, post.id, { state: "ready" }, { headline: "yes" })).toBe(true);
  });

  test("a deferral lives only on a post entering ready", () => {
    const deferral = { deferredReason: "publishing_velocity", deferredUntil: NOW + 5_000 };
    const claimed = move({ post: stored("ready", deferral), to: "processing" })!;
    expect(claimed).toMatchObject({ deferredReason: null, deferredUntil: null });
    const cancelled = move({ post: stored("ready", deferral), to: "cancelled" })!;
    expect(cancelled).toMatchObject({ deferredReason: null, deferredUntil: null });
    const until = NOW + 9_000;
    const changes = { deferredReason: "provider_rate_limit", deferredUntil: until, nextActionAt: until };
    const retrying = move({ post: stored("processing"), to: "ready", changes, leasedBy: "proc_a" })!;
    expect(retrying).toMatchObject(changes);
    const failing = move({ post: stored("processing"), to: "failed", changes, leasedBy: "proc_a" })!;
    expect(failing).toMatchObject({ deferredReason: null, deferredUntil: null });
  });

  test("an outbox event for published, failed, needs-attention, awaiting-provider, missed only", () => {
    const seen = new Set<string>();
    for (const m of POST_MOVES) {
      if (m.from === null || seen.has(`${m.from}>${m.to}`)) continue;
      seen.add(`${m.from}>${m.to}`);
      const post = stored(m.from);
      const leasedBy = m.from === "processing" ? "proc_a" : undefined;
      move({ post, to: m.to, leasedBy });
      const expected = EVENTS[m.to];
      expect({ from: m.from, to: m.to, events: events(post.id) }).toEqual({
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
  const x = (state: PostState) => stored(state, { workspaceId: xws, channel: "x" });
  /** Fixture posts are stored without reserving: give the month room to release from. */
  const setUsage = (month: string, reserved: number, used = 0) => {
    const sql = "INSERT OR REPLACE INTO x_usage (workspace_id, month, reserved, used) VALUES (?, ?, ?, ?)";
    s.herald.db.$client.query(sql).run(xws, month, reserved, used);
  };

  beforeAll(async () => {
    xws = (await s.bootstrap()).workspaceId;
  });

  test("a new scheduled X post reserves its month; a draft reserves nothing", () => {
    const r = row("scheduled", { workspaceId: xws, channel: "x" });
    const d = row("draft", { workspaceId: xws, channel: "x", groupKey: "xd" });
    inTransaction(s.herald.db, (tx) => enterPosts({ tx, rows: [r, d] }));
    expect(usage("2026-04")).toEqual({ reserved: 1, used: 0 });
  });

  test("through the engine: the reservation stays until publishing consumes it", () => {
    const before = usage("2026-04");
    const post = x("scheduled");
    const ready = move({ post, to: "ready" })!;
    const claimed = move({ post: ready, to: "processing" })!;
    expect(usage("2026-04")).toEqual(before);
    move({ post: claimed, to: "published", leasedBy: "proc_b" });
    expect(usage("2026-04")).toEqual({ reserved: before.reserved - 1, used: before.used + 1 });
  });

  test("cancel, fail and miss release; cancelling a missed post releases nothing more", () => {
    setUsage("2026-04", 10, 2);
    move({ post: x("scheduled"), to: "cancelled" });
    move({ post: x("processing"), to: "failed", leasedBy: "proc_a" });
    const missed = move({ post: x("scheduled"), to: "missed" })!;
    expect(usage("2026-04")).toEqual({ reserved: 7, used: 2 });
    const after = usage("2026-04");
    move({ post: missed, to: "cancelled" });
    expect(usage("2026-04")).toEqual(after);
  });

  test("retry of a failed or missed post reserves again; of a needs-attention post, not", () => {
    const start = usage("2026-04").reserved;
    move({ post: x("failed"), to: "ready" });
    move({ post: x("missed"), to: "ready" });
    expect(usage("2026-04").reserved).toBe(start + 2);
    move({ post: x("needs-attention"), to: "ready" });
    expect(usage("2026-04").reserved).toBe(start + 2);
  });

  test("a move between months carries the reservation; reschedule re-checks the limit within a month", () => {
    setUsage("2026-04", 10);
    setUsage("2026-05", 10);
    const [april, may] = [10, 10];
    const post = x("scheduled");
    const moved = move({ post, to: "scheduled", changes: { scheduledAt: MAY } })!;
    expect([usage("2026-04").reserved, usage("2026-05").reserved]).toEqual([april - 1, may + 1]);
    move({ post: moved, to: "scheduled", changes: { scheduledAt: MAY + 3_600_000 } });
    expect([usage("2026-04").reserved, usage("2026-05").reserved]).toEqual([april - 1, may + 1]);

    // With the month over the limit, a plain move within it passes and a reschedule (re-reserve) is 402.
    s.herald.db.$client
      .query("UPDATE x_usage SET used = ? WHERE workspace_id = ? AND month = '2026-05'")
      .run(X_MONTHLY_LIMIT, xws);
    const current = findPostById(s.herald.db, post.id)!;
    expect(move({ post: current, to: "scheduled", changes: { scheduledAt: MAY } })).not.toBeNull();
    const again = findPostById(s.herald.db, post.id)!;
    let refused: unknown = null;
    try {
      move({ post: again, to: "scheduled", changes: { scheduledAt: MAY + 60_000 }, reReserve: true });
    } catch (error) {
      refused = error;
    }
    expect((refused as ProblemError).code).toBe("public_usage_limit_reached");
    expect(findPostById(s.herald.db, post.id)!.scheduledAt).toBe(MAY); // rolled back with the transaction
  });
});
