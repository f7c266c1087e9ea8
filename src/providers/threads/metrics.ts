// Threads' numbers (providers.md §4.5, §10): GET /v1.0/{media-id}/insights (scope
// threads_manage_insights), one post a call: Threads has no lookup of several posts at once.
import { metaGraphCall } from "../meta/graph.ts";
import { THREADS_API_VERSION } from "./publish.ts";
import {
  ProviderError,
  type DestinationRef,
  type MetricName,
  type MetricsResult,
  type MetricsTarget,
  type ProviderDeps,
} from "../types.ts";

/** Posts one fetchMetrics call reads (one insights call each; a throttled call stops the batch). */
export const THREADS_METRICS_BATCH_SIZE = 25;

/** The media insights Herald asks for (every one Threads documents for a post). */
export const THREADS_INSIGHT_METRICS = ["views", "likes", "replies", "reposts", "quotes", "shares"] as const;

/**
 * Reads each post's insights. Whole-call failures (throttling with its retry time, a dead token
 * (code 190: `auth_revoked`), 5xx) end the call; a post Threads refuses on its own (code 100: it no
 * longer exists, or is not the account's) is `missing`.
 */
export async function fetchThreadsMetrics(
  deps: ProviderDeps,
  input: { destination: DestinationRef; targets: MetricsTarget[] },
): Promise<MetricsResult[]> {
  const { destination, targets } = input;
  const results: MetricsResult[] = [];
  for (const { providerObjectId } of targets) {
    const base = destination.origin.replace(/\/+$/, "");
    const url = new URL(`${base}/${THREADS_API_VERSION}/${encodeURIComponent(providerObjectId)}/insights`);
    url.searchParams.set("metric", THREADS_INSIGHT_METRICS.join(","));
    url.searchParams.set("access_token", String(destination.credentials.accessToken ?? ""));
    let body: Record<string, any>;
    try {
      ({ body } = await metaGraphCall({
        deps,
        operation: "GET /{media-id}/insights",
        url: String(url),
        idempotent: true,
      }));
    } catch (error) {
      if (!(error instanceof ProviderError) || error.kind !== "rejected") throw error;
      results.push({ providerObjectId, kind: "missing", reason: error.message });
      continue;
    }
    results.push({ providerObjectId, kind: "metrics", values: valuesOf(body), providerAsOf: null });
  }
  return results;
}

/**
 * `{data: [{name, period: "lifetime", values: [{value}]}]}` (or `total_value: {value}`) as the
 * contract's metrics, only those Threads answered: views, replies as comments, likes as
 * reactions, reposts + quotes + shares as shares. Threads has no impressions, saves or link clicks.
 */
function valuesOf(body: Record<string, any>): Partial<Record<MetricName, number>> {
  const insights = new Map<string, number>();
  for (const entry of Array.isArray(body.data) ? body.data : []) {
    const raw = entry?.total_value?.value ?? (Array.isArray(entry?.values) ? entry.values[0]?.value : null);
    if (typeof entry?.name === "string" && typeof raw === "number" && Number.isFinite(raw) && raw >= 0)
      insights.set(entry.name, raw);
  }
  const values: Partial<Record<MetricName, number>> = {};
  const views = insights.get("views");
  if (views !== undefined) values.views = views;
  const replies = insights.get("replies");
  if (replies !== undefined) values.comments = replies;
  const likes = insights.get("likes");
  if (likes !== undefined) values.reactions = likes;
  const shared = ["reposts", "quotes", "shares"].filter((name) => insights.has(name));
  if (shared.length > 0) values.shares = shared.reduce((total, name) => total + insights.get(name)!, 0);
  return values;
}
