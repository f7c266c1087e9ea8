// What the analytics routes do: a group's numbers, the series over local dates, on-demand refresh.
import { DateTime } from "luxon";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { invalid, notFound, ProblemError } from "../../core/problem.ts";
import { METRICS } from "../../providers/types.ts";
import { clicksOfPosts } from "../links/repo.ts";
import { findWorkspaceById } from "../workspaces/repo.ts";
import { zeroMetrics } from "./cadence.ts";
import { presentGroupAnalytics } from "./present.ts";
import {
  countRefreshRequests,
  insertRefreshRequest,
  listGroupAnalytics,
  listPublishedBetween,
  makeGroupDue,
  type PostAnalyticsRow,
} from "./repo.ts";

/** On-demand refreshes a workspace may ask for per hour (each reads a whole group from the networks). */
export const REFRESHES_PER_HOUR = 20;
/** The longest series: a year and a day (a leap year's worth of days). */
export const MAX_SERIES_DAYS = 366;
const HOUR = 60 * 60_000;

/**
 * The rows with the clicks of Herald's short links as `link_clicks` for each post that has tracked
 * links and whose network reports no link clicks (a network that reports them keeps its own number).
 * The clicks are read live, and count as reported for the coverage.
 */
async function withTrackedClicks(h: Herald, rows: PostAnalyticsRow[]): Promise<PostAnalyticsRow[]> {
  const unreported = rows.filter((r) => !r.offered.includes("link_clicks")).map((r) => r.postId);
  const clicks = await clicksOfPosts(h.db, unreported);
  if (clicks.size === 0) return rows;
  return rows.map((r) => {
    const counted = clicks.get(r.postId);
    if (counted === undefined || r.offered.includes("link_clicks")) return r;
    return { ...r, metrics: { ...r.metrics, link_clicks: counted }, offered: [...r.offered, "link_clicks"] };
  });
}

/** A group's analytics rows, with tracked clicks (see `withTrackedClicks`). */
async function groupRows(h: Herald, workspaceId: string, group: string): Promise<PostAnalyticsRow[]> {
  return withTrackedClicks(h, await listGroupAnalytics(h.db, workspaceId, group));
}

/** A group's analytics, or 404 when the group has no published post. */
export async function groupAnalytics(h: Herald, workspaceId: string, group: string) {
  const rows = await groupRows(h, workspaceId, group);
  if (rows.length === 0) throw notFound("published post group");
  return presentGroupAnalytics(group, rows);
}

/**
 * Makes a group's posts due for a read now (the job picks them up within seconds), at most
 * REFRESHES_PER_HOUR times per workspace per hour (429 with Retry-After beyond).
 */
export async function refreshGroupAnalytics(h: Herald, workspaceId: string, group: string) {
  const now = h.clock.now();
  const rows = await listGroupAnalytics(h.db, workspaceId, group);
  if (rows.length === 0) throw notFound("published post group");
  const recent = await countRefreshRequests(h.db, workspaceId, now - HOUR);
  if (recent.count >= REFRESHES_PER_HOUR) {
    const retryAfter = Math.max(1, Math.ceil(((recent.oldest ?? now) + HOUR - now) / 1000));
    throw new ProblemError(
      "public_rate_limited",
      `A workspace may ask for ${REFRESHES_PER_HOUR} analytics refreshes an hour; numbers refresh by themselves too.`,
      { retryAfter },
    );
  }
  await inTransaction(h.db, async (tx) => {
    await makeGroupDue(tx, workspaceId, group, now);
    await insertRefreshRequest(tx, { workspaceId, groupKey: group, requestedAt: now });
  });
  return presentGroupAnalytics(group, await groupRows(h, workspaceId, group));
}

/** Query of the series operation (strings as received). */
export interface SeriesQuery {
  from?: string;
  until?: string;
  bucket?: string;
  channel?: string;
  destination_id?: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function localDate(value: string | undefined, name: string, zone: string): DateTime {
  if (value === undefined) throw invalid(`/${name}`, "is required (a date like 2026-03-01)", name);
  const date = DATE.test(value) ? DateTime.fromISO(value, { zone }) : null;
  if (!date?.isValid) throw invalid(`/${name}`, "must be a date like 2026-03-01", name);
  return date.startOf("day");
}

/**
 * The numbers of the posts published between two local dates of the workspace's time zone (`from`
 * included, `until` excluded), summed per local day or ISO week (Monday start), each post counted
 * in the bucket of its publication with its latest numbers. Every bucket is listed, empty ones at 0.
 */
export async function analyticsSeries(h: Herald, workspaceId: string, query: SeriesQuery) {
  const workspace = await findWorkspaceById(h.db, workspaceId);
  if (!workspace) throw notFound("workspace");
  const zone = workspace.timeZone;
  const from = localDate(query.from, "from", zone);
  const until = localDate(query.until, "until", zone);
  if (until <= from) throw invalid("/until", "must be a later date than from", "until");
  if (until.diff(from, "days").days > MAX_SERIES_DAYS)
    throw invalid("/until", `must be at most ${MAX_SERIES_DAYS} days after from`, "until");
  const bucket = query.bucket ?? "day";
  if (bucket !== "day" && bucket !== "week") throw invalid("/bucket", 'must be "day" or "week"', "bucket");
  const rows = await withTrackedClicks(
    h,
    await listPublishedBetween(h.db, {
      workspaceId,
      from: from.toMillis(),
      until: until.toMillis(),
      channel: query.channel,
      destinationId: query.destination_id,
    }),
  );
  const startOf = (d: DateTime) => (bucket === "week" ? d.startOf("week") : d.startOf("day"));
  const series = new Map<string, { start: string; posts: number; metrics: Record<string, number> }>();
  // Local days, not 24-hour steps: a DST change makes a day 23 or 25 hours long.
  for (let d = startOf(from); d < until; d = d.plus(bucket === "week" ? { weeks: 1 } : { days: 1 })) {
    const start = d.toISODate()!;
    series.set(start, { start, posts: 0, metrics: zeroMetrics() });
  }
  for (const row of rows) {
    const key = startOf(DateTime.fromMillis(row.publishedAt, { zone })).toISODate()!;
    const entry = series.get(key);
    if (!entry) continue;
    entry.posts += 1;
    for (const m of METRICS) entry.metrics[m]! += row.metrics[m] ?? 0;
  }
  return {
    object: "analytics_series" as const,
    bucket,
    time_zone: zone,
    series: [...series.values()],
  };
}
