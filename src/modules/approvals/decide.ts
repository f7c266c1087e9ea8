// Approving a post (it leaves `draft` as publish drafts would move it, with the `when` it asked for)
// and requesting changes (it stays a draft, with the reason as a comment).
import { auditActorOf, requireLive, type Actor } from "../../core/actor.ts";
import { invalid, ProblemError, type FieldError } from "../../core/problem.ts";
import type { Db } from "../../db/open.ts";
import type { Herald } from "../../herald.ts";
import type { AuditActor } from "../audit/repo.ts";
import { requirePost, checkPublishRequest, submitDrafts } from "../posts/actions.ts";
import { inPostsTransaction } from "../posts/constraints.ts";
import type { PostRow } from "../posts/repo.ts";
import type { WorkspaceRow } from "../workspaces/repo.ts";
import { addCommentRow } from "./comments.ts";
import { authorOf, decideApproval } from "./request.ts";
import { findApproval, type ApprovalRow, type StoredAuthor } from "./repo.ts";

/** A post's approval while it awaits a decision, or 409 saying what it is instead. */
async function requireAwaitingApproval(tx: Db, post: PostRow): Promise<ApprovalRow> {
  const approval = await findApproval(tx, post.id);
  if (approval?.status === "requested" && post.state === "draft") return approval;
  const what = !approval
    ? "was never sent for approval"
    : approval.status === "requested"
      ? `is ${post.state}`
      : `has approval status ${approval.status}`;
  throw new ProblemError(
    "public_conflict",
    `Post ${post.id} is not awaiting approval: it ${what}. ` +
      "Only a draft whose approval.status is requested can be approved or sent back.",
  );
}

/** Problems of the shared publish code point at `/posts/0/…`; here the post is the request's own. */
function asOwnPointers<T>(run: () => Promise<T>): Promise<T> {
  return run().catch((error: unknown) => {
    if (!(error instanceof ProblemError) || error.errors.length === 0) throw error;
    const errors: FieldError[] = error.errors.map((e) => ({
      ...e,
      pointer: e.pointer.replace(/^\/posts\/0/, "") || "",
    }));
    throw new ProblemError(error.code, error.detail, { errors, retrySafety: error.retrySafety });
  });
}

/**
 * Approves one post awaiting approval inside the caller's transaction: it leaves `draft` for the
 * state its `requested_when` gives, exactly as publish drafts would move it now (a requested time
 * that has passed is 422: the requester publishes again with a new time).
 */
export async function approveInTransaction(
  h: Herald,
  tx: Db,
  args: {
    workspace: WorkspaceRow;
    post: PostRow;
    approval: ApprovalRow;
    by: StoredAuthor;
    auditActor: AuditActor;
  },
  now: number,
): Promise<PostRow> {
  const { workspace, post, approval, by, auditActor } = args;
  const input = {
    confirmed: true,
    when: approval.requestedWhen.when,
    ...(approval.requestedWhen.time_zone ? { time_zone: approval.requestedWhen.time_zone } : {}),
    posts: [{ id: post.id, version: post.version, destination_id: post.destinationId ?? "" }],
  };
  const when = checkPublishRequest(input, "live", now);
  const [after] = await submitDrafts({ h, tx, auditActor, workspace, input, when, now });
  await decideApproval(
    tx,
    { post: after!, approval, from: "requested", to: "approved", by, comment: null, auditActor },
    now,
  );
  return after!;
}

/** POST …/posts/{post}/approve: `{confirmed: true, version}`; needs posts:approve and a live credential. */
export async function approvePost(args: {
  h: Herald;
  actor: Actor;
  workspace: WorkspaceRow;
  id: string;
  input: { confirmed?: boolean; version: number };
}): Promise<PostRow> {
  const { h, actor, workspace, id, input } = args;
  if (input.confirmed !== true) throw invalid("/confirmed", "must be true to approve");
  requireLive(actor, "Approving publishes or schedules the post: it needs a live API key.");
  const now = h.clock.now();
  return inPostsTransaction(h.db, async (tx) => {
    const post = await requirePost(tx, workspace.id, id);
    const approval = await requireAwaitingApproval(tx, post);
    if (post.version !== input.version)
      throw new ProblemError(
        "public_version_conflict",
        `Post ${post.id} is at version ${post.version}, not ${input.version}: it changed since you saw it; fetch it again.`,
        { errors: [{ pointer: "/version", code: "custom", detail: `current version is ${post.version}` }] },
      );
    return asOwnPointers(() =>
      approveInTransaction(
        h,
        tx,
        { workspace, post, approval, by: authorOf(actor), auditActor: auditActorOf(actor) },
        now,
      ),
    );
  });
}

/**
 * Sends one post awaiting approval back inside the caller's transaction: it stays a draft with
 * `approval.status: changes_requested`, and the reason is added as a comment.
 */
export async function requestChangesInTransaction(
  tx: Db,
  args: { post: PostRow; approval: ApprovalRow; by: StoredAuthor; comment: string; auditActor: AuditActor },
  now: number,
): Promise<void> {
  const { post, by, comment } = args;
  await addCommentRow(tx, { post, author: by, body: comment }, now);
  await decideApproval(tx, { ...args, from: "requested", to: "changes_requested" }, now);
}

/** POST …/posts/{post}/reject: `{confirmed: true, comment}` (the comment is required). */
export async function rejectPost(args: {
  h: Herald;
  actor: Actor;
  workspace: WorkspaceRow;
  id: string;
  input: { confirmed?: boolean; comment?: string };
}): Promise<PostRow> {
  const { h, actor, workspace, id, input } = args;
  if (input.confirmed !== true) throw invalid("/confirmed", "must be true to request changes");
  const comment = (input.comment ?? "").trim();
  if (comment === "") throw invalid("/comment", "is required: say what should change");
  const now = h.clock.now();
  return inPostsTransaction(h.db, async (tx) => {
    const post = await requirePost(tx, workspace.id, id);
    const approval = await requireAwaitingApproval(tx, post);
    const by = authorOf(actor);
    await requestChangesInTransaction(
      tx,
      { post, approval, by, comment, auditActor: auditActorOf(actor) },
      now,
    );
    return requirePost(tx, workspace.id, id);
  });
}
