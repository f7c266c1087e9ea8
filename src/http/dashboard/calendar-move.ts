import { DateTime } from "luxon";
import { roleAllows } from "../../modules/account/roles.ts";
import { html, type Markup } from "../pages/html.ts";
import { type ApiAnswer, fieldErrorsOf } from "./api.ts";
import type { Post, PostSet } from "./api-resources.ts";
import { withNotice } from "./notices.ts";
import { fromLocalInput, whereTo } from "./post-view.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { input, postForm } from "./ui.ts";

const MOVE = "/dashboard/workspaces/:workspace_id/calendar/move";

/** A move the API (or the form's own check) refused: shown on the week the person was looking at. */
export interface MoveRefusal {
  status: number;
  text: string;
  week: string | null;
}

type ShowWeek = (r: DashboardRequest, refusal: MoveRefusal | null) => Promise<Response>;

/**
 * The calendar's move: one CSRF-checked form per scheduled post (it works without the script; the
 * script fills the same form in when a post is dropped on a day or a free slot and sends it).
 */
export function calendarMoveForm(routes: DashboardRoutes, show: ShowWeek): void {
  routes.form(MOVE, (r, form) => movePost(r, form, show));
}

/**
 * The Move form of a post on the calendar, or null when it cannot be moved here: only scheduled posts
 * (a failed or missed one is sent again from its own page, with its duplicate-risk question), and only
 * for a role that may change posts.
 */
export function moveForm(r: DashboardRequest, post: Post): Markup | null {
  if (post.state !== "scheduled" || !post.scheduled_at || !post.available_actions.includes("reschedule"))
    return null;
  if (!roleAllows(r.session.role, "posts:write")) return null;
  const ws = r.workspace!;
  const local = DateTime.fromISO(post.scheduled_at, { zone: "utc" }).setZone(ws.timeZone);
  const queued = post.available_actions.includes("move");
  // Named by account and time: two accounts of one network may hold the group's posts at one time.
  const which = html`<span class="visually-hidden"> the ${whereTo(post)} post of ${local.toFormat(
    "ccc d LLL HH:mm",
  )}</span>`;
  return html`<details class="cal-move"><summary>Move${which}</summary>
${postForm(
  { action: `/dashboard/workspaces/${ws.id}/calendar/move`, csrf: r.csrf, className: "move" },
  html`<input type="hidden" name="post_id" value="${post.id}">
<input type="hidden" name="expected_scheduled_at" value="${post.scheduled_at}">
<input type="hidden" name="week" value="${local.toISODate()}">
${input({
  name: "local_date",
  pointer: `/move/${post.id}/local_date`,
  label: "Day",
  type: "date",
  value: local.toISODate()!,
  required: true,
})}
${input({
  name: "local_time",
  pointer: `/move/${post.id}/local_time`,
  label: "Time",
  hint: queued ? "Empty: the day's first free queue window." : "Empty: the same time of day.",
  type: "time",
  value: "",
})}
<button type="submit">Move${which}</button>`,
)}</details>`;
}

/** What a refused answer says, with the details of its fields (the form has none of the API's fields). */
function refusalText(answer: ApiAnswer<unknown>, fallback: string): string {
  const detail = answer.ok ? fallback : (answer.body?.detail ?? fallback);
  // The field details the summary does not already say.
  const details = [...fieldErrorsOf(answer).values()].filter(
    (d) => !detail.toLowerCase().includes(d.toLowerCase()),
  );
  return details.length ? `${detail} (${details.join("; ")})` : detail;
}

/**
 * Moves a post to a day, or to a time on a day: without a time a queued post takes the day's first
 * free window (POST /posts/move) and a post at an exact time keeps its time of day; with a time it is
 * rescheduled to exactly that time (POST /posts/{post}/reschedule). A post that moved since the page
 * was shown is not moved (409), as the API's move checks.
 */
async function movePost(r: DashboardRequest, form: URLSearchParams, show: ShowWeek): Promise<Response> {
  const ws = r.workspace!;
  const zone = ws.timeZone;
  const week = form.get("week");
  const refuse = (status: number, text: string) => show(r, { status, text, week });
  const id = form.get("post_id") ?? "";
  const date = (form.get("local_date") ?? "").trim();
  const time = (form.get("local_time") ?? "").trim();
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || !DateTime.fromISO(date, { zone }).isValid)
    return refuse(422, "Choose the day to move the post to.");
  if (time && !/^\d{2}:\d{2}$/.test(time)) return refuse(422, "Enter the time as hours and minutes (HH:MM).");
  if (!/^[A-Za-z0-9_]{1,200}$/.test(id)) return refuse(404, "That post does not exist.");
  const current = await r.api.get<Post>(`/workspaces/${ws.id}/posts/${id}`);
  if (!current.ok) return refuse(current.status, refusalText(current, "The post could not be read."));
  const post = current.body;
  const expected = form.get("expected_scheduled_at") ?? "";
  if (post.scheduled_at === null || Date.parse(post.scheduled_at) !== Date.parse(expected))
    return refuse(409, "The post changed since the calendar was shown: here it is as it is now.");
  const idempotencyKey = form.get("idempotency_key") ?? undefined;
  let answer: ApiAnswer<unknown>;
  if (!time && post.available_actions.includes("move")) {
    answer = await r.api.call<PostSet>("POST", `/workspaces/${ws.id}/posts/move`, {
      idempotencyKey,
      body: { confirmed: true, local_date: date, posts: [{ id: post.id, expected_scheduled_at: expected }] },
    });
  } else {
    const hhmm = time || DateTime.fromISO(post.scheduled_at, { zone: "utc" }).setZone(zone).toFormat("HH:mm");
    const at = fromLocalInput(`${date}T${hhmm}`, zone);
    if ("problem" in at) return refuse(422, at.problem);
    answer = await r.api.call<Post>("POST", `/workspaces/${ws.id}/posts/${post.id}/reschedule`, {
      idempotencyKey,
      body: { confirmed: true, scheduled_at: at.iso, time_zone: zone },
    });
  }
  if (!answer.ok) return refuse(answer.status, refusalText(answer, "The post could not be moved."));
  return r.redirect(withNotice(`/dashboard/workspaces/${ws.id}/calendar?week=${date}`, "calendar", "moved"));
}
