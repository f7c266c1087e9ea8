import { DateTime } from "luxon";
import { html, type Markup } from "../pages/html.ts";
import { fieldErrorsOf } from "./api.ts";
import { barChart } from "./charts.ts";
import { analyticsGroupPages, METRIC_LABELS } from "./analytics-group.ts";
import type { AnalyticsSeries, Listing, Post } from "./api-resources.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { errorSummary, input, select, table } from "./ui.ts";

/** Analytics: the series over a range of local dates, and a published group's numbers. */
export function analyticsPages(routes: DashboardRoutes): void {
  routes.page("/dashboard/workspaces/:workspace_id/analytics", series);
  analyticsGroupPages(routes);
}

/** The range shown when none is asked for: the last 28 local days, today included. */
export function defaultRange(zone: string, now: number): { from: string; until: string } {
  const today = DateTime.fromMillis(now, { zone }).startOf("day");
  return { from: today.minus({ days: 27 }).toISODate()!, until: today.plus({ days: 1 }).toISODate()! };
}

const LABELS = { "/from": "From", "/until": "Until", "/bucket": "Per" };

type Bucket = AnalyticsSeries["series"][number];

async function series(r: DashboardRequest): Promise<Response> {
  const ws = r.workspace!;
  const range = defaultRange(ws.timeZone, r.h.clock.now());
  const from = r.query.get("from") || range.from;
  const until = r.query.get("until") || range.until;
  const bucket = r.query.get("bucket") === "week" ? "week" : "day";
  const query = new URLSearchParams({ from, until, bucket });
  const [answer, published] = await Promise.all([
    r.api.get<AnalyticsSeries>(`/workspaces/${ws.id}/analytics/posts?${query}`),
    r.api.get<Listing<Post>>(`/workspaces/${ws.id}/posts?view=published&limit=20`),
  ]);
  const errors = fieldErrorsOf(answer);
  const buckets: Bucket[] = answer.ok ? answer.body.series : [];
  const form = html`<form method="get" action="/dashboard/workspaces/${ws.id}/analytics" class="range">
${input({ name: "from", pointer: "/from", label: "From (included)", type: "date", value: from, errors })}
${input({ name: "until", pointer: "/until", label: "Until (excluded)", type: "date", value: until, errors })}
${select({
  name: "bucket",
  pointer: "/bucket",
  label: "Per",
  options: [
    ["day", "Day"],
    ["week", "Week"],
  ],
  value: bucket,
  errors,
})}
<button type="submit" class="secondary">Show</button>
</form>`;
  const content = html`<h1>Analytics</h1>
<p class="muted">The latest numbers of the posts published in the range, counted on their local
publication ${bucket === "week" ? "week (Monday start)" : "day"} in ${ws.timeZone}.</p>
${answer.ok ? "" : errorSummary(errors, answer.body?.detail ?? "The numbers could not be read.", LABELS)}
${form}
${answer.ok ? seriesView(buckets, bucket, ws.timeZone) : ""}
${recentGroups(r, published.ok ? published.body.data : [])}`;
  return r.render("Analytics", content, { section: "analytics", status: answer.ok ? 200 : answer.status });
}

/** A bucket's start as a short axis tick and as a table heading. */
function bucketNames(start: string, bucket: string): { tick: string; label: string } {
  const date = DateTime.fromISO(start, { zone: "utc" }).setLocale("en-GB");
  return {
    tick: date.toFormat("d LLL"),
    label: bucket === "week" ? `Week of ${date.toFormat("d LLL yyyy")}` : date.toFormat("ccc d LLL yyyy"),
  };
}

/** The metrics a person does something with (stacked in one chart); views and impressions are reach. */
const INTERACTIONS = new Set(["comments", "reactions", "shares", "saves", "link_clicks"]);

/**
 * Charts of the range (posts; interactions stacked by kind; views and impressions each alone, as they
 * count differently), each with its numbers in a table, then every number in one table.
 */
function seriesView(buckets: Bucket[], bucket: string, zone: string): Markup {
  const categories = buckets.map((b) => bucketNames(b.start, bucket));
  const per = bucket === "week" ? "week" : "day";
  const axis =
    bucket === "week" ? `Week of publication (from Monday, ${zone})` : `Day of publication (${zone})`;
  const valuesOf = (m: string) => buckets.map((b) => b.metrics[m] ?? 0);
  const measured = METRIC_LABELS.filter(([m]) => buckets.some((b) => (b.metrics[m] ?? 0) > 0));
  const interactions = measured.filter(([m]) => INTERACTIONS.has(m));
  const reach = measured.filter(([m]) => !INTERACTIONS.has(m));
  const unmeasured = METRIC_LABELS.filter(([m]) => !measured.some(([n]) => n === m)).map(([, l]) => l);
  const posts = barChart({
    id: "chart-posts",
    title: `Posts published per ${per}`,
    unit: "posts",
    axis,
    categories,
    series: [{ name: "Posts published", values: buckets.map((b) => b.posts) }],
  });
  const interactionChart = interactions.length
    ? barChart({
        id: "chart-interactions",
        title: `Interactions per ${per}`,
        unit: "interactions",
        axis,
        categories,
        series: interactions.map(([m, label]) => ({ name: label, values: valuesOf(m) })),
      })
    : "";
  const reachCharts = reach.map(([m, label]) =>
    barChart({
      id: `chart-${m}`,
      title: `${label} per ${per}`,
      unit: label.toLowerCase(),
      axis,
      categories,
      series: [{ name: label, values: valuesOf(m) }],
    }),
  );
  return html`<h2>Charts</h2>
<div class="charts">
${posts}
${interactionChart}
${reachCharts}
</div>
${unmeasured.length ? html`<p class="muted">None in this range: ${unmeasured.join(", ")}.</p>` : ""}
<h2>Numbers</h2>
${table({
  caption: `Posts and their numbers per ${bucket}`,
  head: [bucket === "week" ? "Week" : "Day", "Posts", ...METRIC_LABELS.map(([, l]) => l)],
  rows: buckets.map((b, i) => [
    categories[i]!.label,
    String(b.posts),
    ...METRIC_LABELS.map(([m]) => String(b.metrics[m] ?? 0)),
  ]),
  empty: "No days in this range.",
})}`;
}

/** The groups of the latest published posts, each linking to its own numbers. */
function recentGroups(r: DashboardRequest, posts: Post[]): Markup {
  const groups = [...new Set(posts.map((p) => p.group))];
  const base = `/dashboard/workspaces/${r.workspace!.id}/analytics`;
  return html`<h2>Recently published groups</h2>
${
  groups.length
    ? html`<ul class="plain">${groups.map(
        (g) => html`<li><a href="${base}/${encodeURIComponent(g)}">${g}</a></li>`,
      )}</ul>`
    : html`<p class="muted">Nothing has been published yet.</p>`
}`;
}
