// YouTube's numbers (providers.md §9.5, §10): GET /youtube/v3/videos?part=statistics&id=a,b,… (up to 50
// videos a call, 1 quota unit), whose counts are strings: viewCount as views, likeCount as reactions,
// commentCount as comments. Impressions and shares come only from the YouTube Analytics API and its
// scope (yt-analytics.readonly), which Herald does not ask for: they are not reported. YouTube leaves
// likeCount out when the owner hides likes and commentCount out when comments are off: not reported
// either (not 0).
import { YOUTUBE_OPERATIONS, bearer, youtubeBase, youtubeJson } from "./api.ts";
import type { DestinationRef, MetricName, MetricsResult, MetricsTarget, ProviderDeps } from "../types.ts";

/** Videos one fetchMetrics call reads (videos.list takes up to 50 ids). */
export const YOUTUBE_METRICS_BATCH_SIZE = 50;

/** A YouTube video id (11 characters of base64url today; any length of that alphabet is taken). */
const VIDEO_ID = /^[A-Za-z0-9_-]+$/;

/**
 * Reads the statistics of up to 50 videos in one videos.list. A video YouTube leaves out (deleted, or
 * not visible to the channel's token) is `missing`. Whole-call failures: 401 (`auth_expired`), a
 * spent quota (`quotaExceeded`: transient until midnight Pacific), rate limits, 5xx.
 */
export async function fetchYouTubeMetrics(
  deps: ProviderDeps,
  input: { destination: DestinationRef; targets: MetricsTarget[] },
): Promise<MetricsResult[]> {
  const { destination, targets } = input;
  const results: MetricsResult[] = [];
  const readable: { target: MetricsTarget; videoId: string }[] = [];
  for (const target of targets) {
    const videoId = videoIdOf(target);
    if (videoId) readable.push({ target, videoId });
    else
      results.push({
        providerObjectId: target.providerObjectId,
        kind: "missing",
        reason: "the receipt holds no YouTube video id",
      });
  }
  if (readable.length === 0) return results;
  const ids = [...new Set(readable.map((r) => r.videoId))];
  const query = new URLSearchParams({ part: "statistics", id: ids.join(",") });
  const body = await youtubeJson({
    deps,
    operation: YOUTUBE_OPERATIONS.videos,
    url: `${youtubeBase(destination.origin)}/youtube/v3/videos?${query}`,
    init: { headers: bearer(destination.credentials.accessToken) },
    idempotent: true,
  });
  const items: Record<string, any>[] = Array.isArray(body.items) ? body.items : [];
  for (const { target, videoId } of readable) {
    const item = items.find((i) => i?.id === videoId);
    const statistics = item?.statistics;
    if (statistics === null || typeof statistics !== "object")
      results.push({
        providerObjectId: target.providerObjectId,
        kind: "missing",
        reason: item
          ? `YouTube returned video ${videoId} without its statistics`
          : `YouTube did not return video ${videoId} (deleted, or not visible to the channel)`,
      });
    else
      results.push({
        providerObjectId: target.providerObjectId,
        kind: "metrics",
        values: valuesOf(statistics),
        providerAsOf: null,
      });
  }
  return results;
}

/** The video id of a receipt: `providerObjectId`, or `extra.video_id`. */
function videoIdOf(target: MetricsTarget): string | null {
  if (VIDEO_ID.test(target.providerObjectId)) return target.providerObjectId;
  const fromExtra = target.extra.video_id;
  return typeof fromExtra === "string" && VIDEO_ID.test(fromExtra) ? fromExtra : null;
}

/** `statistics` (counts as decimal strings) as the contract's metrics; only those YouTube sent. */
function valuesOf(statistics: Record<string, unknown>): Partial<Record<MetricName, number>> {
  const fields: [MetricName, string][] = [
    ["views", "viewCount"],
    ["comments", "commentCount"],
    ["reactions", "likeCount"],
  ];
  const values: Partial<Record<MetricName, number>> = {};
  for (const [metric, field] of fields) {
    const raw = statistics[field];
    const value =
      typeof raw === "string" && /^\d+$/.test(raw) ? Number(raw) : typeof raw === "number" ? raw : Number.NaN;
    if (Number.isFinite(value) && value >= 0) values[metric] = value;
  }
  return values;
}
