// The engine's side of recycling: the next copy of an evergreen post, scheduled in the transaction
// that records a publication of the original or of a copy.
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import type { RecyclePlan } from "../../db/recycle-plan.ts";
import type { Herald } from "../../herald.ts";
import { headlineOf } from "../posts/create.ts";
import { findFreeQueueSlot } from "../posts/queue.ts";
import { findPostById, type PostRow } from "../posts/repo.ts";
import { enterPosts } from "../posts/transition.ts";
import { xMonthlyLimit } from "../posts/x-usage.ts";
import { recycledCopyExists } from "./repo.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

/** Whether publishing this post may schedule a copy (it has a plan, or is a copy of one). */
export function takesPartInRecycling(post: PostRow): boolean {
  return post.recycle !== null || post.recycledFrom !== null;
}

/** Copy `number`'s body: the variations in turn, or the original's body when there are none. */
export function copyBody(plan: RecyclePlan, original: PostRow, number: number): string[] {
  const { variations } = plan;
  return variations.length > 0 ? variations[(number - 1) % variations.length]! : original.body;
}

/**
 * Called with a post just moved to `published`, inside the transaction that records it: when the
 * post is an original with a recycling plan, or one of its copies, and copies are left, the next
 * copy is stored `scheduled` `every_days` after this publication, in the same group, on the same
 * destination with the same media and options. An original placed by the queue has its copies
 * placed by the queue too (the first free window at or after that time; the exact time when the
 * queue has none). The copy's pace (daily cap, spacing) is the engine's, checked when it is claimed
 * like any post's. At most one copy per number: the transaction moved the post out of `processing`
 * under its lease, so it runs once per publication, and the unique index on (recycled_from,
 * recycle_number) holds should it ever run twice. A cancelled copy is never published, so the
 * chain stops there.
 */
export async function scheduleNextRecycledCopy(
  h: Herald,
  tx: Db,
  published: PostRow,
  now: number,
): Promise<PostRow | null> {
  if (!takesPartInRecycling(published)) return null;
  const original = published.recycledFrom ? await findPostById(tx, published.recycledFrom) : published;
  const plan = original?.recycle;
  if (!original || !plan) return null;
  const number = published.recycledFrom ? (published.recycleNumber ?? 0) + 1 : 1;
  if (number > plan.count || (await recycledCopyExists(tx, original.id, number))) return null;
  const due = (published.publishedAt ?? now) + plan.every_days * DAY_MS;
  const slot =
    original.scheduleMode === "queue" && original.destinationId
      ? await findFreeQueueSlot(tx, {
          workspaceId: original.workspaceId,
          destinationIds: [original.destinationId],
          timeZone: original.timeZone,
          now: due - 1,
        })
      : null;
  const body = copyBody(plan, original, number);
  const scheduledAt = slot?.at ?? due;
  const copy: PostRow = {
    ...original,
    id: newId("send"),
    state: "scheduled",
    version: 1,
    headline: headlineOf(body),
    body,
    scheduleMode: slot ? "queue" : "exact",
    scheduledAt,
    queueLocalDate: slot?.localDate ?? null,
    queueWindowId: slot?.windowId ?? null,
    deferredReason: null,
    deferredUntil: null,
    retrySafety: "safe",
    lastError: null,
    providerPending: null,
    attemptCount: 0,
    nextTrigger: "initial",
    autoRetries: 0,
    nextActionAt: scheduledAt,
    leaseOwner: null,
    leaseExpiresAt: null,
    publishedAt: null,
    cancelledAt: null,
    missedAt: null,
    recycle: null,
    recycledFrom: original.id,
    recycleNumber: number,
    createdAt: now,
    updatedAt: now,
  };
  await enterPosts({ tx, rows: [copy], xLimit: xMonthlyLimit(h.config) });
  return copy;
}
