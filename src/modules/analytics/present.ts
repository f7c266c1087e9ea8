// The analytics resources of the contract: post analytics rows and a group's totals with coverage.
import { iso } from "../../lib/clock.ts";
import { METRICS } from "../../providers/types.ts";
import type { PostAnalyticsRow } from "./repo.ts";

/** One post's analytics (`object: post_analytics`). */
export function presentPostAnalytics(row: PostAnalyticsRow) {
  const error = row.lastError as { code?: string; message?: string; at?: number } | null;
  return {
    object: "post_analytics" as const,
    post: row.postId,
    group: row.groupKey,
    channel: row.channel,
    published_at: iso(row.publishedAt),
    state: row.state,
    metrics: Object.fromEntries(METRICS.map((m) => [m, row.metrics[m] ?? 0])),
    fetched_at: iso(row.fetchedAt),
    provider_as_of: iso(row.providerAsOf),
    next_automatic_refresh_at: iso(row.nextRefreshAt),
    last_error: error
      ? { code: String(error.code), message: String(error.message), at: iso(Number(error.at)) }
      : null,
  };
}

/**
 * A group's totals: each metric summed over the posts with numbers, with its coverage: the group's
 * published posts, those whose network reported that metric in their last good read (or, for
 * link_clicks, whose tracked links Herald counted), and those
 * whose last read failed.
 */
export function groupTotals(rows: PostAnalyticsRow[]) {
  const failed = rows.filter((r) => r.lastError !== null).length;
  return Object.fromEntries(
    METRICS.map((metric) => {
      // A post not read yet still has Herald's own link clicks (rows with tracked links offer them).
      const read = rows.filter((r) => r.fetchedAt !== null || r.offered.includes(metric));
      const value = read.reduce((sum, r) => sum + (r.metrics[metric] ?? 0), 0);
      const fetched = read.filter((r) => r.offered.includes(metric)).length;
      const coverage = { total_posts: rows.length, fetched_posts: fetched, failed_posts: failed };
      return [metric, { value, coverage }];
    }),
  );
}

/** The group analytics resource (`object: post_group_analytics`). */
export function presentGroupAnalytics(group: string, rows: PostAnalyticsRow[]) {
  return {
    object: "post_group_analytics" as const,
    group,
    totals: groupTotals(rows),
    posts: rows.map(presentPostAnalytics),
  };
}
