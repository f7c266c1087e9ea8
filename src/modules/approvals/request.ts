// Sending posts for approval, and settling an approval when an approver publishes: what Create Post
// and publish drafts call inside their own transactions.
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { recordAudit, type AuditActor } from "../audit/repo.ts";
import { findPost, updatePost, type PostRow } from "../posts/repo.ts";
import type { WorkspaceRow } from "../workspaces/repo.ts";
import { recordApprovalEvent } from "./events.ts";
import {
  insertApprovalStep,
  listApprovals,
  saveApproval,
  updateApprovalStatusIf,
  type ApprovalRow,
  type ApprovalStatus,
  type StoredAuthor,
} from "./repo.ts";

/** Whether a request of `actor` that would publish or schedule waits for approval instead. */
export function needsApproval(workspace: WorkspaceRow, actor: Actor): boolean {
  return workspace.approvalRequired && !actor.scopes.includes("posts:approve");
}

/** How an actor is named as an author: a signed-in person (`user`), or a key or grant (`credential`). */
export function authorOf(actor: Actor): StoredAuthor {
  return { kind: actor.kind === "session" ? "user" : "credential", name: actor.name, id: actor.credentialId };
}

/** The row of a new post that waits for approval: a draft that keeps its destination and time zone. */
export function asDraftAwaitingApproval(row: PostRow): PostRow {
  return {
    ...row,
    state: "draft",
    scheduleMode: "draft",
    scheduledAt: null,
    nextActionAt: null,
    queueLocalDate: null,
    queueWindowId: null,
  };
}

/**
 * Sends drafts for approval (inside the caller's transaction): each keeps the destination it would
 * publish to and gets `approval: requested` with the `when` it asked for; a step, an event and an
 * audit record each. Returns the posts as they are now.
 */
export async function requestApprovals(
  tx: Db,
  args: {
    posts: { post: PostRow; destinationId: string | null }[];
    requested: { when: string; time_zone?: string };
    actor: Actor;
    now: number;
  },
): Promise<PostRow[]> {
  const { requested, actor, now } = args;
  const by = authorOf(actor);
  const rows: PostRow[] = [];
  for (const { post, destinationId } of args.posts) {
    if (destinationId !== post.destinationId)
      await updatePost(tx, post.id, { destinationId, updatedAt: now });
    const approval: ApprovalRow = {
      postId: post.id,
      workspaceId: post.workspaceId,
      status: "requested",
      requestedWhen: requested,
      requestedAt: now,
      requestedBy: by,
      updatedAt: now,
    };
    await saveApproval(tx, approval);
    const after = (await findPost(tx, post.workspaceId, post.id))!;
    await recordStep(tx, { post: after, approval, by, comment: null, auditActor: auditActorOf(actor) }, now);
    rows.push(after);
  }
  return rows;
}

/** The step, event and audit record of an approval that reached `approval.status`. */
export async function recordStep(
  tx: Db,
  step: {
    post: PostRow;
    approval: ApprovalRow;
    by: StoredAuthor;
    comment: string | null;
    auditActor: AuditActor;
  },
  now: number,
): Promise<void> {
  const { post, approval, by, comment } = step;
  await insertApprovalStep(tx, { id: newId("apv"), postId: post.id, status: approval.status, by, at: now });
  const type =
    approval.status === "requested"
      ? "post.approval-requested"
      : approval.status === "approved"
        ? "post.approved"
        : "post.changes-requested";
  await recordApprovalEvent(tx, { type, post, approval, by, comment }, now);
  const action = `post.${approval.status === "requested" ? "approval_requested" : approval.status}`;
  await recordAudit(
    tx,
    step.auditActor,
    { action, workspaceId: post.workspaceId, targetType: "post", targetId: post.id },
    now,
  );
}

/**
 * Moves a post's approval from `from` to `to` and records the step; false when the approval was not in
 * `from` (nothing written).
 */
export async function decideApproval(
  tx: Db,
  args: {
    post: PostRow;
    approval: ApprovalRow;
    from: ApprovalStatus;
    to: ApprovalStatus;
    by: StoredAuthor;
    comment: string | null;
    auditActor: AuditActor;
  },
  now: number,
): Promise<boolean> {
  const { post, approval, from, to } = args;
  if (!(await updateApprovalStatusIf(tx, post.id, from, to, now))) return false;
  await recordStep(tx, { ...args, approval: { ...approval, status: to, updatedAt: now } }, now);
  return true;
}

/** An approver who publishes drafts that awaited approval (or changes) approves them with that act. */
export async function settleApprovals(
  tx: Db,
  args: { posts: PostRow[]; actor: Actor; now: number },
): Promise<void> {
  const { posts, actor, now } = args;
  const byPost = new Map(posts.map((p) => [p.id, p]));
  for (const approval of await listApprovals(tx, [...byPost.keys()])) {
    if (approval.status === "approved") continue;
    const post = byPost.get(approval.postId)!;
    const by = authorOf(actor);
    await decideApproval(
      tx,
      {
        post,
        approval,
        from: approval.status,
        to: "approved",
        by,
        comment: null,
        auditActor: auditActorOf(actor),
      },
      now,
    );
  }
}
