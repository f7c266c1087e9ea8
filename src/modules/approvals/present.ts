import { iso } from "../../lib/clock.ts";
import type { ApprovalRow, ApprovalStepRow, CommentRow, ReviewLinkRow, StoredAuthor } from "./repo.ts";

/** Who did something, as the API shows it (never a credential's id). */
export function presentAuthor(author: StoredAuthor) {
  return { kind: author.kind, name: author.name };
}

/** A post's `approval`: null when it was never sent for approval. */
export function presentApproval(row: ApprovalRow | null | undefined, steps: ApprovalStepRow[]) {
  if (!row) return null;
  return {
    status: row.status,
    requested_when: row.requestedWhen.when,
    requested_time_zone: row.requestedWhen.time_zone ?? null,
    requested_at: iso(row.requestedAt),
    requested_by: presentAuthor(row.requestedBy),
    history: steps.map((s) => ({ status: s.status, at: iso(s.at), by: presentAuthor(s.by) })),
  };
}

/** The `post_comment` resource. */
export function presentComment(row: CommentRow) {
  return {
    id: row.id,
    object: "post_comment" as const,
    post_id: row.postId,
    author: { kind: row.authorKind, name: row.authorName },
    body: row.body,
    created_at: iso(row.createdAt),
  };
}

/** The `review_link` resource; `url` only when the token is known (the answer of its creation). */
export function presentReviewLink(row: ReviewLinkRow, url: string | null) {
  return {
    id: row.id,
    object: "review_link" as const,
    url,
    group: row.groupKey,
    expires_at: iso(row.expiresAt),
    created_at: iso(row.createdAt),
    created_by: presentAuthor(row.createdBy),
  };
}
