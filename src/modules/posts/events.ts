import { afterCommit } from "../../db/transaction.ts";
import { wakeWebhooks } from "../webhooks/wake.ts";
import type { Db } from "../../db/open.ts";
import { insertOutboxEvent } from "../webhooks/repo.ts";
import { eventPostSummary } from "./present.ts";
import { listReceipts, type PostRow } from "./repo.ts";

/** The four post event types of the contract. */
export type PostEventType =
  | "post.published"
  | "post.failed"
  | "post.awaiting-provider"
  | "post.needs-attention";

const EVENT_FOR_STATE: Record<string, PostEventType> = {
  published: "post.published",
  failed: "post.failed",
  "awaiting-provider": "post.awaiting-provider",
  "needs-attention": "post.needs-attention",
  missed: "post.needs-attention",
};

/**
 * Writes the event a state change causes into the outbox; call in the transaction of the change,
 * with the post as it is after it. States without an event type write nothing.
 */
export async function recordPostEvent(db: Db, post: PostRow, now: number): Promise<string | null> {
  const type = EVENT_FOR_STATE[post.state];
  if (!type) return null;
  const id = await insertOutboxEvent(
    db,
    {
      workspaceId: post.workspaceId,
      type,
      postId: post.id,
      destinationId: post.destinationId,
      payload: eventPostSummary(post, await listReceipts(db, [post.id])),
    },
    now,
  );
  afterCommit(db, () => wakeWebhooks(db));
  return id;
}
