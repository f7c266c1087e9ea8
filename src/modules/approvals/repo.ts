// Rows of approvals and review: a post's approval and its steps, comments on posts, review links.
import { and, desc, eq, inArray, isNull, lt, gt } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import { firstRow } from "../../db/engine.ts";
import { insertRow } from "../../db/prepared.ts";
import type { StoredAuthor } from "../../db/tables/approvals.ts";

export type { StoredAuthor };
/** A post's stored approval. */
export type ApprovalRow = Tables["postApprovals"]["$inferSelect"];
/** One stored step of an approval. */
export type ApprovalStepRow = Tables["postApprovalSteps"]["$inferSelect"];
/** A stored comment. */
export type CommentRow = Tables["postComments"]["$inferSelect"];
/** A stored review link (its token only as a hash). */
export type ReviewLinkRow = Tables["reviewLinks"]["$inferSelect"];
/** What an approval can be. */
export type ApprovalStatus = ApprovalRow["status"];

/** The approvals of some posts. */
export async function listApprovals(db: Db, postIds: string[]): Promise<ApprovalRow[]> {
  if (postIds.length === 0) return [];
  const { postApprovals } = tablesOf(db);
  return db.select().from(postApprovals).where(inArray(postApprovals.postId, postIds));
}

/** A post's approval, if it was ever sent for one. */
export async function findApproval(db: Db, postId: string): Promise<ApprovalRow | undefined> {
  const { postApprovals } = tablesOf(db);
  return db.select().from(postApprovals).where(eq(postApprovals.postId, postId)).then(firstRow);
}

/** Stores a post's approval, replacing the one it had (a new request starts over). */
export async function saveApproval(db: Db, row: ApprovalRow): Promise<void> {
  const { postApprovals } = tablesOf(db);
  const { postId: _id, ...changes } = row;
  await db
    .insert(postApprovals)
    .values(row)
    .onConflictDoUpdate({ target: postApprovals.postId, set: changes });
}

/**
 * Moves an approval from `from` to `to`; false when it was no longer in `from` (someone decided
 * first), in which case nothing is written.
 */
export async function updateApprovalStatusIf(
  db: Db,
  postId: string,
  from: ApprovalStatus,
  to: ApprovalStatus,
  now: number,
): Promise<boolean> {
  const { postApprovals } = tablesOf(db);
  const rows = await db
    .update(postApprovals)
    .set({ status: to, updatedAt: now })
    .where(and(eq(postApprovals.postId, postId), eq(postApprovals.status, from)))
    .returning({ id: postApprovals.postId });
  return rows.length === 1;
}

/** Records one step of a post's approval. */
export async function insertApprovalStep(db: Db, row: ApprovalStepRow): Promise<void> {
  const { postApprovalSteps } = tablesOf(db);
  await insertRow(db, postApprovalSteps, row);
}

/** The steps of some posts' approvals, oldest first. */
export async function listApprovalSteps(db: Db, postIds: string[]): Promise<ApprovalStepRow[]> {
  if (postIds.length === 0) return [];
  const { postApprovalSteps } = tablesOf(db);
  return db
    .select()
    .from(postApprovalSteps)
    .where(inArray(postApprovalSteps.postId, postIds))
    .orderBy(postApprovalSteps.id);
}

/** Stores a comment. */
export async function insertComment(db: Db, row: CommentRow): Promise<void> {
  const { postComments } = tablesOf(db);
  await insertRow(db, postComments, row);
}

/** One page (plus one row) of a post's comments, newest first. */
export async function listComments(
  db: Db,
  postId: string,
  afterId: string | null,
  limit: number,
): Promise<CommentRow[]> {
  const { postComments } = tablesOf(db);
  return db
    .select()
    .from(postComments)
    .where(and(eq(postComments.postId, postId), afterId ? lt(postComments.id, afterId) : undefined))
    .orderBy(desc(postComments.id))
    .limit(limit + 1);
}

/** The newest comment on a post by one author (a replayed reviewer form is recognised by it). */
export async function findLatestComment(
  db: Db,
  postId: string,
  authorId: string,
): Promise<CommentRow | undefined> {
  const { postComments } = tablesOf(db);
  return db
    .select()
    .from(postComments)
    .where(and(eq(postComments.postId, postId), eq(postComments.authorId, authorId)))
    .orderBy(desc(postComments.id))
    .limit(1)
    .then(firstRow);
}

/** Stores a review link. */
export async function insertReviewLink(db: Db, row: ReviewLinkRow): Promise<void> {
  const { reviewLinks } = tablesOf(db);
  await insertRow(db, reviewLinks, row);
}

/** A live (not deleted) review link of a workspace. */
export async function findReviewLink(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<ReviewLinkRow | undefined> {
  const { reviewLinks } = tablesOf(db);
  return db
    .select()
    .from(reviewLinks)
    .where(
      and(eq(reviewLinks.workspaceId, workspaceId), eq(reviewLinks.id, id), isNull(reviewLinks.deletedAt)),
    )
    .then(firstRow);
}

/** The live, unexpired review link whose token hashes to `tokenHash`. */
export async function findReviewLinkByTokenHash(
  db: Db,
  tokenHash: string,
  now: number,
): Promise<ReviewLinkRow | undefined> {
  const { reviewLinks } = tablesOf(db);
  return db
    .select()
    .from(reviewLinks)
    .where(
      and(
        eq(reviewLinks.tokenHash, tokenHash),
        isNull(reviewLinks.deletedAt),
        gt(reviewLinks.expiresAt, now),
      ),
    )
    .then(firstRow);
}

/** One page (plus one row) of a workspace's live review links, newest first (expired ones included). */
export async function listReviewLinks(
  db: Db,
  workspaceId: string,
  afterId: string | null,
  limit: number,
): Promise<ReviewLinkRow[]> {
  const { reviewLinks } = tablesOf(db);
  return db
    .select()
    .from(reviewLinks)
    .where(
      and(
        eq(reviewLinks.workspaceId, workspaceId),
        isNull(reviewLinks.deletedAt),
        afterId ? lt(reviewLinks.id, afterId) : undefined,
      ),
    )
    .orderBy(desc(reviewLinks.id))
    .limit(limit + 1);
}

/** Marks a review link deleted; false when it already was. */
export async function markReviewLinkDeleted(db: Db, id: string, now: number): Promise<boolean> {
  const { reviewLinks } = tablesOf(db);
  const rows = await db
    .update(reviewLinks)
    .set({ deletedAt: now })
    .where(and(eq(reviewLinks.id, id), isNull(reviewLinks.deletedAt)))
    .returning({ id: reviewLinks.id });
  return rows.length === 1;
}

/** The posts of one group of a workspace, oldest first. */
export async function listGroupPosts(db: Db, workspaceId: string, group: string) {
  const { posts } = tablesOf(db);
  return db
    .select()
    .from(posts)
    .where(and(eq(posts.workspaceId, workspaceId), eq(posts.groupKey, group)))
    .orderBy(posts.id);
}

/** Whether a workspace has any post in a group. */
export async function groupExists(db: Db, workspaceId: string, group: string): Promise<boolean> {
  const { posts } = tablesOf(db);
  const rows = await db
    .select({ id: posts.id })
    .from(posts)
    .where(and(eq(posts.workspaceId, workspaceId), eq(posts.groupKey, group)))
    .limit(1);
  return rows.length > 0;
}
