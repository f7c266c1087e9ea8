// Instagram numbers (providers.md §5.5, §10): `GET /{ig-media-id}/insights?metric=views,reach,likes,
// comments,shares,saved` (scope instagram_manage_insights), one media a call (the API has no documented
// multi-media insights). Meta delays insights up to 48 hours, answers an empty `data` while it has
// nothing to show, and refuses with code 10 "Not enough viewers" for a media seen by too few: then the
// media's own counts are read instead (`GET /{ig-media-id}?fields=like_count,comments_count`).
import { graphCall, graphCount, insightValues } from "../facebook/graph.ts";
import {
  ProviderError,
  type DestinationRef,
  type MetricName,
  type MetricsResult,
  type MetricsTarget,
  type ProviderDeps,
} from "../types.ts";

/** Media one fetchMetrics call reads (one insights call each; a throttled call stops the batch). */
export const INSTAGRAM_METRICS_BATCH_SIZE = 25;

/** The media insights Herald asks for (those Meta offers for feed posts and reels since v22). */
export const INSTAGRAM_INSIGHT_METRICS = ["views", "reach", "likes", "comments", "shares", "saved"] as const;

type Values = Partial<Record<MetricName, number>>;

/**
 * Reads each media's insights, or its like and comment counts when the insights have nothing (empty,
 * "Not enough viewers", a metric refused for this kind of media). A media Graph refuses for the counts
 * too (code 100: deleted, not the account's) is `missing`. Throttling (with its retry time), a dead
 * token (code 190: `auth_revoked`, as everywhere in the adapter) and 5xx fail the call.
 */
export async function fetchInstagramMetrics(
  deps: ProviderDeps,
  input: { destination: DestinationRef; targets: MetricsTarget[] },
): Promise<MetricsResult[]> {
  const { destination, targets } = input;
  const token = String(destination.credentials.accessToken ?? "");
  const results: MetricsResult[] = [];
  for (const { providerObjectId } of targets) {
    const path = encodeURIComponent(providerObjectId);
    let values: Values = {};
    try {
      const { body } = await graphCall({
        deps,
        origin: destination.origin,
        method: "GET",
        path: `${path}/insights`,
        params: { metric: INSTAGRAM_INSIGHT_METRICS.join(",") },
        token,
        operation: "GET /{ig-media-id}/insights",
        idempotent: true,
      });
      values = valuesOfInsights(insightValues(body));
    } catch (error) {
      if (!(error instanceof ProviderError) || !insightsRefused(error)) throw error;
    }
    if (Object.keys(values).length > 0) {
      results.push({ providerObjectId, kind: "metrics", values, providerAsOf: null });
      continue;
    }
    let body: Record<string, any>;
    try {
      ({ body } = await graphCall({
        deps,
        origin: destination.origin,
        method: "GET",
        path,
        params: { fields: "like_count,comments_count" },
        token,
        operation: "GET /{ig-media-id}?fields=like_count,comments_count",
        idempotent: true,
      }));
    } catch (error) {
      if (!(error instanceof ProviderError) || error.kind !== "rejected") throw error;
      results.push({ providerObjectId, kind: "missing", reason: error.message });
      continue;
    }
    const counts: Values = {};
    const comments = graphCount(body.comments_count);
    const likes = graphCount(body.like_count);
    if (comments !== null) counts.comments = comments;
    if (likes !== null) counts.reactions = likes;
    results.push({ providerObjectId, kind: "metrics", values: counts, providerAsOf: null });
  }
  return results;
}

/**
 * Whether Meta refused the insights of this media alone: a plain refusal (code 100: a metric this
 * kind of media lacks, or a media that is gone, which the counts read then tells apart), or code 10
 * ("Not enough viewers"; Graph's permission code, but the token and the media are fine).
 */
function insightsRefused(error: ProviderError): boolean {
  return error.kind === "rejected" || (error.kind === "auth_revoked" && error.errorCode === "10");
}

/**
 * The insights as the contract's metrics, only those Meta answered: views, reach (unique accounts) as
 * impressions, comments, likes as reactions, shares, saved as saves. Instagram has no link clicks.
 */
function valuesOfInsights(insights: Map<string, unknown>): Values {
  const fields: [MetricName, (typeof INSTAGRAM_INSIGHT_METRICS)[number]][] = [
    ["views", "views"],
    ["impressions", "reach"],
    ["comments", "comments"],
    ["reactions", "likes"],
    ["shares", "shares"],
    ["saves", "saved"],
  ];
  const values: Values = {};
  for (const [metric, name] of fields) {
    const value = graphCount(insights.get(name));
    if (value !== null) values[metric] = value;
  }
  return values;
}
