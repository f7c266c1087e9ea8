import { html, type Markup } from "../pages/html.ts";
import { analyticsPages } from "./analytics.ts";
import { type FieldErrors, fieldErrorsOf } from "./api.ts";
import { calendarPages } from "./calendar.ts";
import { postActionForms } from "./post-actions.ts";
import { postDetailPages } from "./post-detail.ts";
import { excerpt, POST_VIEWS, postPath, postTime, stateBadge, whereTo } from "./post-view.ts";
import type { Destination, Listing, Post } from "./api-resources.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { errorSummary, input, pager, select, table } from "./ui.ts";
import { localTime } from "../pages/time.ts";
import { notice } from "./notices.ts";
import { postImportPages } from "./post-import.ts";

/** The filters of the listing the page passes on to the API (besides the view and the cursor). */
const FILTERS = ["channel", "destination_id", "group"] as const;
const LABELS = { "/channel": "Network", "/destination_id": "Destination", "/group": "Group" };

/**
 * The posts area of a workspace: the listing by view, a post's page with its actions, the week
 * calendar and analytics (one registration for index.ts).
 */
export function postPages(routes: DashboardRoutes): void {
  routes.page("/dashboard/workspaces/:workspace_id/posts", postList);
  postImportPages(routes);
  postDetailPages(routes);
  postActionForms(routes);
  calendarPages(routes);
  analyticsPages(routes);
}

/** The query of the page that the API gets: only known filters, and only non-empty ones. */
function listingQuery(query: URLSearchParams, view: string): URLSearchParams {
  const out = new URLSearchParams({ view });
  for (const name of FILTERS) {
    const value = query.get(name)?.trim();
    if (value) out.set(name, value);
  }
  const after = query.get("after");
  if (after) out.set("after", after);
  return out;
}

async function postList(r: DashboardRequest): Promise<Response> {
  const ws = r.workspace!;
  const base = `/dashboard/workspaces/${ws.id}/posts`;
  const requested = r.query.get("view") ?? "all";
  const view = POST_VIEWS.find((v) => v.id === requested) ?? POST_VIEWS[0]!;
  const query = listingQuery(r.query, view.id);
  const [listed, destinations] = await Promise.all([
    r.api.get<Listing<Post>>(`/workspaces/${ws.id}/posts?${query}`),
    r.api.get<Listing<Destination>>(`/workspaces/${ws.id}/destinations`),
  ]);
  const posts: Post[] = listed.ok ? listed.body.data : [];
  const tabQuery = (id: string) => {
    const q = listingQuery(r.query, id);
    q.delete("after");
    return q.toString();
  };
  const tab = (v: (typeof POST_VIEWS)[number]) =>
    html`<li><a href="${base}?${tabQuery(v.id)}"${v.id === view.id ? html` aria-current="page"` : ""}>${
      v.label
    }</a></li>`;
  const tabs = html`<nav aria-label="Views"><ul class="tabs">${POST_VIEWS.map(tab)}</ul></nav>`;
  const errors = fieldErrorsOf(listed);
  const filtered = FILTERS.some((name) => query.has(name));
  const rows = posts.map((p) => [
    html`<a href="${postPath(ws.id, p.id)}">${excerpt(p)}</a>`,
    whereTo(p),
    stateBadge(p.state),
    localTime(postTime(p), ws.timeZone),
    html`<a href="${base}?${new URLSearchParams({ view: view.id, group: p.group })}">${p.group}</a>`,
  ]);
  const content = html`<h1>Posts</h1>
<p><a class="button" href="${base}/new">New post</a> <a class="button" href="${base}/import">Import from CSV</a></p>
${notice(r.query, "posts")}
${listed.ok ? "" : errorSummary(errors, listed.body?.detail ?? "The posts could not be listed.", LABELS)}
${tabs}
${filterForm(r, view.id, destinations.ok ? destinations.body.data : [], errors)}
${table({
  caption: `${view.label} posts${filtered ? " (filtered)" : ""}, times in ${ws.timeZone}`,
  head: ["Post", "Network", "State", "Time", "Group"],
  rows,
  empty: filtered ? "No posts match these filters." : view.empty,
})}
${listed.ok ? pager(base, r.query, listed.body) : ""}`;
  return r.render("Posts", content, { section: "posts", status: listed.ok ? 200 : listed.status });
}

/** A GET form narrowing the listing to a network, a destination or a group (it changes nothing). */
function filterForm(
  r: DashboardRequest,
  view: string,
  destinations: { id: string; channel: string; display_name: string }[],
  errors: FieldErrors,
): Markup {
  const current = (name: string) => r.query.get(name) ?? "";
  const channels = [...new Set(destinations.map((d) => d.channel))].sort();
  const any: [string, string] = ["", "Any"];
  return html`<details class="filters"${FILTERS.some((n) => current(n)) ? html` open` : ""}>
<summary>Filter</summary>
<form method="get" action="/dashboard/workspaces/${r.workspace!.id}/posts">
<input type="hidden" name="view" value="${view}">
${select({
  name: "channel",
  pointer: "/channel",
  label: "Network",
  options: [any, ...channels.map((c): [string, string] => [c, c])],
  value: current("channel"),
  errors,
})}
${select({
  name: "destination_id",
  pointer: "/destination_id",
  label: "Destination",
  options: [any, ...destinations.map((d): [string, string] => [d.id, `${d.display_name} (${d.channel})`])],
  value: current("destination_id"),
  errors,
})}
${input({ name: "group", pointer: "/group", label: "Group", value: current("group"), errors })}
<button type="submit" class="secondary">Show</button>
</form>
</details>`;
}
