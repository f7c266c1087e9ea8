import type { Herald } from "../../herald.ts";
import type { Db } from "../../db/open.ts";
import { destinationPace, type PostRow } from "./repo.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Posts per destination per rolling 24 h, from the networks' documented limits
 * (shared/reference/providers.md): X 300 per 3 h per user; Bluesky 35,000 write points a day at 3
 * per record; Threads 250 API posts a day; Instagram 50 (the documented quota_total); YouTube 100
 * uploads a day per project. Channels without a documented daily cap have none.
 */
export const DAILY_CAPS: Record<string, number> = {
  x: 2_400,
  bluesky: 11_666,
  threads: 250,
  instagram: 50,
  youtube: 100,
};

/** The cap for a channel, with HERALD_DAILY_CAP_<CHANNEL> overrides. */
export function dailyCap(h: Herald, channel: string): number | null {
  return h.config.engine.dailyCapOverrides[channel] ?? DAILY_CAPS[channel] ?? null;
}

/**
 * When a due post must wait for its destination's pace: the daily cap (until the oldest publication
 * in the window is 24 h old) or the minimum spacing (posts being published count as "now"). Null when
 * it may go now.
 */
export function velocityDeferral(h: Herald, db: Db, post: PostRow, now: number): number | null {
  if (!post.destinationId) return null;
  const cap = dailyCap(h, post.channel);
  const spacing = h.config.engine.minSpacingMs;
  if (cap === null && spacing === 0) return null;
  const pace = destinationPace(db, post.destinationId, now - DAY_MS, post.id);
  if (cap !== null && pace.count >= cap) return (pace.oldest ?? now) + DAY_MS;
  const last = pace.inFlight > 0 ? now : pace.newest;
  if (spacing > 0 && last !== null && last + spacing > now) return last + spacing;
  return null;
}
