import { roleAllows } from "../../modules/account/roles.ts";
import { localTime } from "../pages/time.ts";
import { html, type Markup } from "../pages/html.ts";
import type { Post } from "./api-resources.ts";
import { postPath } from "./post-view.ts";
import type { DashboardRequest } from "./router.ts";
import { buttonForm } from "./ui.ts";

/**
 * A post's recycling on its page: an original shows its plan, the copies published, and the next
 * copy (a link, and a button that cancels it, which stops the chain); a copy links to its original.
 */
export function recyclingSection(r: DashboardRequest, post: Post): Markup {
  const ws = r.workspace!;
  if (post.recycled_from)
    return html`<h2>Recycling</h2>
<p>Copy ${String(post.recycle_number ?? "")} of an <a href="${postPath(ws.id, post.recycled_from)}">evergreen post</a>.
Cancelling this copy stops the copies after it.</p>`;
  const plan = post.recycle;
  if (!plan) return html``;
  const days = plan.every_days === 1 ? "day" : `${plan.every_days} days`;
  const variations = plan.variations.length
    ? html`<p>Copies take these texts in turn:</p>
<ol>${plan.variations.map((items) => html`<li><p class="post-text">${items.join("\n\n")}</p></li>`)}</ol>`
    : html`<p>Copies repeat this post's text.</p>`;
  const next = plan.next_copy_id
    ? html`<p>Next copy: <a href="${postPath(ws.id, plan.next_copy_id)}">${localTime(
        plan.next_copy_at,
        ws.timeZone,
      )}</a></p>
${
  roleAllows(r.session.role, "posts:write")
    ? buttonForm({
        action: `${postPath(ws.id, plan.next_copy_id)}/cancel`,
        csrf: r.csrf,
        label: "Stop recycling",
        hiddenLabel: " (cancel the next copy)",
        danger: true,
      })
    : ""
}`
    : html`<p>${
        post.state === "published"
          ? "No copy is waiting."
          : "The first copy is scheduled once this post is published."
      }</p>`;
  return html`<h2>Recycling</h2>
<p>${String(plan.count)} ${plan.count === 1 ? "copy" : "copies"}, one every ${days} after the publication before;
${String(plan.copies_published)} published.</p>
${variations}
${next}`;
}
