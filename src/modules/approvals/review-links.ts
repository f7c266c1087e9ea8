// Review links: a URL a client opens without signing in to see a group's posts and approve them or
// request changes. The token is in the URL only; the database keeps its SHA-256 (like a key's secret).
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { invalid, notFound, ProblemError } from "../../core/problem.ts";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { randomBase62, sha256Hex } from "../../lib/crypto.ts";
import { recordAudit, type AuditActor } from "../audit/repo.ts";
import { checkEntitlement } from "../billing/entitlement.ts";
import { inPostsTransaction } from "../posts/constraints.ts";
import { findPost, type PostRow } from "../posts/repo.ts";
import { findWorkspaceById, type WorkspaceRow } from "../workspaces/repo.ts";
import { addCommentRow } from "./comments.ts";
import { approveInTransaction, requestChangesInTransaction } from "./decide.ts";
import { COMMENT_MAX, REVIEW_LINK_DAYS, REVIEWER_NAME_MAX } from "./limits.ts";
import { authorOf } from "./request.ts";
import {
  findApproval,
  findLatestComment,
  findReviewLink,
  findReviewLinkByTokenHash,
  groupExists,
  insertReviewLink,
  listGroupPosts,
  markReviewLinkDeleted,
  type ReviewLinkRow,
  type StoredAuthor,
} from "./repo.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

/** The page a review link opens. */
export function reviewUrl(h: Herald, token: string): string {
  return `${h.config.baseUrl}/review/${token}`;
}

function audit(db: Db, actor: AuditActor, action: string, link: ReviewLinkRow, now: number) {
  return recordAudit(
    db,
    actor,
    { action, workspaceId: link.workspaceId, targetType: "review_link", targetId: link.id },
    now,
  );
}

/**
 * POST …/review-links: `{group, expires_in_days}` (1-30, default 30); the group must have posts in the
 * workspace. Returns the row and its URL, shown this once.
 */
export async function createReviewLink(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  input: { group: string; expires_in_days?: number };
}): Promise<{ row: ReviewLinkRow; url: string }> {
  const { h, actor, workspaceId, input } = args;
  const days = input.expires_in_days ?? REVIEW_LINK_DAYS.default;
  if (!Number.isInteger(days) || days < REVIEW_LINK_DAYS.min || days > REVIEW_LINK_DAYS.max)
    throw invalid("/expires_in_days", "must be a whole number of days from 1 to 30");
  const token = randomBase62(43);
  const now = h.clock.now();
  const row: ReviewLinkRow = {
    id: newId("rvl"),
    workspaceId,
    groupKey: input.group,
    tokenHash: sha256Hex(token),
    expiresAt: now + days * DAY_MS,
    createdBy: authorOf(actor),
    createdAt: now,
    deletedAt: null,
  };
  await inTransaction(h.db, async (tx) => {
    if (!(await groupExists(tx, workspaceId, input.group)))
      throw new ProblemError("public_not_found", `No posts in group ${input.group} in this workspace.`, {
        errors: [{ pointer: "/group", code: "custom", detail: "no post of this workspace is in this group" }],
      });
    await insertReviewLink(tx, row);
    await audit(tx, auditActorOf(actor), "review_link.created", row, now);
  });
  return { row, url: reviewUrl(h, token) };
}

/** DELETE …/review-links/{id}: the link answers 404 from now on. */
export async function deleteReviewLink(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  id: string;
}): Promise<ReviewLinkRow> {
  const { h, actor, workspaceId, id } = args;
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    const row = await findReviewLink(tx, workspaceId, id);
    if (!row || !(await markReviewLinkDeleted(tx, id, now))) throw notFound("review link");
    await audit(tx, auditActorOf(actor), "review_link.deleted", row, now);
    return { ...row, deletedAt: now };
  });
}

/** The link a token opens, or null when there is none, it expired or was deleted. */
export async function findReviewLinkByToken(
  db: Db,
  token: string,
  now: number,
): Promise<ReviewLinkRow | null> {
  if (!/^[0-9A-Za-z]{20,100}$/.test(token)) return null;
  return (await findReviewLinkByTokenHash(db, sha256Hex(token), now)) ?? null;
}

/** The posts of a link's group, oldest first (what the review page shows). */
export async function reviewGroupPosts(db: Db, link: ReviewLinkRow): Promise<PostRow[]> {
  return listGroupPosts(db, link.workspaceId, link.groupKey);
}

/** What a reviewer's form brought. */
export interface ReviewerInput {
  name?: string | null;
  comment?: string | null;
}

/** What a reviewer's action did. */
export interface ReviewOutcome {
  /** Posts whose approval this action decided. */
  decided: PostRow[];
  /** Posts that awaited approval but could not be approved, with why (a time passed, a disconnected destination). */
  refused: { post: PostRow; detail: string }[];
  /** Posts the comment was added to (none when the same comment was already the link's last word). */
  commented: PostRow[];
}

/** A reviewer as an author: the name they gave (or "Reviewer"), the link as their credential. */
function reviewerOf(link: ReviewLinkRow, input: ReviewerInput): StoredAuthor {
  const name = (input.name ?? "").trim().slice(0, REVIEWER_NAME_MAX);
  return { kind: "reviewer", name: name || "Reviewer", id: link.id };
}

/** The audit actor of a reviewer: the workspace's account, the link as the credential. */
async function reviewerAuditActor(db: Db, link: ReviewLinkRow): Promise<AuditActor> {
  const workspace = (await findWorkspaceById(db, link.workspaceId))!;
  return {
    accountId: workspace.accountId,
    credentialId: link.id,
    requestId: newId("req"),
    clientRequestId: null,
  };
}

function cleanComment(comment: string | null | undefined): string {
  const text = (comment ?? "").trim();
  if (text.length > COMMENT_MAX) throw invalid("/comment", `must be at most ${COMMENT_MAX} characters`);
  return text;
}

/**
 * Adds a reviewer's comment to every post of the group, unless it is already this link's last comment
 * on the post with the same words (a form posted twice comments once).
 */
async function commentOnGroup(
  tx: Db,
  posts: PostRow[],
  author: StoredAuthor,
  body: string,
  now: number,
): Promise<PostRow[]> {
  const commented: PostRow[] = [];
  for (const post of posts) {
    const last = await findLatestComment(tx, post.id, author.id!);
    if (last && last.body === body && last.authorName === author.name) continue;
    await addCommentRow(tx, { post, author, body }, now);
    commented.push(post);
  }
  return commented;
}

/** Posts of the group still awaiting approval (a replayed form finds none it already decided). */
async function awaitingPosts(db: Db, link: ReviewLinkRow) {
  const awaiting = [];
  for (const post of await reviewGroupPosts(db, link)) {
    const approval = await findApproval(db, post.id);
    if (approval?.status === "requested" && post.state === "draft") awaiting.push({ post, approval });
  }
  return awaiting;
}

async function workspaceOfLink(db: Db, link: ReviewLinkRow): Promise<WorkspaceRow> {
  return (await findWorkspaceById(db, link.workspaceId))!;
}

/**
 * "Approve" on the review page: approves every post of the group awaiting approval (each on its own,
 * so one that cannot go out does not hold back the others) and records the comment, if any. Posting
 * the same form again approves nothing more and adds no second comment.
 */
export async function approveGroupAsReviewer(
  h: Herald,
  link: ReviewLinkRow,
  input: ReviewerInput,
  now: number,
): Promise<ReviewOutcome> {
  const by = reviewerOf(link, input);
  const comment = cleanComment(input.comment);
  const auditActor = await reviewerAuditActor(h.db, link);
  const workspace = await workspaceOfLink(h.db, link);
  // The approve operation's billing rule (402 on a read-only account): a link is no way around it.
  await checkEntitlement(h, {
    method: "POST",
    route: "/v1/workspaces/:workspace_id/posts/:post_id/approve",
    actor: { accountId: workspace.accountId },
    workspaceId: workspace.id,
  });
  const outcome: ReviewOutcome = { decided: [], refused: [], commented: [] };
  for (const { post } of await awaitingPosts(h.db, link)) {
    try {
      const after = await inPostsTransaction(h.db, async (tx) => {
        // Read again inside the transaction: another reviewer or approver may have decided first.
        const current = await findPost(tx, link.workspaceId, post.id);
        const approval = current && (await findApproval(tx, post.id));
        if (!current || approval?.status !== "requested" || current.state !== "draft") return null;
        return approveInTransaction(h, tx, { workspace, post: current, approval, by, auditActor }, now);
      });
      if (after) outcome.decided.push(after);
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      const why = error.errors.map((e) => e.detail).join("; ");
      outcome.refused.push({ post, detail: why ? `${error.detail} (${why})` : error.detail });
    }
  }
  if (comment !== "")
    outcome.commented = await inTransaction(h.db, async (tx) =>
      commentOnGroup(tx, await reviewGroupPosts(tx, link), by, comment, now),
    );
  return outcome;
}

/**
 * "Request changes" on the review page (the comment is required): every post of the group awaiting
 * approval goes back to its author with `changes_requested`, and the comment is added to every post
 * of the group. Posting the same form again changes nothing more.
 */
export async function requestChangesAsReviewer(
  h: Herald,
  link: ReviewLinkRow,
  input: ReviewerInput,
  now: number,
): Promise<ReviewOutcome> {
  const by = reviewerOf(link, input);
  const comment = cleanComment(input.comment);
  if (comment === "") throw invalid("/comment", "is required: say what should change");
  const auditActor = await reviewerAuditActor(h.db, link);
  return inTransaction(h.db, async (tx) => {
    const decided: PostRow[] = [];
    for (const { post, approval } of await awaitingPosts(tx, link)) {
      await requestChangesInTransaction(tx, { post, approval, by, comment, auditActor }, now);
      decided.push(post);
    }
    // The decided posts got the comment with their step; the rest of the group gets it here.
    const decidedIds = new Set(decided.map((p) => p.id));
    const others = (await reviewGroupPosts(tx, link)).filter((p) => !decidedIds.has(p.id));
    const commented = [...decided, ...(await commentOnGroup(tx, others, by, comment, now))];
    return { decided, refused: [], commented };
  });
}
