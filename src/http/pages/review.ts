// The review page a client opens from a review link (/review/{token}): each post of the group as its
// network will show it, then two plain forms, "Approve" and "Request changes". No sign-in, no script.
import { PREVIEW_CSS } from "../previews/index.ts";
import { html, type Markup } from "./html.ts";
import { csrfField, errorSummary, PAGE_CSS_PATH } from "./layout.ts";
import { zonedTime } from "./time.ts";

/** The review page's own stylesheet (the previews' and the page's layout), beside the pages' one. */
export const REVIEW_CSS_PATH = "/pages/review.css";

export const REVIEW_CSS = `${PREVIEW_CSS}
main.review { max-width: 44rem; }
.review-post { border-top: 1px solid var(--line); padding-top: 1rem; margin-top: 1.5rem; }
.review-post h2 { margin-top: 0; }
.review-forms { display: grid; gap: 1.5rem; margin-top: 2rem; border-top: 1px solid var(--line); padding-top: 1rem; }
.review-forms form { border: 1px solid var(--line); border-radius: .5rem; padding: 1rem; }
.review-forms h2 { margin-top: 0; }
.review-forms textarea {
  display: block; width: 100%; margin-top: .35rem; padding: .55rem .65rem; font: inherit; color: var(--fg);
  background: var(--bg); border: 1px solid var(--muted); border-radius: .375rem; min-height: 6rem;
}
.status-line { font-weight: 600; }
`;

/** A post of the group as the page shows it. */
export interface ReviewPostView {
  /** "Bluesky · Ada's account". */
  title: string;
  /** "Awaiting approval", "Approved", "Changes requested", or the post's state when never sent for approval. */
  status: string;
  preview: Markup;
}

/** The result of a form, said at the top of the page. */
export interface ReviewNotice {
  tone: "ok" | "warn";
  title: string;
  lines: string[];
}

export interface ReviewView {
  workspaceName: string;
  expiresAt: number;
  posts: ReviewPostView[];
  /** How many posts await approval (what "Approve" would approve). */
  awaiting: number;
  csrf: string;
  /** `/review/{token}`: the forms post to `<base>/approve` and `<base>/request-changes`. */
  action: string;
  notice: ReviewNotice | null;
  /** What a sent-back "Request changes" form held, with its error. */
  changes: { name: string; comment: string; error: string | null };
}

function textField(id: string, name: string, label: string, value: string, hint: string): Markup {
  return html`<div class="field"><label for="${id}">${label}</label><p class="hint" id="${id}-hint">${hint}</p>
<input id="${id}" name="${name}" type="text" value="${value}" maxlength="100" autocomplete="name"
 aria-describedby="${id}-hint"></div>`;
}

function commentField(spec: {
  id: string;
  label: string;
  value: string;
  hint: string;
  required: boolean;
  error: string | null;
}): Markup {
  const describedBy = [`${spec.id}-hint`, spec.error ? `${spec.id}-error` : ""].filter(Boolean).join(" ");
  const hint = html`<p class="hint" id="${spec.id}-hint">${spec.hint}</p>`;
  return html`<div class="field"><label for="${spec.id}">${spec.label}</label>${hint}
${spec.error ? html`<p class="error" id="${spec.id}-error">${spec.error}</p>` : null}
<textarea id="${spec.id}" name="comment" rows="4" maxlength="5000"
 aria-describedby="${describedBy}"${spec.required ? html` required` : null}${
   spec.error ? html` aria-invalid="true"` : null
 }>${spec.value}</textarea></div>`;
}

function notice(n: ReviewNotice): Markup {
  return html`<div class="notice ${n.tone}" role="status"><p><strong>${n.title}</strong></p>${n.lines.map(
    (line) => html`<p>${line}</p>`,
  )}</div>`;
}

/** The whole review page. */
export function reviewPage(view: ReviewView): string {
  const approveHint =
    view.awaiting === 0
      ? "No post is waiting for approval now; a comment still reaches the team."
      : view.awaiting === 1
        ? "Approves the post waiting for approval, which then goes out as planned."
        : `Approves the ${view.awaiting} posts waiting for approval, which then go out as planned.`;
  const approveComment = commentField({
    id: "approve-comment",
    label: "Comment (optional)",
    value: "",
    hint: "Up to 5,000 characters.",
    required: false,
    error: null,
  });
  const content = html`<h1>Review posts for ${view.workspaceName}</h1>
${view.notice ? notice(view.notice) : null}
${errorSummary(view.changes.error ? [{ field: "changes-comment", message: `Comment: ${view.changes.error}` }] : [])}
<p>These are previews of posts that are not published yet, as each network will show them. Approve them, or
ask for changes with a comment. This link works until ${zonedTime(new Date(view.expiresAt).toISOString())}.</p>
${view.posts.map(
  (p, i) => html`<section class="review-post" aria-labelledby="post-${i}-title">
<h2 id="post-${i}-title">${p.title}</h2>
<p class="status-line">${p.status}</p>
${p.preview}
</section>`,
)}
<div class="review-forms">
<form method="post" action="${view.action}/approve" aria-labelledby="approve-title" novalidate>
<h2 id="approve-title">Approve</h2>
<p class="hint">${approveHint}</p>
${csrfField(view.csrf)}
${textField("approve-name", "name", "Your name (optional)", "", "Shown to the team with your approval.")}
${approveComment}
<div class="actions"><button type="submit">Approve</button></div>
</form>
<form method="post" action="${view.action}/request-changes" aria-labelledby="changes-title" novalidate>
<h2 id="changes-title">Request changes</h2>
<p class="hint">The posts waiting for approval go back to the team with your comment.</p>
${csrfField(view.csrf)}
${textField("changes-name", "name", "Your name (optional)", view.changes.name, "Shown to the team with your comment.")}
${commentField({
  id: "changes-comment",
  label: "What should change",
  value: view.changes.comment,
  hint: "Required. Up to 5,000 characters.",
  required: true,
  error: view.changes.error,
})}
<div class="actions"><button type="submit">Request changes</button></div>
</form>
</div>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>Review posts · Herald</title>
<link rel="stylesheet" href="${PAGE_CSS_PATH}">
<link rel="stylesheet" href="${REVIEW_CSS_PATH}">
</head>
<body>
<header><span class="brand">Herald</span></header>
<main id="main" class="review">
${content}
</main>
</body>
</html>
`.text;
}
