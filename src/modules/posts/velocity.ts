import type { Herald } from "../../herald.ts";
import type { Db } from "../../db/open.ts";
import { destinationPace, type PostRow } from "./repo.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

/** The daily cap of a channel: HERALD_DAILY_CAP_<CHANNEL>, else what the network documents (or none). */
export function dailyCap(h: Herald, channel: string): number | null {
  return h.config.engine.dailyCapOverrides[channel] ?? h.providers.adapter(channel)?.dailyCap ?? null;
}

/**
 * When a due post must wait for its destination's pace: the daily cap (until the oldest publication
 * in the window is 24 h old) or the minimum spacing (posts being published count as "now"). Null when
 * it may go now.
 */
export async function velocityDeferral(
  h: Herald,
  db: Db,
  post: PostRow,
  now: number,
): Promise<number | null> {
  if (!post.destinationId) return null;
  const cap = dailyCap(h, post.channel);
  const spacing = h.config.engine.minSpacingMs;
  if (cap === null && spacing === 0) return null;
  const pace = await destinationPace(db, post.destinationId, now - DAY_MS, post.id);
  if (cap !== null && pace.count >= cap) return (pace.oldest ?? now) + DAY_MS;
  const last = pace.inFlight > 0 ? now : pace.newest;
  if (spacing > 0 && last !== null && last + spacing > now) return last + spacing;
  return null;
}
