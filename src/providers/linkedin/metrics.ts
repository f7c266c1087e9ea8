// LinkedIn's numbers (providers.md §7.5, §10). A page's posts: GET
// /rest/organizationalEntityShareStatistics for a list of its posts (lifetime totals; scope
// rw_organization_admin), `shares=List(…)` and `ugcPosts=List(…)` in separate calls. A member's posts:
// their numbers come only from memberCreatorPostAnalytics (scope r_member_postAnalytics, a restricted
// product whose request syntax is unverified) or socialActions (r_member_social, also restricted);
// Herald's app asks for neither, so a member's posts are `unsupported` and nothing is called.
import { expectJson } from "../http.ts";
import { accessTokenOf, linkedinCall, restHeaders } from "./api.ts";
import { LINKEDIN_PAGE_PREFIX } from "./rules.ts";
import {
  ProviderError,
  type DestinationRef,
  type MetricName,
  type MetricsResult,
  type MetricsTarget,
  type ProviderDeps,
} from "../types.ts";

/** Posts one fetchMetrics call reads: one statistics call per kind of URN (shares, ugcPosts). */
export const LINKEDIN_METRICS_BATCH_SIZE = 20;

const OPERATION = "GET /rest/organizationalEntityShareStatistics";

/** The list parameter for each kind of post URN the Posts API hands back. */
const LIST_PARAMS = [
  { prefix: "urn:li:share:", param: "shares", field: "share" },
  { prefix: "urn:li:ugcPost:", param: "ugcPosts", field: "ugcPost" },
] as const;

/**
 * Reads a page's posts' lifetime statistics; a member's posts are `unsupported`. A post missing from
 * the answer is `missing` (deleted, or older than the 12 months LinkedIn keeps). When LinkedIn refuses
 * a list outright (a 4xx other than 401/403/429), each post is asked alone, and a post refused alone
 * is `missing`; 401 (`auth_expired`), 403 (`auth_revoked`), 429 (until midnight UTC) and 5xx fail the call.
 */
export async function fetchLinkedInMetrics(
  deps: ProviderDeps,
  input: { destination: DestinationRef; targets: MetricsTarget[] },
): Promise<MetricsResult[]> {
  const { destination, targets } = input;
  if (!destination.externalId.startsWith(LINKEDIN_PAGE_PREFIX))
    return targets.map(({ providerObjectId }) => ({
      providerObjectId,
      kind: "unsupported",
      reason:
        "LinkedIn shows a member's post numbers only to apps with its restricted member analytics products",
    }));
  const results: MetricsResult[] = [];
  for (const kind of LIST_PARAMS) {
    const urns = targets.map((t) => t.providerObjectId).filter((urn) => urn.startsWith(kind.prefix));
    if (urns.length > 0) results.push(...(await readList({ deps, destination, kind, urns })));
  }
  for (const { providerObjectId } of targets) {
    if (LIST_PARAMS.some((k) => providerObjectId.startsWith(k.prefix))) continue;
    results.push({
      providerObjectId,
      kind: "unsupported",
      reason: `LinkedIn keeps statistics for shares and ugcPosts only, not "${providerObjectId}"`,
    });
  }
  return results;
}

async function readList(input: {
  deps: ProviderDeps;
  destination: DestinationRef;
  kind: (typeof LIST_PARAMS)[number];
  urns: string[];
}): Promise<MetricsResult[]> {
  const { deps, destination, kind, urns } = input;
  const query =
    `q=organizationalEntity&organizationalEntity=${encodeURIComponent(destination.externalId)}` +
    `&${kind.param}=List(${urns.map(encodeURIComponent).join(",")})`;
  let body: Record<string, any>;
  try {
    const response = await linkedinCall({
      deps,
      operation: OPERATION,
      url: `${destination.origin.replace(/\/+$/, "")}/rest/organizationalEntityShareStatistics?${query}`,
      init: { headers: restHeaders(deps, accessTokenOf(destination)) },
      idempotent: true,
    });
    body = await expectJson({ operation: OPERATION, response });
  } catch (error) {
    if (!(error instanceof ProviderError) || error.kind !== "rejected") throw error;
    if (urns.length === 1) return [{ providerObjectId: urns[0]!, kind: "missing", reason: error.message }];
    const one: MetricsResult[] = [];
    for (const urn of urns) one.push(...(await readList({ ...input, urns: [urn] })));
    return one;
  }
  const elements: Record<string, any>[] = Array.isArray(body.elements) ? body.elements : [];
  return urns.map((urn): MetricsResult => {
    const element =
      elements.find((e) => e[kind.field] === urn) ??
      // Asked for one post, LinkedIn's single element is that post's even without naming it.
      (urns.length === 1 && elements.length === 1 && typeof elements[0]![kind.field] !== "string"
        ? elements[0]
        : undefined);
    if (!element?.totalShareStatistics)
      return {
        providerObjectId: urn,
        kind: "missing",
        reason: "LinkedIn returned no statistics for the post (deleted, or older than 12 months)",
      };
    return {
      providerObjectId: urn,
      kind: "metrics",
      values: valuesOf(element.totalShareStatistics),
      providerAsOf: null,
    };
  });
}

/**
 * `totalShareStatistics` as the contract's metrics: impressionCount, uniqueImpressionsCount as views,
 * commentCount, likeCount as reactions, shareCount, clickCount as link clicks (LinkedIn counts every
 * click on the post there). Pages have no saves.
 */
function valuesOf(stats: Record<string, unknown>): Partial<Record<MetricName, number>> {
  const fields: [MetricName, string][] = [
    ["views", "uniqueImpressionsCount"],
    ["impressions", "impressionCount"],
    ["comments", "commentCount"],
    ["reactions", "likeCount"],
    ["shares", "shareCount"],
    ["link_clicks", "clickCount"],
  ];
  const values: Partial<Record<MetricName, number>> = {};
  for (const [metric, field] of fields) {
    const value = stats[field];
    if (typeof value === "number" && Number.isFinite(value) && value >= 0) values[metric] = value;
  }
  return values;
}
