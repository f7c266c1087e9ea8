// The dashboard's approvals: the "Awaiting approval" view of a workspace with a decision per group,
// and the forms of a post's page (approve, request changes, comment, review links). Each calls the API
// as the person, so scopes, versions, idempotency and audit are the API's.
import { roleAllows } from "../../modules/account/roles.ts";
import { html, type Markup } from "../pages/html.ts";
import { localTime } from "../pages/time.ts";
import { type ApiAnswer, fieldErrorsOf } from "./api.ts";
import type { Listing, Post } from "./api-resources.ts";
import {
  APPROVAL_LABELS,
  APPROVAL_POINTERS,
  type ApprovalOutcome,
  authorText,
  requestedWhenText,
  type ReviewLinkResource,
} from "./approval-view.ts";
import { notice, withNotice } from "./notices.ts";
import { renderPostDetail } from "./post-detail.ts";
import { excerpt, postPath, whereTo } from "./post-view.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { buttonForm, errorSummary, postForm, table, textarea } from "./ui.ts";

const POST = "/dashboard/workspaces/:workspace_id/posts/:post_id";
const APPROVALS = "/dashboard/workspaces/:workspace_id/approvals";

export function approvalPages(routes: DashboardRoutes): void {
  routes
    .page(APPROVALS, (r) => awaitingPage(r))
    .form(`${APPROVALS}/approve`, (r, form) => decideGroup(r, form, "approve"))
    .form(`${APPROVALS}/reject`, (r, form) => decideGroup(r, form, "reject"))
    .form(`${POST}/approve`, async (r, form) => {
      const body = { confirmed: true, version: Number(form.get("version")) || 1 };
      const answer = await r.api.call("POST", `${apiPost(r)}/approve`, { body, idempotencyKey: keyOf(form) });
      if (answer.ok) return r.redirect(withNotice(detail(r), "post", "approved"));
      return refused(r, answer, "approve", {});
    })
    .form(`${POST}/reject`, async (r, form) => {
      const values = { comment: form.get("comment") ?? "" };
      const body = { confirmed: true, comment: values.comment.trim() };
      const answer = await r.api.call("POST", `${apiPost(r)}/reject`, { body, idempotencyKey: keyOf(form) });
      if (answer.ok) return r.redirect(withNotice(detail(r), "post", "changes-requested"));
      return refused(r, answer, "reject", values);
    })
    .form(`${POST}/comments`, async (r, form) => {
      const values = { body: form.get("body") ?? "" };
      const answer = await r.api.call("POST", `${apiPost(r)}/comments`, {
        body: { body: values.body.trim() },
        idempotencyKey: keyOf(form),
      });
      if (answer.ok) return r.redirect(withNotice(detail(r), "post", "commented"));
      return refused(r, answer, "comment", values);
    })
    .form(`${POST}/review-links`, async (r, form) => {
      const post = await r.api.get<Post>(apiPost(r));
      if (!post.ok) return refused(r, post, "review-link", {});
      const answer = await r.api.call<ReviewLinkResource>(
        "POST",
        `/workspaces/${r.workspace!.id}/review-links`,
        {
          body: { group: post.body.group, expires_in_days: Number(form.get("expires_in_days")) || 30 },
        },
      );
      if (!answer.ok) return refused(r, answer, "review-link", {});
      return linkCreatedPage(r, post.body, answer.body);
    })
    .form(`${POST}/review-links/:review_link_id/delete`, async (r, form) => {
      const id = encodeURIComponent(r.params.review_link_id!);
      const answer = await r.api.call("DELETE", `/workspaces/${r.workspace!.id}/review-links/${id}`, {
        idempotencyKey: keyOf(form),
      });
      if (answer.ok || answer.status === 404)
        return r.redirect(withNotice(detail(r), "post", "review-link-deleted"));
      return refused(r, answer, "review-link", {});
    });
}

const detail = (r: DashboardRequest) => postPath(r.workspace!.id, r.params.post_id!);
const apiPost = (r: DashboardRequest) =>
  `/workspaces/${r.workspace!.id}/posts/${encodeURIComponent(r.params.post_id!)}`;
const keyOf = (form: URLSearchParams) => form.get("idempotency_key") ?? undefined;

/** Pointers of the API → of the page's controls, per form. */
const FORM_POINTERS: Record<ApprovalOutcome["form"], Record<string, string>> = {
  approve: {},
  reject: { "/comment": APPROVAL_POINTERS.comment },
  comment: { "/body": APPROVAL_POINTERS.commentBody },
  "review-link": { "/expires_in_days": APPROVAL_POINTERS.expires },
};

/** A refusal: a message page for no right or no post, else the post again with the problem shown. */
function refused(
  r: DashboardRequest,
  answer: ApiAnswer<unknown>,
  form: ApprovalOutcome["form"],
  values: Record<string, string>,
): Promise<Response> | Response {
  const text =
    (!answer.ok && (answer.body?.detail ?? answer.body?.title)) || "The request could not be completed.";
  if (answer.status === 403)
    return r.message(403, "Not allowed", [text, html`<a href="${detail(r)}">Back to the post</a>`]);
  if (answer.status === 404)
    return r.message(404, "Post not found", [
      "It does not exist in this workspace, or it was a draft that was deleted.",
      html`<a href="/dashboard/workspaces/${r.workspace!.id}/posts">Back to the posts</a>`,
    ]);
  const errors = new Map<string, string>();
  const elsewhere: string[] = [];
  for (const [pointer, detailText] of fieldErrorsOf(answer)) {
    const mine = FORM_POINTERS[form][pointer];
    if (mine) errors.set(mine, detailText);
    else elsewhere.push(pointer ? `${pointer}: ${detailText}` : detailText);
  }
  const problem =
    answer.status === 409 && form === "approve"
      ? `${text} The page below shows the post as it is now.`
      : errors.size && elsewhere.length === 0
        ? null
        : [text, ...elsewhere].join(" ");
  return renderPostDetail(r, undefined, { form, status: answer.status, errors, problem, values });
}

/** The answer to "Create a review link": its address, shown this once, with a copy button. */
function linkCreatedPage(r: DashboardRequest, post: Post, link: ReviewLinkResource): Response {
  const zone = r.workspace!.timeZone;
  return r.render(
    "Review link created",
    html`<h1>Review link created</h1>
<div class="notice ok" role="status"><p><strong>Copy the address now: it will not be shown again.</strong>
Herald keeps only a fingerprint of it. Anyone with it can approve the posts of the group ${post.group} or
request changes until ${localTime(link.expires_at, zone)}.</p></div>
<div class="secret"><code id="review-link-url">${link.url ?? ""}</code>
<button type="button" data-copy="review-link-url" hidden>Copy</button>
<span id="review-link-url-status" role="status"></span></div>
<p><a href="${postPath(r.workspace!.id, post.id)}">Back to the post</a></p>`,
    { section: "approvals", status: 201 },
  );
}

/** A group of posts awaiting approval, in the order they were asked. */
interface AwaitingGroup {
  group: string;
  posts: Post[];
}

function groupsOf(posts: Post[]): AwaitingGroup[] {
  const groups = new Map<string, Post[]>();
  for (const post of [...posts].reverse()) groups.set(post.group, [...(groups.get(post.group) ?? []), post]);
  return [...groups].map(([group, list]) => ({ group, posts: list }));
}

/** A group's decision that came back with problems. */
interface GroupOutcome {
  group: string;
  form: "approve" | "reject";
  status: number;
  problems: string[];
  comment: string;
}

/** `/dashboard/workspaces/:ws/approvals`: every post awaiting approval, by group, with decisions. */
async function awaitingPage(r: DashboardRequest, outcome?: GroupOutcome): Promise<Response> {
  const ws = r.workspace!;
  const listed = await r.api.all<Post>(`/workspaces/${ws.id}/posts?approval=requested`);
  const posts = listed.ok ? listed.body.filter((p) => p.state === "draft") : [];
  const mayApprove = roleAllows(r.session.role, "posts:approve");
  const groups = groupsOf(posts);
  const content = html`<h1>Awaiting approval</h1>
${notice(r.query, "approvals")}
${listed.ok ? "" : errorSummary(new Map(), listed.body?.detail ?? "The posts could not be listed.")}
<p>Posts sent for approval wait here as drafts until ${
    mayApprove ? "you or another owner or admin" : "an owner or admin"
  } approves them or requests changes. Approving sends each post out at the time it asked for.</p>
${groups.length === 0 ? html`<p class="muted">Nothing awaits approval.</p>` : ""}
${groups.map((g, i) => groupSection(r, g, i, mayApprove, outcome?.group === g.group ? outcome : undefined))}`;
  return r.render("Awaiting approval", content, { section: "approvals", status: outcome?.status ?? 200 });
}

function groupSection(
  r: DashboardRequest,
  g: AwaitingGroup,
  index: number,
  mayApprove: boolean,
  outcome?: GroupOutcome,
): Markup {
  const ws = r.workspace!;
  const zone = ws.timeZone;
  const titleId = `group-${index}-title`;
  const first = g.posts[0]!.approval!;
  const fields = Object.fromEntries(g.posts.map((p, i) => [`post_${i}`, `${p.id}:${p.version}`]));
  const commentPointer = `/groups/${index}/comment`;
  const by = authorText(first.requested_by);
  const asked = html`Asked by ${by}, ${localTime(first.requested_at, zone)}; to go out ${requestedWhenText(first, zone)}.`;
  const errors = new Map<string, string>();
  if (outcome?.form === "reject" && outcome.problems.length && !outcome.comment.trim())
    errors.set(commentPointer, "Say what should change.");
  return html`<section aria-labelledby="${titleId}" class="approval-group">
<h2 id="${titleId}">Group ${g.group}</h2>
${
  outcome && !errors.size
    ? html`<div class="errors" role="alert" aria-labelledby="${titleId}-errors"><h3 id="${titleId}-errors">There is a problem</h3>
<ul>${outcome.problems.map((p) => html`<li>${p}</li>`)}</ul></div>`
    : ""
}
${errors.size ? errorSummary(errors, null, { [commentPointer]: "What should change" }) : ""}
<p class="muted">${asked}</p>
${table({
  caption: `Posts of the group ${g.group} awaiting approval`,
  hideCaption: true,
  head: ["Post", "Network", "Goes out"],
  rows: g.posts.map((p) => [
    html`<a href="${postPath(ws.id, p.id)}">${excerpt(p)}</a>`,
    whereTo(p),
    requestedWhenText(p.approval!, zone),
  ]),
  empty: "",
})}
${
  mayApprove
    ? html`<div class="decisions">
${buttonForm({
  action: `/dashboard/workspaces/${ws.id}/approvals/approve`,
  csrf: r.csrf,
  label: g.posts.length === 1 ? "Approve" : `Approve all ${g.posts.length}`,
  hiddenLabel: ` the group ${g.group}`,
  fields: { group: g.group, ...fields },
  confirm: `Approve the group ${g.group}? Its posts go out as requested.`,
})}
${postForm(
  {
    action: `/dashboard/workspaces/${ws.id}/approvals/reject`,
    csrf: r.csrf,
    label: `Request changes to ${g.group}`,
  },
  html`<input type="hidden" name="group" value="${g.group}">${Object.entries(fields).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )}
${textarea({
  name: "comment",
  pointer: commentPointer,
  label: "What should change",
  rows: 2,
  required: true,
  maxlength: 5000,
  value: outcome?.form === "reject" ? outcome.comment : "",
  errors,
})}
<button type="submit" class="secondary">Request changes<span class="visually-hidden"> to the group ${g.group}</span></button>`,
)}</div>`
    : ""
}
</section>`;
}

/** The posts a group form names, as `post_<n>` = `<id>:<version>`. */
function postsOfForm(form: URLSearchParams): { id: string; version: number }[] {
  const posts: { id: string; version: number }[] = [];
  for (const [name, value] of form) {
    if (!/^post_\d+$/.test(name)) continue;
    const at = value.lastIndexOf(":");
    if (at > 0) posts.push({ id: value.slice(0, at), version: Number(value.slice(at + 1)) || 1 });
  }
  return posts;
}

/**
 * Approves a group, or requests changes to it: one API call per post (each idempotent under the
 * form's key and the post's id), then back to the view with a notice, or the view with what failed.
 */
async function decideGroup(
  r: DashboardRequest,
  form: URLSearchParams,
  decision: "approve" | "reject",
): Promise<Response> {
  const ws = r.workspace!;
  const group = form.get("group") ?? "";
  const comment = (form.get("comment") ?? "").trim();
  const posts = postsOfForm(form);
  const problems: string[] = [];
  let status = 200;
  if (decision === "reject" && !comment)
    return awaitingPage(r, {
      group,
      form: decision,
      status: 400,
      problems: ["Say what should change."],
      comment,
    });
  for (const post of posts) {
    const body =
      decision === "approve" ? { confirmed: true, version: post.version } : { confirmed: true, comment };
    const answer = await r.api.call(
      "POST",
      `/workspaces/${ws.id}/posts/${encodeURIComponent(post.id)}/${decision}`,
      {
        body,
        idempotencyKey: form.get("idempotency_key") ? `${form.get("idempotency_key")}-${post.id}` : undefined,
      },
    );
    if (answer.ok) continue;
    if (answer.status === 403)
      return r.message(403, "Not allowed", [
        answer.body?.detail ?? "Your role cannot approve posts.",
        html`<a href="/dashboard/workspaces/${ws.id}/approvals">Back to the posts awaiting approval</a>`,
      ]);
    status = Math.max(status, answer.status);
    const why = [...fieldErrorsOf(answer).values()].join("; ");
    problems.push(`${post.id}: ${answer.body?.detail ?? "refused"}${why ? ` (${why})` : ""}`);
  }
  if (problems.length === 0)
    return r.redirect(
      withNotice(
        `/dashboard/workspaces/${ws.id}/approvals`,
        "approvals",
        decision === "approve" ? "approved" : "changes-requested",
        { group },
      ),
    );
  return awaitingPage(r, { group, form: decision, status, problems, comment });
}
