import { Elysia, t } from "elysia";
import { Type } from "@sinclair/typebox";
import type { Herald } from "../../herald.ts";
import { operation, Timestamp } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { analyticsSeries, groupAnalytics, refreshGroupAnalytics } from "../../modules/analytics/service.ts";
import { METRICS } from "../../providers/types.ts";
import { Channel } from "./posts-schemas.ts";
import { EmptyBody } from "./webhooks-schemas.ts";

const tag = "Analytics";
const MetricValues = t.Object(Object.fromEntries(METRICS.map((m) => [m, Type.Integer({ minimum: 0 })])), {
  title: "MetricValues",
});
const Coverage = t.Object({
  total_posts: Type.Integer({ minimum: 0 }),
  fetched_posts: Type.Integer({ minimum: 0 }),
  failed_posts: Type.Integer({ minimum: 0 }),
});
const PostAnalytics = t.Object(
  {
    object: t.Literal("post_analytics"),
    post: t.String(),
    group: t.String(),
    channel: t.String(),
    published_at: Timestamp,
    state: t.Union([t.Literal("pending"), t.Literal("fresh"), t.Literal("stale"), t.Literal("unsupported")]),
    metrics: MetricValues,
    fetched_at: t.Union([Timestamp, t.Null()]),
    provider_as_of: t.Union([Timestamp, t.Null()]),
    next_automatic_refresh_at: t.Union([Timestamp, t.Null()]),
    last_error: t.Union([t.Object({ code: t.String(), message: t.String(), at: Timestamp }), t.Null()]),
  },
  { title: "PostAnalytics" },
);
export const GroupAnalytics = t.Object(
  {
    object: t.Literal("post_group_analytics"),
    group: t.String(),
    totals: t.Object(
      Object.fromEntries(
        METRICS.map((m) => [m, t.Object({ value: Type.Integer({ minimum: 0 }), coverage: Coverage })]),
      ),
    ),
    posts: t.Array(PostAnalytics),
  },
  { title: "PostGroupAnalytics" },
);
export const Series = t.Object(
  {
    object: t.Literal("analytics_series"),
    bucket: t.Union([t.Literal("day"), t.Literal("week")]),
    time_zone: t.String(),
    series: t.Array(
      t.Object({
        start: t.String({ format: "date", description: "first local date of the bucket" }),
        posts: Type.Integer({ minimum: 0, description: "posts published in the bucket" }),
        metrics: MetricValues,
      }),
    ),
  },
  { title: "AnalyticsSeries" },
);
const GroupParams = t.Object({ workspace_id: t.String(), group: t.String() });

/** Analytics: a published group's numbers, on-demand refresh, and the series over local dates. */
export function analyticsRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id/analytics" })
    .use(rails)
    .get(
      "/post-groups/:group",
      async ({ params }) => resourceResponse(await groupAnalytics(h, params.workspace_id, params.group)),
      {
        ...operation({
          scope: "posts:read",
          summary: "A published post group's analytics: totals with coverage, one row per post",
          tag,
          errors: [404],
        }),
        params: GroupParams,
        response: { 200: GroupAnalytics },
      },
    )
    .post(
      "/post-groups/:group/refresh",
      async ({ params }) =>
        // The analytics job reads the group within its 15-second cadence.
        resourceResponse(await refreshGroupAnalytics(h, params.workspace_id, params.group), 202, {
          "retry-after": "15",
        }),
      {
        ...operation({
          scope: "posts:write",
          summary: "Read a group's numbers from the networks now (rate-limited per workspace)",
          tag,
          errors: [404],
        }),
        parse: JSON_PARSER,
        params: GroupParams,
        body: t.Optional(EmptyBody),
        response: { 202: GroupAnalytics },
      },
    )
    .get(
      "/posts",
      async ({ params, query }) => resourceResponse(await analyticsSeries(h, params.workspace_id, query)),
      {
        ...operation({
          scope: "posts:read",
          summary: "Analytics over time: posts published between two local dates, per day or ISO week",
          tag,
          errors: [404],
        }),
        params: t.Object({ workspace_id: t.String() }),
        query: t.Object({
          from: t.Optional(t.String({ description: "first local publication date, included (YYYY-MM-DD)" })),
          until: t.Optional(t.String({ description: "last local date, excluded (YYYY-MM-DD)" })),
          bucket: t.Optional(
            t.String({ description: "`day` (default) or `week` (ISO weeks, Monday start)" }),
          ),
          channel: t.Optional(Channel),
          destination_id: t.Optional(t.String()),
        }),
        response: { 200: Series },
      },
    );
}
