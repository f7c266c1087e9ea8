import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { analyticsSeries, groupAnalytics, refreshGroupAnalytics } from "../../modules/analytics/service.ts";
import { AnalyticsSeries, AnalyticsSeriesQuery, GroupAnalytics, GroupParams } from "./analytics-schemas.ts";
import { EmptyBody, WorkspaceParams } from "./common-schemas.ts";
import type { RouteContext } from "./context.ts";
import { handler } from "./context.ts";

type GroupContext = RouteContext<unknown, unknown, Static<typeof GroupParams>>;

async function getGroupAnalytics(h: Herald, { params }: GroupContext) {
  return resourceResponse(await groupAnalytics(h, params.workspace_id, params.group));
}

async function refreshGroup(h: Herald, { params }: GroupContext) {
  // The analytics job reads the group within its 15-second cadence.
  return resourceResponse(await refreshGroupAnalytics(h, params.workspace_id, params.group), 202, {
    "retry-after": "15",
  });
}

async function getSeries(
  h: Herald,
  { params, query }: RouteContext<unknown, Static<typeof AnalyticsSeriesQuery>>,
) {
  return resourceResponse(await analyticsSeries(h, params.workspace_id!, query));
}

const tag = "Analytics";
const doc = {
  group: operation({
    scope: "posts:read",
    operationId: "getPostGroupAnalytics",
    summary: "A published post group's analytics: totals with coverage, one row per post",
    description:
      "`group` is the group value given at Create Post. Each metric's total says how many of " +
      "the group's posts it covers (fetched or failed), and each published post has a row with " +
      "its numbers, their freshness and the next automatic refresh.",
    tag,
    errors: [404],
  }),
  refresh: operation({
    scope: "posts:write",
    operationId: "refreshPostGroupAnalytics",
    summary: "Read a group's numbers from the networks now (rate-limited per workspace)",
    description:
      "Asks the next analytics run (within about 15 seconds) to read the group's numbers " +
      "instead of waiting for the automatic cadence. Answers 202 with the analytics as they are " +
      "and `Retry-After`; read the group again after it.",
    tag,
    errors: [404],
  }),
  series: operation({
    scope: "posts:read",
    operationId: "getAnalyticsSeries",
    summary: "Analytics over time: posts published between two local dates, per day or ISO week",
    description:
      "Sums the metrics of the posts published from `from` (included) to `until` (excluded), " +
      "local dates in the workspace's time zone, per day or per ISO week (`bucket`), optionally " +
      "for one channel or destination.",
    tag,
    errors: [404],
  }),
};

/** Analytics: a published group's numbers, on-demand refresh, and the series over local dates. */
export function analyticsRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id/analytics" })
    .use(rails)
    .get("/post-groups/:group", handler(h, getGroupAnalytics), {
      ...doc.group,
      params: GroupParams,
      response: { 200: GroupAnalytics },
    })
    .post("/post-groups/:group/refresh", handler(h, refreshGroup), {
      ...doc.refresh,
      parse: JSON_PARSER,
      params: GroupParams,
      body: EmptyBody,
      response: { 202: GroupAnalytics },
    })
    .get("/posts", handler(h, getSeries), {
      ...doc.series,
      params: WorkspaceParams,
      query: AnalyticsSeriesQuery,
      response: { 200: AnalyticsSeries },
    });
}
