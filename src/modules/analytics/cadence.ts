// When a published post's numbers are read: soon after publication, hourly while they move fast,
// daily after that, and no more once the post is a month old (docs/analytics.md).
import { METRICS, type MetricName } from "../../providers/types.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The first read, this long after publication (networks count views with a delay). */
export const FIRST_REFRESH_DELAY_MS = 10 * MINUTE;
/** Hourly reads while the post is younger than this. */
export const HOURLY_UNTIL_AGE_MS = 2 * DAY;
/** Daily reads until this age; none after. */
export const STOP_AFTER_AGE_MS = 30 * DAY;
/** A failed read (without a rate-limit time from the network) is tried again after this long. */
export const RETRY_AFTER_FAILURE_MS = 15 * MINUTE;

/**
 * The age of the last read: an hour before the 30-day mark, because X stops giving a post's
 * non-public numbers (impressions, link clicks) at 30 days and the last read should still have them.
 */
export const LAST_READ_AGE_MS = STOP_AFTER_AGE_MS - HOUR;

/** When a post published at `publishedAt` is read next after a read at `now`; null: no more reads. */
export function nextRefreshAfter(publishedAt: number, now: number): number | null {
  const age = now - publishedAt;
  if (age >= LAST_READ_AGE_MS) return null;
  const next = now + (age < HOURLY_UNTIL_AGE_MS ? HOUR : DAY);
  return Math.min(next, publishedAt + LAST_READ_AGE_MS);
}

/** The seven metrics at 0: what a post shows before its first read, and what a network does not offer. */
export function zeroMetrics(): Record<MetricName, number> {
  return Object.fromEntries(METRICS.map((m) => [m, 0])) as Record<MetricName, number>;
}

/** The seven metrics from what a network reported: whole, non-negative numbers; the rest 0. */
export function normalizeMetrics(values: Partial<Record<MetricName, number>>): {
  metrics: Record<MetricName, number>;
  offered: MetricName[];
} {
  const metrics = zeroMetrics();
  const offered: MetricName[] = [];
  for (const name of METRICS) {
    const value = values[name];
    if (typeof value !== "number" || !Number.isFinite(value)) continue;
    metrics[name] = Math.max(0, Math.round(value));
    offered.push(name);
  }
  return { metrics, offered };
}
