import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { METRICS } from "../../providers/types.ts";
import { Channel } from "./posts-schemas.ts";

export const MetricValues = t.Object(
  Object.fromEntries(METRICS.map((m) => [m, Type.Integer({ minimum: 0 })])),
  {
    title: "MetricValues",
  },
);
const Coverage = t.Object(
  {
    total_posts: Type.Integer({ minimum: 0 }),
    fetched_posts: Type.Integer({ minimum: 0 }),
    failed_posts: Type.Integer({ minimum: 0 }),
  },
  { title: "MetricCoverage" },
);
export const PostAnalytics = t.Object(
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
        METRICS.map((m) => [
          m,
          t.Object({ value: Type.Integer({ minimum: 0 }), coverage: Coverage }, { title: "MetricTotal" }),
        ]),
      ),
      { title: "MetricTotals" },
    ),
    posts: t.Array(PostAnalytics),
  },
  { title: "PostGroupAnalytics" },
);
/** Analytics over local dates, per day or ISO week. */
export const AnalyticsSeries = t.Object(
  {
    object: t.Literal("analytics_series"),
    bucket: t.Union([t.Literal("day"), t.Literal("week")]),
    time_zone: t.String(),
    series: t.Array(
      t.Object(
        {
          start: t.String({ format: "date", description: "first local date of the bucket" }),
          posts: Type.Integer({ minimum: 0, description: "posts published in the bucket" }),
          metrics: MetricValues,
        },
        { title: "AnalyticsBucket" },
      ),
    ),
  },
  { title: "AnalyticsSeries" },
);
export const GroupParams = t.Object({ workspace_id: t.String(), group: t.String() });

/** Query of the series. */
export const AnalyticsSeriesQuery = t.Object({
  from: t.Optional(t.String({ description: "first local publication date, included (YYYY-MM-DD)" })),
  until: t.Optional(t.String({ description: "last local date, excluded (YYYY-MM-DD)" })),
  bucket: t.Optional(t.String({ description: "`day` (default) or `week` (ISO weeks, Monday start)" })),
  channel: t.Optional(Channel),
  destination_id: t.Optional(t.String()),
});
