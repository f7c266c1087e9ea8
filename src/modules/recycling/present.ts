import type { RecyclePlan } from "../../db/recycle-plan.ts";
import { iso } from "../../lib/clock.ts";
import { LIVE_STATES, type PostState } from "../posts/states.ts";
import type { RecycledCopy } from "./repo.ts";

/**
 * An original's `recycle`: its plan, the copies published so far, and the copy waiting to go out
 * (none once the chain is done, or stopped by a cancelled copy).
 */
export function presentRecycle(plan: RecyclePlan, copies: RecycledCopy[]) {
  const next = copies.find((c) => LIVE_STATES.includes(c.state as PostState));
  return {
    every_days: plan.every_days,
    count: plan.count,
    variations: plan.variations,
    copies_published: copies.filter((c) => c.state === "published").length,
    next_copy_at: next ? iso(next.scheduledAt) : null,
    next_copy_id: next?.id ?? null,
  };
}
