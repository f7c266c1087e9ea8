import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectProblem } from "../helpers/problems.ts";
import {
  approveGroupAsReviewer,
  findReviewLinkByToken,
  requestChangesAsReviewer,
  reviewGroupPosts,
} from "../../src/modules/approvals/review-links.ts";
import { ProblemError } from "../../src/core/problem.ts";
import { engineOf } from "../../src/db/engine.ts";
import { sha256Hex } from "../../src/lib/crypto.ts";
import { awaitingPost, postBody, startApprovalWorld, type ApprovalWorld } from "./helpers.ts";

let w: ApprovalWorld;
beforeAll(async () => {
  w = await startApprovalWorld();
});
afterAll(async () => {
  await w.stop();
});

const DAY = 24 * 60 * 60 * 1000;
const tokenOf = (url: string) => url.split("/review/")[1]!;

/** A group whose post awaits approval. */
async function awaitingGroup(): Promise<{ group: string; ids: string[] }> {
  const post = await awaitingPost(w);
  return { group: post.group, ids: [post.id] };
}

async function linkFor(group: string, extra: Record<string, unknown> = {}) {
  const r = await w.call("POST", "/review-links", { group, ...extra });
  expect({ status: r.status, text: r.text }).toMatchObject({ status: 201 });
  return r.body;
}

describe("creating, listing and deleting", () => {
  test("201 with the URL once; the token is stored hashed; the listing has no URL", async () => {
    const { group } = await awaitingGroup();
    const link = await linkFor(group);
    expect(link).toEqual({
      id: expect.stringMatching(/^rvl_/),
      object: "review_link",
      url: expect.stringMatching(new RegExp(`^${w.s.herald.config.baseUrl}/review/[0-9A-Za-z]{43}$`)),
      group,
      expires_at: new Date(w.s.clock.now() + 30 * DAY).toISOString(),
      created_at: new Date(w.s.clock.now()).toISOString(),
      created_by: { kind: "credential", name: expect.any(String) },
    });
    const [stored] = await engineOf(w.s.herald.db).query<Record<string, unknown>>(
      "SELECT * FROM review_links WHERE id = ?",
      [link.id],
    );
    expect(stored!.token_hash).toBe(sha256Hex(tokenOf(link.url)));
    expect(JSON.stringify(stored)).not.toContain(tokenOf(link.url));
    const listed = await w.call("GET", "/review-links");
    expect(listed.body.data[0]).toEqual({ ...link, url: null });
    expect(JSON.stringify(listed.body)).not.toContain(tokenOf(link.url));
    expect((await findReviewLinkByToken(w.s.herald.db, tokenOf(link.url), w.s.clock.now()))?.id).toBe(
      link.id,
    );
  });

  const bad = [
    { name: "expires_in_days 0", body: { expires_in_days: 0 }, pointer: "/expires_in_days" },
    { name: "expires_in_days 31", body: { expires_in_days: 31 }, pointer: "/expires_in_days" },
    { name: "expires_in_days 1.5", body: { expires_in_days: 1.5 }, pointer: "/expires_in_days" },
    { name: "no group", body: { group: undefined }, pointer: "/group" },
  ];
  for (const c of bad)
    test(`${c.name}: 400 at ${c.pointer}`, async () => {
      const { group } = await awaitingGroup();
      expectProblem(
        await w.call("POST", "/review-links", { group, ...c.body }),
        400,
        "public_invalid_request",
        [c.pointer],
      );
    });

  test("a group without posts in the workspace is 404 at /group; a member cannot create one (403)", async () => {
    expectProblem(
      await w.call("POST", "/review-links", { group: "no-such-group" }),
      404,
      "public_not_found",
      ["/group"],
    );
    const { group } = await awaitingGroup();
    expectProblem(await w.call("POST", "/review-links", { group }, w.memberKey), 403, "public_scope_missing");
    expect((await w.call("GET", "/review-links", undefined, w.memberKey)).status).toBe(200);
  });

  test("expires_in_days 1: the token opens the link until then, not after", async () => {
    const { group } = await awaitingGroup();
    const link = await linkFor(group, { expires_in_days: 1 });
    const token = tokenOf(link.url);
    expect(await findReviewLinkByToken(w.s.herald.db, token, w.s.clock.now() + DAY - 1)).not.toBeNull();
    expect(await findReviewLinkByToken(w.s.herald.db, token, w.s.clock.now() + DAY)).toBeNull();
  });

  test("a deleted link opens nothing; deleting it again is 404; a member cannot delete (403)", async () => {
    const { group } = await awaitingGroup();
    const link = await linkFor(group);
    expectProblem(
      await w.call("DELETE", `/review-links/${link.id}`, undefined, w.memberKey),
      403,
      "public_scope_missing",
    );
    const r = await w.call("DELETE", `/review-links/${link.id}`);
    expect(r.body).toEqual({ id: link.id, object: "review_link", deleted: true });
    expect(await findReviewLinkByToken(w.s.herald.db, tokenOf(link.url), w.s.clock.now())).toBeNull();
    expectProblem(await w.call("DELETE", `/review-links/${link.id}`), 404, "public_not_found");
    const listed = await w.call("GET", "/review-links?limit=100");
    expect(listed.body.data.map((l: any) => l.id)).not.toContain(link.id);
  });

  test("unknown or malformed tokens open nothing", async () => {
    for (const token of ["", "short", "x".repeat(43), "../../etc/passwd", "a".repeat(500)])
      expect(await findReviewLinkByToken(w.s.herald.db, token, w.s.clock.now())).toBeNull();
  });
});

describe("the reviewer's actions", () => {
  test("approve: every post awaiting approval is approved, the comment recorded once; a replay changes nothing", async () => {
    const first = await awaitingPost(w);
    const link = await linkFor(first.group);
    const row = (await findReviewLinkByToken(w.s.herald.db, tokenOf(link.url), w.s.clock.now()))!;
    expect((await reviewGroupPosts(w.s.herald.db, row)).map((p) => p.id)).toEqual([first.id]);
    const input = { name: "Dana (client)", comment: "Looks great" };
    const outcome = await approveGroupAsReviewer(w.s.herald, row, input, w.s.clock.now());
    expect(outcome.decided.map((p) => p.id)).toEqual([first.id]);
    expect(outcome.refused).toEqual([]);
    const post = (await w.call("GET", `/posts/${first.id}`)).body;
    expect(post).toMatchObject({ state: "scheduled", approval: { status: "approved" } });
    expect(post.approval.history[1]).toMatchObject({
      status: "approved",
      by: { kind: "reviewer", name: "Dana (client)" },
    });
    const replay = await approveGroupAsReviewer(w.s.herald, row, input, w.s.clock.now());
    expect(replay).toEqual({ decided: [], refused: [], commented: [] });
    const comments = (await w.call("GET", `/posts/${first.id}/comments`)).body.data;
    expect(comments).toEqual([
      expect.objectContaining({ body: "Looks great", author: { kind: "reviewer", name: "Dana (client)" } }),
    ]);
  });

  test("approve without a name or comment: the reviewer is named Reviewer and no comment is added", async () => {
    const post = await awaitingPost(w);
    const link = await linkFor(post.group);
    const row = (await findReviewLinkByToken(w.s.herald.db, tokenOf(link.url), w.s.clock.now()))!;
    const outcome = await approveGroupAsReviewer(w.s.herald, row, {}, w.s.clock.now());
    expect(outcome.decided).toHaveLength(1);
    expect(outcome.commented).toEqual([]);
    const after = (await w.call("GET", `/posts/${post.id}`)).body;
    expect(after.approval.history[1].by).toEqual({ kind: "reviewer", name: "Reviewer" });
  });

  test("a post that cannot go out is reported, not approved; the others are", async () => {
    const late = await awaitingPost(w, new Date(w.s.clock.now() + 30 * 60_000).toISOString());
    const link = await linkFor(late.group);
    const row = (await findReviewLinkByToken(w.s.herald.db, tokenOf(link.url), w.s.clock.now()))!;
    const outcome = await approveGroupAsReviewer(w.s.herald, row, {}, w.s.clock.now() + 2 * 60 * 60_000);
    expect(outcome.decided).toEqual([]);
    expect(outcome.refused.map((r) => r.post.id)).toEqual([late.id]);
    expect(outcome.refused[0]!.detail).toContain("past");
    expect((await w.call("GET", `/posts/${late.id}`)).body.approval.status).toBe("requested");
  });

  test("request changes: the comment is required; the posts go back with it; a replay adds nothing", async () => {
    const post = await awaitingPost(w);
    const link = await linkFor(post.group);
    const row = (await findReviewLinkByToken(w.s.herald.db, tokenOf(link.url), w.s.clock.now()))!;
    const refused = await requestChangesAsReviewer(
      w.s.herald,
      row,
      { name: "Dana", comment: "  " },
      w.s.clock.now(),
    ).catch((e) => e);
    expect(refused).toBeInstanceOf(ProblemError);
    expect(refused.errors[0].pointer).toBe("/comment");
    const input = { name: "Dana", comment: "Shorter, please" };
    const outcome = await requestChangesAsReviewer(w.s.herald, row, input, w.s.clock.now());
    expect(outcome.decided.map((p) => p.id)).toEqual([post.id]);
    const after = (await w.call("GET", `/posts/${post.id}`)).body;
    expect(after).toMatchObject({ state: "draft", approval: { status: "changes_requested" } });
    const replay = await requestChangesAsReviewer(w.s.herald, row, input, w.s.clock.now());
    expect(replay.decided).toEqual([]);
    expect(replay.commented).toEqual([]);
    const comments = (await w.call("GET", `/posts/${post.id}/comments`)).body.data;
    expect(comments.map((c: any) => [c.author.kind, c.body])).toEqual([["reviewer", "Shorter, please"]]);
    // A different comment later is a new comment.
    await requestChangesAsReviewer(
      w.s.herald,
      row,
      { name: "Dana", comment: "And a picture" },
      w.s.clock.now(),
    );
    expect((await w.call("GET", `/posts/${post.id}/comments`)).body.data).toHaveLength(2);
  });

  test("a draft that was never sent for approval is left alone by the reviewer", async () => {
    const draft = (await w.call("POST", "/posts", postBody(w, "draft"))).body.posts[0];
    const link = await linkFor(draft.group);
    const row = (await findReviewLinkByToken(w.s.herald.db, tokenOf(link.url), w.s.clock.now()))!;
    const outcome = await approveGroupAsReviewer(w.s.herald, row, { comment: "ok" }, w.s.clock.now());
    expect(outcome.decided).toEqual([]);
    expect((await w.call("GET", `/posts/${draft.id}`)).body).toMatchObject({
      state: "draft",
      approval: null,
    });
  });
});
