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

/** Times a queued copy looks for a free window again after a concurrent writer took the one it chose. */
const SLOT_TRIES = 3;

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
 *
 * The engine's transaction runs at READ COMMITTED on PostgreSQL, where a Create Post may take the
 * window read free here before this insert: the copy is then left out by its unique index instead
 * of failing the publication's record, and the next free window is read again.
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
  if (number > plan.count) return null;
  const due = (published.publishedAt ?? now) + plan.every_days * DAY_MS;
  const queued = original.scheduleMode === "queue" && original.destinationId !== null;
  for (let tries = 0; tries <= SLOT_TRIES; tries++) {
    if (await recycledCopyExists(tx, original.id, number)) return null;
    const slot =
      queued && tries < SLOT_TRIES
        ? await findFreeQueueSlot(tx, {
            workspaceId: original.workspaceId,
            destinationIds: [original.destinationId!],
            timeZone: original.timeZone,
            now: due - 1,
          })
        : null;
    const copy = copyOf(original, plan, number, slot ?? { at: due }, now);
    const [stored] = await enterPosts({
      tx,
      rows: [copy],
      xLimit: xMonthlyLimit(h.config),
      unlessTaken: true,
    });
    if (stored) return stored;
  }
  return null;
}

/** Copy `number` of `original`, scheduled at `at` (in a queue window when `windowId` is given). */
function copyOf(
  original: PostRow,
  plan: RecyclePlan,
  number: number,
  at: { at: number; windowId?: string; localDate?: string },
  now: number,
): PostRow {
  const body = copyBody(plan, original, number);
  const queued = at.windowId !== undefined;
  return {
    ...original,
    id: newId("send"),
    state: "scheduled",
    version: 1,
    headline: headlineOf(body),
    body,
    scheduleMode: queued ? "queue" : "exact",
    scheduledAt: at.at,
    queueLocalDate: at.localDate ?? null,
    queueWindowId: at.windowId ?? null,
    deferredReason: null,
    deferredUntil: null,
    retrySafety: "safe",
    lastError: null,
    providerPending: null,
    attemptCount: 0,
    nextTrigger: "initial",
    autoRetries: 0,
    nextActionAt: at.at,
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
}
