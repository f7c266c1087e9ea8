// Comments on posts: team notes, rejections' reasons and reviewers' words.
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { invalid } from "../../core/problem.ts";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { recordAudit } from "../audit/repo.ts";
import { requirePost } from "../posts/actions.ts";
import type { PostRow } from "../posts/repo.ts";
import { authorOf } from "./request.ts";
import { insertComment, type CommentRow, type StoredAuthor } from "./repo.ts";

/** Stores a comment on a post (inside the caller's transaction). */
export async function addCommentRow(
  tx: Db,
  args: { post: PostRow; author: StoredAuthor; body: string },
  now: number,
): Promise<CommentRow> {
  const { post, author, body } = args;
  const row: CommentRow = {
    id: newId("cmt"),
    workspaceId: post.workspaceId,
    postId: post.id,
    authorKind: author.kind,
    authorName: author.name,
    authorId: author.id,
    body,
    createdAt: now,
  };
  await insertComment(tx, row);
  return row;
}

/** POST …/posts/{post}/comments: `{body}` from a person or a credential. */
export async function commentOnPost(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  id: string;
  input: { body: string };
}): Promise<CommentRow> {
  const { h, actor, workspaceId, id, input } = args;
  const body = input.body.trim();
  if (body === "") throw invalid("/body", "must not be blank");
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    const post = await requirePost(tx, workspaceId, id);
    const row = await addCommentRow(tx, { post, author: authorOf(actor), body }, now);
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "post.commented", workspaceId, targetType: "post", targetId: post.id },
      now,
    );
    return row;
  });
}
