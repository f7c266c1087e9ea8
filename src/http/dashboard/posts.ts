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

/** Pages of 100 read for one group's posts at most (a group is sent in one request of up to 100). */
const MAX_GROUP_PAGES = 5;

/**
 * The posts of `group` that the listing's filters keep, newest first (the listing's order), or null
 * when the API refused (the page then shows the group's posts it has).
 */
async function postsOfGroup(
  r: DashboardRequest,
  query: URLSearchParams,
  group: string,
): Promise<Post[] | null> {
  const found: Post[] = [];
  const ask = new URLSearchParams(query);
  ask.delete("after");
  ask.set("group", group);
  ask.set("limit", "100");
  for (let page = 0; page < MAX_GROUP_PAGES; page++) {
    const answer = await r.api.get<Listing<Post>>(`/workspaces/${r.workspace!.id}/posts?${ask}`);
    if (!answer.ok) return null;
    found.push(...answer.body.data);
    if (!answer.body.has_more || !answer.body.next_cursor) break;
    ask.set("after", answer.body.next_cursor);
  }
  return found;
}

/**
 * The page's posts as rows of groups: a group is one row, on the page that holds its newest post (the
 * listing is newest first), with every post of the group the filters keep, also those on other pages.
 * So paging by the API's cursor neither splits a group nor loses one. A listing filtered to one group
 * keeps a row per post.
 */
export async function groupRows(
  r: DashboardRequest,
  query: URLSearchParams,
  posts: Post[],
): Promise<Post[][]> {
  if (query.has("group")) return posts.map((p) => [p]);
  const onPage = new Set(posts.map((p) => p.id));
  const groups = [...new Set(posts.map((p) => p.group))];
  const members = await Promise.all(groups.map((g) => postsOfGroup(r, query, g)));
  return groups.flatMap((group, i) => {
    const all = members[i] ?? posts.filter((p) => p.group === group);
    // Shown where its newest post is listed; a later page skips it (it was shown before).
    if (all.length === 0 || !onPage.has(all[0]!.id)) return [];
    // In the order they were made (ids grow), the group's first post leading.
    return [[...all].reverse()];
  });
}

/** One group's row: its first post's text, each destination with its state, its time, its group. */
function groupRow(r: DashboardRequest, view: string, group: Post[]): (string | Markup)[] {
  const ws = r.workspace!;
  const first = group[0]!;
  const times = group.map(postTime).filter((t): t is string => t !== null);
  const earliest = times.sort()[0] ?? null;
  const destinations = html`<ul class="destinations">${group.map(
    (p) => html`<li><a href="${postPath(ws.id, p.id)}">${whereTo(p)}</a> ${stateBadge(p.state)}</li>`,
  )}</ul>`;
  const base = `/dashboard/workspaces/${ws.id}/posts`;
  const count = group.length > 1 ? ` (${group.length} posts)` : "";
  return [
    html`<a href="${postPath(ws.id, first.id)}">${excerpt(first)}</a>`,
    destinations,
    localTime(earliest, ws.timeZone),
    html`<a href="${base}?${new URLSearchParams({ view, group: first.group })}">${first.group}</a>${count}`,
  ];
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
  const groups = listed.ok ? await groupRows(r, query, listed.body.data) : [];
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
  // A page whose groups were all shown on earlier pages still leads on to the older ones.
  const shownBefore = listed.ok && groups.length === 0 && listed.body.data.length > 0;
  const content = html`<h1>Posts</h1>
<p><a class="button" href="${base}/new">New post</a> <a class="button" href="${base}/import">Import from CSV</a></p>
${notice(r.query, "posts")}
${listed.ok ? "" : errorSummary(errors, listed.body?.detail ?? "The posts could not be listed.", LABELS)}
${tabs}
${filterForm(r, view.id, destinations.ok ? destinations.body.data : [], errors)}
${table({
  caption: `${view.label} posts${filtered ? " (filtered)" : ""}, one row ${
    query.has("group") ? "per post" : "per group"
  }, times in ${ws.timeZone}`,
  head: ["Post", "Destinations", "Time", "Group"],
  rows: groups.map((group) => groupRow(r, view.id, group)),
  empty: shownBefore
    ? "The posts of this page belong to groups shown on earlier pages."
    : filtered
      ? "No posts match these filters."
      : view.empty,
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
