// Facebook Page numbers (providers.md §6.5, §10). Counts for the whole batch in one multi-id read,
// `GET /?ids=a,b&fields=shares,comments.summary(true).limit(0),reactions.summary(true).limit(0)` (a
// reel's video node has no `shares`: its own read without it), then each post's insights
// (`GET /{post-id}/insights?metric=post_media_view,post_total_media_view_unique,
// post_reactions_by_type_total,post_clicks_by_type`, scope read_insights). Insights exist only for Pages
// with 100 likes or more: when Meta refuses them (or answers nothing) the post keeps its counts.
import { graphCall, graphCount, insightValues } from "./graph.ts";
import type { MetaAnswer } from "../meta/graph.ts";
import {
  ProviderError,
  type DestinationRef,
  type MetricName,
  type MetricsResult,
  type MetricsTarget,
  type ProviderDeps,
} from "../types.ts";

/** Posts one fetchMetrics call reads: one counts read (Graph takes 50 ids) and one insights call each. */
export const FACEBOOK_METRICS_BATCH_SIZE = 25;

/** Ids one multi-id read takes (Graph's limit). */
export const FACEBOOK_IDS_PER_READ = 50;

/** The post insights Herald asks for. */
export const FACEBOOK_POST_INSIGHTS = [
  "post_media_view",
  "post_total_media_view_unique",
  "post_reactions_by_type_total",
  "post_clicks_by_type",
] as const;

/**
 * The views metric whose name at post level is unverified (providers.md §6.5): when Graph calls it an
 * invalid metric, the insights are asked again without it and the batch reports no views.
 */
const UNVERIFIED_VIEWS_METRIC = "post_media_view";

const COUNT_FIELDS = "comments.summary(true).limit(0),reactions.summary(true).limit(0)";
const POST_COUNT_FIELDS = `shares,${COUNT_FIELDS}`;
const COUNTS_OPERATION = "GET /?ids={ids}&fields=shares,comments,reactions";
const INSIGHTS_OPERATION = "GET /{post-id}/insights";

type Values = Partial<Record<MetricName, number>>;
type Read = { node: Record<string, any> } | { missing: string };
type Call = (
  request: Omit<Parameters<typeof graphCall>[0], "deps" | "origin" | "token">,
) => Promise<MetaAnswer>;

/**
 * Reads a Page's posts: counts for all, then insights for the posts (not reels). A post Graph does not
 * return, or refuses alone (deleted, not the Page's), is `missing`. Throttling (with its retry time),
 * a dead token (code 190: `auth_revoked`, as everywhere in the adapter) and 5xx fail the call.
 */
export async function fetchFacebookMetrics(
  deps: ProviderDeps,
  input: { destination: DestinationRef; targets: MetricsTarget[] },
): Promise<MetricsResult[]> {
  const { destination, targets } = input;
  const token = String(destination.credentials.accessToken ?? "");
  const call: Call = (request) => graphCall({ deps, origin: destination.origin, token, ...request });
  const counted = new Map<string, Read>();
  const groups = [
    { targets: targets.filter((t) => !isReel(t)), fields: POST_COUNT_FIELDS },
    { targets: targets.filter(isReel), fields: COUNT_FIELDS },
  ];
  for (const group of groups) {
    const ids = [...new Set(group.targets.map((t) => t.providerObjectId))];
    for (let i = 0; i < ids.length; i += FACEBOOK_IDS_PER_READ)
      for (const [id, read] of await readCounts(call, ids.slice(i, i + FACEBOOK_IDS_PER_READ), group.fields))
        counted.set(id, read);
  }
  const insights = insightsReader(call);
  const results: MetricsResult[] = [];
  for (const target of targets) {
    const id = target.providerObjectId;
    const read = counted.get(id) ?? { missing: "Facebook did not return the post" };
    if ("missing" in read) {
      results.push({ providerObjectId: id, kind: "missing", reason: read.missing });
      continue;
    }
    const values = countValues(read.node);
    if (!isReel(target)) Object.assign(values, valuesOfInsights(await insights.read(id)));
    results.push({ providerObjectId: id, kind: "metrics", values, providerAsOf: null });
  }
  return results;
}

/** A reel's receipt is its video id (publish.ts), read as a video node. */
function isReel(target: MetricsTarget): boolean {
  return target.extra.reel === true;
}

/**
 * One multi-id read of `ids`. Graph refuses the whole read when one id no longer exists, so a refused
 * read is asked again one id at a time; an id refused alone is `missing`.
 */
async function readCounts(call: Call, ids: string[], fields: string): Promise<Map<string, Read>> {
  let body: Record<string, any>;
  try {
    ({ body } = await call({
      method: "GET",
      path: "",
      params: { ids: ids.join(","), fields },
      operation: COUNTS_OPERATION,
      idempotent: true,
    }));
  } catch (error) {
    if (!(error instanceof ProviderError) || error.kind !== "rejected") throw error;
    if (ids.length === 1) return new Map([[ids[0]!, { missing: error.message }]]);
    const one = new Map<string, Read>();
    for (const id of ids) for (const [key, read] of await readCounts(call, [id], fields)) one.set(key, read);
    return one;
  }
  return new Map(
    ids.map((id): [string, Read] => {
      const node = body[id];
      return [
        id,
        node !== null && typeof node === "object"
          ? { node }
          : { missing: "Facebook did not return the post (deleted, or not visible to the Page)" },
      ];
    }),
  );
}

/**
 * Reads post insights one post at a time, remembering for the batch what Graph refused: a permission
 * refusal (code 10 or 200–299: no read_insights, or not allowed to analyze the Page) stops asking; an
 * invalid metric name drops `post_media_view` (unverified) and asks again. Any other refusal of one
 * post (code 100) leaves that post its counts. Throttling, 5xx and code 190 are thrown.
 */
function insightsReader(call: Call) {
  let metrics: string[] = [...FACEBOOK_POST_INSIGHTS];
  let refused = false;
  const read = async (postId: string): Promise<Map<string, unknown>> => {
    if (refused) return new Map();
    let body: Record<string, any>;
    try {
      ({ body } = await call({
        method: "GET",
        path: `${encodeURIComponent(postId)}/insights`,
        params: { metric: metrics.join(",") },
        operation: INSIGHTS_OPERATION,
        idempotent: true,
      }));
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      const invalidMetric = /insights metric/i.test(error.message);
      if (error.kind === "rejected") {
        if (invalidMetric && metrics.includes(UNVERIFIED_VIEWS_METRIC)) {
          metrics = metrics.filter((m) => m !== UNVERIFIED_VIEWS_METRIC);
          return read(postId);
        }
        if (invalidMetric) refused = true;
        return new Map();
      }
      if (error.kind === "auth_revoked" && isPermissionCode(error.errorCode)) {
        refused = true;
        return new Map();
      }
      throw error;
    }
    return insightValues(body);
  };
  return { read };
}

/** Graph's permission errors (10, 200–299), unlike 190, leave the token alive. */
function isPermissionCode(code: string | null): boolean {
  const n = Number(code);
  return code !== null && (n === 10 || (n >= 200 && n <= 299));
}

/**
 * The counts of a post or reel node: `comments.summary.total_count`, `reactions.summary.total_count`,
 * and `shares.count` when Graph sends it (it leaves `shares` out of a post nobody shared; Herald then
 * reports no shares rather than a 0 Graph did not give).
 */
function countValues(node: Record<string, any>): Values {
  const values: Values = {};
  set(values, "comments", graphCount(node.comments?.summary?.total_count));
  set(values, "reactions", graphCount(node.reactions?.summary?.total_count));
  set(values, "shares", graphCount(node.shares?.count));
  return values;
}

/**
 * What the insights add: views (`post_media_view`), impressions (`post_total_media_view_unique`, the
 * unique reach), reactions as Σ `post_reactions_by_type_total` (over the live count, when the breakdown
 * has any), link clicks from `post_clicks_by_type["link clicks"]` (only when Graph lists them).
 */
function valuesOfInsights(insights: Map<string, unknown>): Values {
  const values: Values = {};
  set(values, "views", graphCount(insights.get("post_media_view")));
  set(values, "impressions", graphCount(insights.get("post_total_media_view_unique")));
  const byType = objectOf(insights.get("post_reactions_by_type_total"));
  const reactions = byType ? Object.values(byType).map(graphCount) : [];
  if (reactions.length > 0 && reactions.every((n) => n !== null))
    values.reactions = reactions.reduce((a: number, b) => a + b!, 0);
  set(values, "link_clicks", graphCount(objectOf(insights.get("post_clicks_by_type"))?.["link clicks"]));
  return values;
}

function objectOf(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function set(values: Values, name: MetricName, value: number | null): void {
  if (value !== null) values[name] = value;
}
