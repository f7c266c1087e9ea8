// What the post page shows of approvals and review: the approval and its history, the comments with a
// form, approve / request-changes forms for those who may decide, and the group's review links.
import type { Static } from "@sinclair/typebox";
import { roleAllows } from "../../modules/account/roles.ts";
import { html, type Markup } from "../pages/html.ts";
import { localTime } from "../pages/time.ts";
import type { PostComment, ReviewLink } from "../routes/approvals-schemas.ts";
import type { FieldErrors } from "./api.ts";
import type { Listing, Post } from "./api-resources.ts";
import { postPath } from "./post-view.ts";
import type { DashboardRequest } from "./router.ts";
import { badge, buttonForm, postForm, select, table, textarea } from "./ui.ts";

/** A comment as the API answers it. */
export type Comment = Static<typeof PostComment>;
/** A review link as the API answers it. */
export type ReviewLinkResource = Static<typeof ReviewLink>;
type Approval = NonNullable<Post["approval"]>;

/** The pointers of the approval section's controls (the API's, prefixed where two forms share one). */
export const APPROVAL_POINTERS = {
  comment: "/comment",
  commentBody: "/body",
  expires: "/expires_in_days",
} as const;

/** How the error summary names them. */
export const APPROVAL_LABELS: Record<string, string> = {
  [APPROVAL_POINTERS.comment]: "What should change",
  [APPROVAL_POINTERS.commentBody]: "Comment",
  [APPROVAL_POINTERS.expires]: "Valid for",
};

const STATUS_TEXT: Record<Approval["status"], string> = {
  requested: "awaiting approval",
  approved: "approved",
  changes_requested: "changes requested",
};

/** An approval status as a badge. */
export function approvalBadge(status: Approval["status"]): Markup {
  return badge(STATUS_TEXT[status], status === "approved" ? "ok" : "warn");
}

/** Who did something, as a person reads it. */
export function authorText(author: { kind: string; name: string }): string {
  const kind = author.kind === "reviewer" ? "reviewer" : author.kind === "credential" ? "API key" : null;
  return kind ? `${author.name} (${kind})` : author.name;
}

/** What `requested_when` means, in the workspace's zone. */
export function requestedWhenText(approval: Approval, zone: string): Markup | string {
  if (approval.requested_when === "now") return "as soon as it is approved";
  if (approval.requested_when === "queue") return "the next free queue time after approval";
  return localTime(approval.requested_when, zone);
}

const STEP_TEXT: Record<Approval["status"], string> = {
  requested: "Approval requested by",
  approved: "Approved by",
  changes_requested: "Changes requested by",
};

/** What a form of this section sent back with problems. */
export interface ApprovalOutcome {
  form: "approve" | "reject" | "comment" | "review-link";
  status: number;
  errors: FieldErrors;
  /** What the API said that no control of the form shows. */
  problem: string | null;
  values: Record<string, string>;
}

/** The approval, comments and review links sections of a post's page. */
export async function approvalSections(
  r: DashboardRequest,
  post: Post,
  outcome?: ApprovalOutcome,
): Promise<Markup> {
  const ws = r.workspace!;
  const base = `/workspaces/${ws.id}`;
  const mayApprove = roleAllows(r.session.role, "posts:approve");
  const [comments, links] = await Promise.all([
    r.api.get<Listing<Comment>>(`${base}/posts/${encodeURIComponent(post.id)}/comments?limit=100`),
    mayApprove ? r.api.all<ReviewLinkResource>(`${base}/review-links`) : null,
  ]);
  const errorsOf = (form: ApprovalOutcome["form"]): FieldErrors =>
    outcome?.form === form ? outcome.errors : new Map();
  const valuesOf = (form: ApprovalOutcome["form"]) => (outcome?.form === form ? outcome.values : {});
  return html`${approvalSection(r, post, mayApprove, errorsOf, valuesOf)}
${commentsSection(r, post, comments.ok ? comments.body.data : [], errorsOf("comment"), valuesOf("comment"))}
${mayApprove && links?.ok ? reviewLinksSection(r, post, links.body, errorsOf("review-link")) : ""}`;
}

function approvalSection(
  r: DashboardRequest,
  post: Post,
  mayApprove: boolean,
  errorsOf: (form: ApprovalOutcome["form"]) => FieldErrors,
  valuesOf: (form: ApprovalOutcome["form"]) => Record<string, string>,
): Markup {
  const approval = post.approval;
  if (!approval) return html``;
  const zone = r.workspace!.timeZone;
  const awaiting = approval.status === "requested" && post.state === "draft";
  const action = postPath(r.workspace!.id, post.id);
  return html`<section aria-labelledby="approval-title">
<h2 id="approval-title">Approval</h2>
<p>${approvalBadge(approval.status)} Requested to go out ${requestedWhenText(approval, zone)}.</p>
<ol class="plain approval-history">${approval.history.map(
    (step) => html`<li>${STEP_TEXT[step.status]} ${authorText(step.by)}, ${localTime(step.at, zone)}</li>`,
  )}</ol>
${
  awaiting && mayApprove
    ? html`<div class="decisions">
<section aria-labelledby="approve-title"><h3 id="approve-title">Approve</h3>
<p>Approving sends it out ${requestedWhenText(approval, zone)}.</p>
${buttonForm({
  action: `${action}/approve`,
  csrf: r.csrf,
  label: "Approve the post",
  fields: { version: String(post.version) },
  confirm: "Approve this post? It goes out as requested.",
})}</section>
<section aria-labelledby="reject-title"><h3 id="reject-title">Request changes</h3>
${postForm(
  { action: `${action}/reject`, csrf: r.csrf, label: "Request changes" },
  html`${textarea({
    name: "comment",
    pointer: APPROVAL_POINTERS.comment,
    label: "What should change",
    hint: "The author sees this among the comments.",
    required: true,
    maxlength: 5000,
    value: valuesOf("reject").comment ?? "",
    errors: errorsOf("reject"),
  })}
<button type="submit" class="secondary">Request changes</button>`,
)}</section></div>`
    : awaiting
      ? html`<p class="muted">An owner or admin approves it or requests changes.</p>`
      : ""
}
</section>`;
}

function commentsSection(
  r: DashboardRequest,
  post: Post,
  comments: Comment[],
  errors: FieldErrors,
  values: Record<string, string>,
): Markup {
  const zone = r.workspace!.timeZone;
  // The API lists newest first; a conversation reads oldest first.
  const inOrder = [...comments].reverse();
  return html`<section aria-labelledby="comments-title">
<h2 id="comments-title">Comments</h2>
${
  inOrder.length
    ? html`<ol class="plain comments">${inOrder.map(
        (c) => html`<li><p class="post-text">${c.body}</p>
<p class="muted">${authorText(c.author)}, ${localTime(c.created_at, zone)}</p></li>`,
      )}</ol>`
    : html`<p class="muted">No comments yet.</p>`
}
${
  roleAllows(r.session.role, "posts:write")
    ? postForm(
        { action: `${postPath(r.workspace!.id, post.id)}/comments`, csrf: r.csrf, label: "Add a comment" },
        html`${textarea({
          name: "body",
          pointer: APPROVAL_POINTERS.commentBody,
          label: "Comment",
          required: true,
          maxlength: 5000,
          rows: 3,
          value: values.body ?? "",
          errors,
        })}
<button type="submit" class="secondary">Add the comment</button>`,
      )
    : ""
}
</section>`;
}

function reviewLinksSection(
  r: DashboardRequest,
  post: Post,
  links: ReviewLinkResource[],
  errors: FieldErrors,
): Markup {
  const zone = r.workspace!.timeZone;
  const now = Date.now();
  const action = postPath(r.workspace!.id, post.id);
  const ofGroup = links.filter((l) => l.group === post.group);
  return html`<section aria-labelledby="review-links-title">
<h2 id="review-links-title">Review links</h2>
<p>A review link lets someone outside the account (a client) see the posts of the group ${post.group} and
approve them or request changes, without signing in. Its address is shown once, when it is created.</p>
${table({
  caption: `Review links of the group ${post.group}`,
  head: ["Created", "By", "Expires", "Action"],
  rows: ofGroup.map((l) => [
    localTime(l.created_at, zone),
    authorText(l.created_by),
    Date.parse(l.expires_at) <= now
      ? html`expired ${localTime(l.expires_at, zone)}`
      : localTime(l.expires_at, zone),
    buttonForm({
      action: `${action}/review-links/${encodeURIComponent(l.id)}/delete`,
      csrf: r.csrf,
      label: "Delete",
      hiddenLabel: ` the review link created ${l.created_at}`,
      danger: true,
      confirm: "Delete this review link? Whoever has it can no longer open it.",
    }),
  ]),
  empty: "No review link for this group.",
})}
${postForm(
  { action: `${action}/review-links`, csrf: r.csrf, label: "Create a review link" },
  html`${select({
    name: "expires_in_days",
    pointer: APPROVAL_POINTERS.expires,
    label: "Valid for",
    options: [
      ["30", "30 days"],
      ["14", "14 days"],
      ["7", "7 days"],
      ["1", "1 day"],
    ],
    value: "30",
    errors,
  })}
<button type="submit" class="secondary">Create a review link</button>`,
)}
</section>`;
}
