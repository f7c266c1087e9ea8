import { DateTime } from "luxon";
import { POST_STATES } from "../../modules/posts/states.ts";
import { html, type Markup } from "../pages/html.ts";
import type { Listing, Post, Queue } from "./api-resources.ts";
import { excerpt, postPath, stateBadge } from "./post-view.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { calendarMoveForm, type MoveRefusal, moveForm } from "./calendar-move.ts";
import { notice } from "./notices.ts";

/** States the calendar shows: all but drafts (no time yet) and cancelled posts (they will not go out). */
const SHOWN_STATES = new Set<string>(POST_STATES.filter((s) => s !== "draft" && s !== "cancelled"));
/** Pages of 100 read for one week at most (the listing has an upper time bound only). */
const MAX_PAGES = 20;

/** `/dashboard/workspaces/:ws/calendar`: a week, Monday to Sunday in the workspace's time zone. */
export function calendarPages(routes: DashboardRoutes): void {
  routes.page("/dashboard/workspaces/:workspace_id/calendar", (r) => calendar(r, null));
  calendarMoveForm(routes, calendar);
}

/** The Monday (local midnight in `zone`) of the week holding `day` (YYYY-MM-DD), or of `now`. */
export function weekStart(day: string | null, zone: string, now: number): DateTime | null {
  if (day === null) return DateTime.fromMillis(now, { zone }).startOf("week");
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return null;
  const date = DateTime.fromISO(day, { zone });
  return date.isValid ? date.startOf("week") : null;
}

/** The posts of the week: the listing bounded by the week's end, kept when their time is in the week. */
async function postsOfWeek(
  r: DashboardRequest,
  start: DateTime,
  end: DateTime,
): Promise<{ posts: Post[]; complete: boolean; failed: string | null }> {
  const found: Post[] = [];
  let after: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = new URLSearchParams({ scheduled_before: end.toUTC().toISO()!, limit: "100" });
    if (after) query.set("after", after);
    const answer = await r.api.get<Listing<Post>>(`/workspaces/${r.workspace!.id}/posts?${query}`);
    if (!answer.ok) return { posts: found, complete: false, failed: answer.body?.detail ?? "Try again." };
    for (const post of answer.body.data) {
      const at = Date.parse(post.published_at ?? post.scheduled_at ?? "");
      if (SHOWN_STATES.has(post.state) && at >= start.toMillis() && at < end.toMillis()) found.push(post);
    }
    if (!answer.body.has_more) return { posts: found, complete: true, failed: null };
    after = answer.body.next_cursor;
  }
  return { posts: found, complete: false, failed: null };
}

/** The week page; after a refused move, the week of the day asked for with what the API said. */
async function calendar(r: DashboardRequest, refusal: MoveRefusal | null): Promise<Response> {
  const ws = r.workspace!;
  const zone = ws.timeZone;
  const now = r.h.clock.now();
  const asked = refusal?.week ?? r.query.get("week");
  const start = weekStart(asked, zone, now) ?? weekStart(null, zone, now)!;
  const end = start.plus({ weeks: 1 });
  const askedInvalid = asked !== null && weekStart(asked, zone, now) === null;
  const [week, queue] = await Promise.all([
    postsOfWeek(r, start, end),
    r.api.get<Queue>(`/workspaces/${ws.id}/queue`),
  ]);
  const windows = queue.ok ? queue.body.windows : [];
  const today = DateTime.fromMillis(now, { zone }).toISODate();
  const base = `/dashboard/workspaces/${ws.id}/calendar`;
  const weekLink = (d: DateTime, label: string) => html`<a href="${base}?week=${d.toISODate()}">${label}</a>`;
  // Local days, not 24-hour steps: the week of a DST change is an hour shorter or longer.
  const days = [0, 1, 2, 3, 4, 5, 6].map((i) => start.plus({ days: i }));
  const byDay = new Map<string, Post[]>();
  for (const post of week.posts) {
    const local = DateTime.fromISO(post.published_at ?? post.scheduled_at!, { zone: "utc" }).setZone(zone);
    const key = local.toISODate()!;
    byDay.set(key, [...(byDay.get(key) ?? []), post]);
  }
  const content = html`<h1>Calendar</h1>
<p class="muted">Week of ${start.setLocale("en-GB").toFormat("d LLLL yyyy")}, times in ${zone}.
Scheduled posts are listed by their time; published ones are dimmed. Drag a scheduled post to another
day or free slot, or use its Move form.</p>
${notice(r.query, "calendar")}
${refusal ? html`<div class="notice warn" role="alert"><p>${refusal.text}</p></div>` : ""}
${askedInvalid ? warning(`${asked} is not a date (YYYY-MM-DD); this is the current week.`) : ""}
${week.failed ? warning(`The posts could not be read: ${week.failed}`) : ""}
${week.complete || week.failed ? "" : warning("This week has more posts than the calendar reads at once.")}
<nav aria-label="Weeks"><ul class="tabs">
<li>${weekLink(start.minus({ weeks: 1 }), "← Previous week")}</li>
<li>${weekLink(DateTime.fromMillis(now, { zone }), "This week")}</li>
<li>${weekLink(end, "Next week →")}</li>
</ul></nav>
<ol class="week" data-calendar>${days.map((day) =>
    dayColumn(r, day, byDay.get(day.toISODate()!) ?? [], windows, now, today),
  )}</ol>`;
  return r.render("Calendar", content, { section: "calendar", status: refusal?.status ?? 200 });
}

/** One day: its posts and the queue's free windows still ahead, in time order. */
function dayColumn(
  r: DashboardRequest,
  day: DateTime,
  posts: Post[],
  windows: { weekday: number; local_time: string }[],
  now: number,
  today: string | null,
): Markup {
  const zone = r.workspace!.timeZone;
  const timeOf = (p: Post) => DateTime.fromISO(p.published_at ?? p.scheduled_at!, { zone: "utc" });
  const sorted = [...posts].sort((a, b) => timeOf(a).toMillis() - timeOf(b).toMillis());
  const taken = new Set(sorted.map((p) => timeOf(p).setZone(zone).toFormat("HH:mm")));
  const open = windows
    .filter((w) => w.weekday === day.weekday && !taken.has(w.local_time))
    .map((w) => ({ w, at: DateTime.fromISO(`${day.toISODate()}T${w.local_time}`, { zone }) }))
    .filter(({ at }) => at.toMillis() > now)
    .sort((a, b) => a.at.toMillis() - b.at.toMillis());
  // Posts and free windows in one time order, so a free slot shows where it falls in the day.
  const entries = [
    ...sorted.map((p) => {
      const at = timeOf(p);
      const published = p.state === "published";
      // Scheduled and published go without a badge (published is dimmed); the rest say their state.
      const state = p.state === "scheduled" || published ? "" : html` ${stateBadge(p.state)}`;
      const time = html`<time datetime="${at.toISO()}">${at.setZone(zone).toFormat("HH:mm")}</time>`;
      const href = postPath(r.workspace!.id, p.id);
      const link = html`<a href="${href}">${time} ${p.channel}: ${excerpt(p, 60)}</a>`;
      const move = moveForm(r, p);
      const item = html`<li class="cal-post${published ? " published" : ""}"${
        move ? html` data-post="${p.id}"` : ""
      }>${link}${state}${move ?? ""}</li>`;
      return { at: at.toMillis(), item };
    }),
    // A free window: a drop target of its own (the post takes its exact time).
    ...open.map(({ w, at }) => ({
      at: at.toMillis(),
      item: html`<li class="slot" data-time="${w.local_time}">Free · ${w.local_time}</li>`,
    })),
  ];
  const items = entries.sort((a, b) => a.at - b.at).map((e) => e.item);
  const iso = day.toISODate()!;
  const current = iso === today ? html` aria-current="date"` : "";
  return html`<li id="day-${iso}" data-date="${iso}"${current}><h2>${day
    .setLocale("en-GB")
    .toFormat("ccc d LLL")}</h2>
${items.length ? html`<ul>${items}</ul>` : html`<p class="muted">Nothing</p>`}</li>`;
}

function warning(text: string): Markup {
  return html`<div class="notice warn" role="status"><p>${text}</p></div>`;
}
