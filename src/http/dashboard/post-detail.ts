import { html, type Markup } from "../pages/html.ts";
import type { FieldErrors } from "./api.ts";
import { actionForms, ACTION_LABELS } from "./post-action-forms.ts";
import type { Destination, Listing, Post, TrackedLink } from "./api-resources.ts";
import { excerpt, postPath, stateBadge, stateHint, whereTo } from "./post-view.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { errorSummary, table } from "./ui.ts";
import { localTime } from "../pages/time.ts";
import { notice } from "./notices.ts";
import { approvalBadge, approvalSections, APPROVAL_LABELS, type ApprovalOutcome } from "./approval-view.ts";

import { recyclingSection } from "./post-recycling.ts";

/** What came back from an action form that the API refused: the page is shown again with it. */
export interface ActionOutcome {
  /** Which form was sent (cancel, retry, reschedule, publish, delete). */
  form: string;
  status: number;
  /** Field errors keyed by the pointers of the page's controls. */
  errors: FieldErrors;
  fallback: string | null;
  /** The values the person entered, kept in the form. */
  values: Record<string, string>;
}

/** `/dashboard/workspaces/:ws/posts/:post_id`: one post, its attempts and receipts, and its actions. */
export function postDetailPages(routes: DashboardRoutes): void {
  routes.page("/dashboard/workspaces/:workspace_id/posts/:post_id", (r) => renderPostDetail(r));
}

/** Renders a post's page (after a refused action too, with that form's errors and values). */
export async function renderPostDetail(
  r: DashboardRequest,
  outcome?: ActionOutcome,
  approvalOutcome?: ApprovalOutcome,
): Promise<Response> {
  const ws = r.workspace!;
  const path = `/workspaces/${ws.id}/posts/${encodeURIComponent(r.params.post_id!)}`;
  const answer = await r.api.get<Post>(`${path}?include=attempts`);
  if (answer.status === 404)
    return r.message(404, "Post not found", [
      "It does not exist in this workspace, or it was a draft that was deleted.",
      html`<a href="/dashboard/workspaces/${ws.id}/posts">Back to the posts</a>`,
    ]);
  if (!answer.ok)
    return r.message(answer.status, "This post cannot be shown", [answer.body?.detail ?? "Try again later."]);
  const post = answer.body;
  const etag = answer.headers.get("etag") ?? "";
  const [siblings, destinations, links] = await Promise.all([
    r.api.get<Listing<Post>>(
      `/workspaces/${ws.id}/posts?${new URLSearchParams({ group: post.group, limit: "100" })}`,
    ),
    post.state === "draft" ? r.api.get<Listing<Destination>>(`/workspaces/${ws.id}/destinations`) : null,
    post.link_tracking ? r.api.get<Listing<TrackedLink>>(`${path}/links`) : null,
  ]);
  const others = siblings.ok ? siblings.body.data.filter((p) => p.id !== post.id) : [];
  const zone = ws.timeZone;
  const analyticsPath = `/dashboard/workspaces/${ws.id}/analytics/${encodeURIComponent(post.group)}`;
  const content = html`<p><a href="/dashboard/workspaces/${ws.id}/posts">← Posts</a></p>
<h1>${excerpt(post, 60)}</h1>
${notice(r.query, "post")}
${outcome ? errorSummary(outcome.errors, outcome.fallback, ACTION_LABELS) : ""}
${approvalOutcome ? errorSummary(approvalOutcome.errors, approvalOutcome.problem, APPROVAL_LABELS) : ""}
<p>${stateBadge(post.state)}${post.approval ? html` ${approvalBadge(post.approval.status)}` : ""} ${stateHint(post)}</p>
${facts(r, post)}
<h2>Content</h2>
${body(post)}
${recyclingSection(r, post)}
${receipts(post, zone)}
${links?.ok ? trackedLinks(post, links.body.data) : ""}
<h2>Attempts</h2>
${attempts(post, zone)}
${
  others.length
    ? html`<h2>Other posts of the group</h2>
<ul class="plain">${others.map(
        (p) =>
          html`<li><a href="${postPath(ws.id, p.id)}">${whereTo(p)}</a> ${stateBadge(p.state)} ${localTime(
            p.published_at ?? p.scheduled_at,
            zone,
          )}</li>`,
      )}</ul>`
    : ""
}
${
  post.state === "published" || others.some((p) => p.state === "published")
    ? html`<p><a href="${analyticsPath}">Analytics of the group ${post.group}</a></p>`
    : ""
}
${await approvalSections(r, post, approvalOutcome)}
${actionForms(r, post, etag, destinations?.ok ? destinations.body.data : [], outcome)}`;
  const status = outcome?.status ?? approvalOutcome?.status ?? 200;
  return r.render(`Post ${excerpt(post, 40)}`, content, { section: "posts", status });
}

/** The post's facts as a description list; times in the workspace's time zone. */
function facts(r: DashboardRequest, post: Post): Markup {
  const ws = r.workspace!;
  const zone = ws.timeZone;
  const row = (term: string, value: unknown) =>
    value === null || value === undefined || value === "" ? "" : html`<dt>${term}</dt><dd>${value}</dd>`;
  const groupQuery = new URLSearchParams({ group: post.group });
  const groupLink = html`<a href="/dashboard/workspaces/${ws.id}/posts?${groupQuery}">${post.group}</a>`;
  const deferred = post.deferred
    ? html`until ${localTime(post.deferred.until, zone)} (${post.deferred.reason.replaceAll("_", " ")})`
    : null;
  const lastError = post.last_error
    ? html`<code>${post.last_error.code}</code>: ${post.last_error.message}`
    : null;
  return html`<dl>
${row("State", post.state)}
${row("Network", post.channel)}
${row("Destination", post.destination?.display_name ?? post.destination_id ?? "not chosen yet")}
${row("Group", groupLink)}
${row("Scheduled", post.scheduled_at ? localTime(post.scheduled_at, zone) : null)}
${row("Published", post.published_at ? localTime(post.published_at, zone) : null)}
${row("Cancelled", post.cancelled_at ? localTime(post.cancelled_at, zone) : null)}
${row("Missed", post.missed_at ? localTime(post.missed_at, zone) : null)}
${row("Deferred", deferred)}
${row("Last error", lastError)}
${row("Attempts", String(post.attempt_count))}
${row("Created", localTime(post.created_at, zone))}
${row("Updated", localTime(post.updated_at, zone))}
${row("Times shown in", zone)}
</dl>`;
}

/** The body items in order (a thread when more than one), each with the media attached to it. */
function body(post: Post): Markup {
  const items = post.payload.body.length ? post.payload.body : [""];
  return html`<ol class="post-items">${items.map((text, i) => {
    const media = post.assets.filter((a) => a.item_index === i);
    return html`<li><p class="post-text">${text || html`<span class="muted">(no text)</span>`}</p>${
      media.length
        ? html`<ul class="plain">${media.map(
            (a) => html`<li>${a.type}: ${a.label} <span class="muted">(${a.content_type})</span></li>`,
          )}</ul>`
        : ""
    }</li>`;
  })}</ol>`;
}

/** What the network answered for each published item (its address is shown, not linked: off-site). */
function receipts(post: Post, zone: string): Markup {
  if (post.receipts.length === 0) return html``;
  return html`<h2>On the network</h2>
${table({
  caption: "Published items",
  hideCaption: true,
  head: ["Item", "Address", "State", "Published"],
  rows: post.receipts.map((rc) => [
    rc.kind === "first_comment" ? "First comment" : String(rc.item_index + 1),
    rc.url === null ? null : html`<code>${rc.url}</code>`,
    rc.kind === "first_comment" && rc.error ? html`${rc.state}: ${rc.error.message}` : rc.state,
    localTime(rc.published_at, zone),
  ]),
  empty: "",
})}`;
}

/** The short links the post published, where each leads and its clicks (addresses shown, not linked). */
function trackedLinks(post: Post, links: TrackedLink[]): Markup {
  return html`<h2>Tracked links</h2>
${table({
  caption: "Tracked links and their clicks",
  hideCaption: true,
  head: ["Short link", "Leads to", "Clicks"],
  rows: links.map((l) => [
    html`<code>${l.short_url}</code>`,
    html`<code>${l.target}</code>`,
    String(l.clicks),
  ]),
  empty:
    post.state === "published" || post.receipts.length > 0
      ? "The post had no URL to track."
      : "Its URLs become short links when it is published.",
})}`;
}

/** Every publishing attempt: when, how it ended, what the network said. */
function attempts(post: Post, zone: string): Markup {
  return table({
    caption: "Publishing attempts",
    hideCaption: true,
    head: ["#", "Trigger", "Outcome", "Started", "Finished", "Error", "Network status"],
    rows: (post.attempts ?? []).map((a) => [
      String(a.number),
      a.trigger.replaceAll("_", " "),
      a.status.replaceAll("_", " "),
      localTime(a.started_at, zone),
      localTime(a.finished_at, zone),
      a.error ? html`<code>${a.error.code}</code>: ${a.error.message}` : null,
      a.provider?.status_code ? String(a.provider.status_code) : null,
    ]),
    empty: post.state === "draft" ? "A draft has no attempts." : "No attempt yet.",
  });
}
