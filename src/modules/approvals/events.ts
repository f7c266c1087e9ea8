import { afterCommit } from "../../db/transaction.ts";
import type { Db } from "../../db/open.ts";
import { insertOutboxEvent } from "../webhooks/repo.ts";
import { wakeWebhooks } from "../webhooks/wake.ts";
import { eventPostSummary } from "../posts/present.ts";
import type { PostRow } from "../posts/repo.ts";
import { presentAuthor } from "./present.ts";
import type { ApprovalRow, StoredAuthor } from "./repo.ts";

/** The approval event types: opt-in for webhook endpoints (only those that list them get them). */
export const APPROVAL_EVENT_TYPES = [
  "post.approval-requested",
  "post.approved",
  "post.changes-requested",
] as const;
export type ApprovalEventType = (typeof APPROVAL_EVENT_TYPES)[number];

/**
 * Writes an approval event into the outbox, in the transaction of the change: `data.object` is the
 * post summary with its `approval`, who acted (`by`) and the comment that came with it, if any.
 */
export async function recordApprovalEvent(
  db: Db,
  event: {
    type: ApprovalEventType;
    post: PostRow;
    approval: ApprovalRow;
    by: StoredAuthor;
    comment: string | null;
  },
  now: number,
): Promise<void> {
  const { post, approval } = event;
  await insertOutboxEvent(
    db,
    {
      workspaceId: post.workspaceId,
      type: event.type,
      postId: post.id,
      destinationId: post.destinationId,
      payload: {
        ...eventPostSummary(post, []),
        approval: {
          status: approval.status,
          requested_when: approval.requestedWhen.when,
          requested_at: new Date(approval.requestedAt).toISOString(),
          requested_by: presentAuthor(approval.requestedBy),
        },
        by: presentAuthor(event.by),
        comment: event.comment,
      },
    },
    now,
  );
  afterCommit(db, () => wakeWebhooks(db));
}
