import { roleAllows } from "../../modules/account/roles.ts";
import { html, type Markup } from "../pages/html.ts";
import { barChart } from "./charts.ts";
import { postPath } from "./post-view.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { postForm, table } from "./ui.ts";
import { localTime } from "../pages/time.ts";
import { notice, withNotice } from "./notices.ts";
import type { GroupAnalytics } from "./api-resources.ts";

/** The seven metrics of the contract, in its order, with their words. */
export const METRIC_LABELS: [string, string][] = [
  ["views", "Views"],
  ["impressions", "Impressions"],
  ["comments", "Comments"],
  ["reactions", "Reactions"],
  ["shares", "Shares"],
  ["saves", "Saves"],
  ["link_clicks", "Link clicks"],
];

const GROUP = "/dashboard/workspaces/:workspace_id/analytics/:group";
/** Short metric names for a chart's axis (the table under it has the full ones). */
const TICKS: Record<string, string> = {
  views: "views",
  impressions: "impr.",
  comments: "comm.",
  reactions: "react.",
  shares: "shares",
  saves: "saves",
  link_clicks: "clicks",
};

/** A wait in words: 45 → "45 seconds", 600 → "10 minutes", 3900 → "1 hour 5 minutes". */
export function waitInWords(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  if (s < 60) return plural(s, "second");
  const minutes = Math.ceil(s / 60);
  if (minutes < 60) return plural(minutes, "minute");
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest ? `${plural(hours, "hour")} ${plural(rest, "minute")}` : plural(hours, "hour");
}

/** `/analytics/:group`: a published group's totals with coverage, one row per post, refresh now. */
export function analyticsGroupPages(routes: DashboardRoutes): void {
  routes
    .page(GROUP, (r) => groupPage(r, null))
    .form(`${GROUP}/refresh`, async (r, form) => {
      const ws = r.workspace!;
      const group = r.params.group!;
      const answer = await r.api.call(
        "POST",
        `/workspaces/${ws.id}/analytics/post-groups/${encodeURIComponent(group)}/refresh`,
        { body: {}, idempotencyKey: form.get("idempotency_key") ?? undefined },
      );
      if (answer.ok)
        return r.redirect(
          withNotice(
            `/dashboard/workspaces/${ws.id}/analytics/${encodeURIComponent(group)}`,
            "analytics-group",
            "refreshing",
          ),
        );
      if (answer.status === 429) {
        const after = Number(answer.headers.get("retry-after") ?? answer.body?.retry?.after ?? 60);
        return groupPage(r, {
          status: 429,
          text: `${answer.body?.detail ?? "Too many refreshes."} Try again in ${waitInWords(after)}.`,
        });
      }
      return groupPage(r, { status: answer.status, text: answer.body?.detail ?? "The refresh failed." });
    });
}

async function groupPage(r: DashboardRequest, refused: { status: number; text: string } | null) {
  const ws = r.workspace!;
  const group = r.params.group!;
  const answer = await r.api.get<GroupAnalytics>(
    `/workspaces/${ws.id}/analytics/post-groups/${encodeURIComponent(group)}`,
  );
  if (answer.status === 404)
    return r.message(404, "No published posts in this group", [
      "A group has analytics once one of its posts is published.",
      html`<a href="/dashboard/workspaces/${ws.id}/analytics">Back to analytics</a>`,
    ]);
  if (!answer.ok)
    return r.message(answer.status, "The numbers cannot be shown", [
      answer.body?.detail ?? "Try again later.",
    ]);
  const data = answer.body;
  const zone = ws.timeZone;
  const content = html`<p><a href="/dashboard/workspaces/${ws.id}/analytics">← Analytics</a></p>
<h1>Group ${data.group}</h1>
${notice(r.query, "analytics-group")}
${refused ? html`<div class="notice warn" role="alert"><p>${refused.text}</p></div>` : ""}
${
  roleAllows(r.session.role, "posts:write")
    ? postForm(
        {
          action: `/dashboard/workspaces/${ws.id}/analytics/${encodeURIComponent(group)}/refresh`,
          csrf: r.csrf,
        },
        html`<button type="submit" class="secondary">Refresh now</button>`,
      )
    : ""
}
<h2>Totals</h2>
${totalsChart(data)}
${table({
  caption: "Totals with coverage (the posts whose network reported each number)",
  head: ["Metric", "Total", "Coverage"],
  rows: METRIC_LABELS.map(([m, label]) => {
    const t = data.totals[m];
    return [label, String(t?.value ?? 0), t ? coverage(t.coverage) : null];
  }),
  empty: "",
})}
<h2>Per post</h2>
${table({
  caption: `Each post of the group, times in ${zone}`,
  head: [
    "Post",
    "Published",
    "Numbers",
    ...METRIC_LABELS.map(([, l]) => l),
    "Read",
    "Next read",
    "Last error",
  ],
  rows: data.posts.map((p) => [
    html`<a href="${postPath(ws.id, p.post)}">${p.channel}</a>`,
    localTime(p.published_at, zone),
    p.state,
    ...METRIC_LABELS.map(([m]) => String(p.metrics[m] ?? 0)),
    localTime(p.fetched_at, zone),
    localTime(p.next_automatic_refresh_at, zone),
    p.last_error ? html`<code>${p.last_error.code}</code>: ${p.last_error.message}` : null,
  ]),
  empty: "No posts.",
})}`;
  return r.render(`Analytics of ${data.group}`, content, {
    section: "analytics",
    status: refused?.status ?? 200,
  });
}

/** The group's totals, a bar per metric (the table under it has them with their coverage). */
function totalsChart(data: GroupAnalytics): Markup {
  const values = METRIC_LABELS.map(([m]) => data.totals[m]?.value ?? 0);
  const largest = Math.max(...values);
  return barChart({
    id: "chart-totals",
    title: `Totals of the group ${data.group}`,
    unit: "",
    axis: "Metric (all posts of the group)",
    categories: METRIC_LABELS.map(([m, label]) => ({ label, tick: TICKS[m]! })),
    series: [{ name: "Total of all posts", values }],
    categorical: true,
    summary:
      largest > 0
        ? `The most: ${METRIC_LABELS[values.indexOf(largest)]![1]} (${largest}).`
        : "No numbers reported yet.",
  });
}

function coverage(c: { total_posts: number; fetched_posts: number; failed_posts: number }): Markup {
  const failed = c.failed_posts ? `, ${c.failed_posts} failed` : "";
  return html`${c.fetched_posts} of ${c.total_posts} posts read${failed}`;
}
