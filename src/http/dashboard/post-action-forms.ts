import { roleAllows } from "../../modules/account/roles.ts";
import { html, type Markup } from "../pages/html.ts";
import type { FieldErrors } from "./api.ts";
import type { ActionOutcome } from "./post-detail.ts";
import type { Post } from "./api-resources.ts";
import { postPath, toLocalInput } from "./post-view.ts";
import type { DashboardRequest } from "./router.ts";
import { buttonForm, choices, fieldId, input, postForm, select } from "./ui.ts";

/**
 * The pointers of the action forms' controls (the API's error pointers, except the reschedule form's
 * acknowledgement, moved under /reschedule so it does not share an id with the retry form's).
 */
export const ACTION_POINTERS = {
  scheduledAt: "/scheduled_at",
  retryAck: "/acknowledge_duplicate_risk",
  rescheduleAck: "/reschedule/acknowledge_duplicate_risk",
  destination: "/posts/0/destination_id",
  when: "/when",
} as const;

/** How the error summary names each control. */
export const ACTION_LABELS: Record<string, string> = {
  [ACTION_POINTERS.scheduledAt]: "New time",
  [ACTION_POINTERS.retryAck]: "Duplicate risk",
  [ACTION_POINTERS.rescheduleAck]: "Duplicate risk",
  [ACTION_POINTERS.destination]: "Destination",
  [ACTION_POINTERS.when]: "Time",
};

/** States where rescheduling sends the post again (so, like retry, it may need the acknowledgement). */
const RESENDING_STATES = ["failed", "needs-attention", "missed"];

/** The forms of the actions the post's state allows, for a person whose role may change posts. */
export function actionForms(
  r: DashboardRequest,
  post: Post,
  etag: string,
  destinations: { id: string; channel: string; display_name: string }[],
  outcome?: ActionOutcome,
): Markup {
  const actions = post.available_actions.filter((a) => a !== "update" && a !== "move");
  if (actions.length === 0) return html``;
  if (!roleAllows(r.session.role, "posts:write"))
    return html`<p class="muted">Your role can read posts but not change them.</p>`;
  const action = `${postPath(r.workspace!.id, post.id)}`;
  const errorsOf = (form: string): FieldErrors => (outcome?.form === form ? outcome.errors : new Map());
  const valuesOf = (form: string): Record<string, string> => (outcome?.form === form ? outcome.values : {});
  const unsafe = post.retry_safety === "unsafe";
  const zone = r.workspace!.timeZone;
  const parts: Markup[] = [];
  if (actions.includes("publish")) parts.push(publishForm(r, post, destinations, errorsOf, valuesOf));
  if (actions.includes("retry"))
    parts.push(html`<section aria-labelledby="retry-title"><h3 id="retry-title">Send again</h3>
${postForm(
  { action: `${action}/retry`, csrf: r.csrf },
  html`${unsafe ? acknowledgement(ACTION_POINTERS.retryAck, errorsOf("retry")) : ""}
<button type="submit">Send again now</button>`,
)}</section>`);
  if (actions.includes("reschedule")) {
    const values = valuesOf("reschedule");
    const needsAck = unsafe && RESENDING_STATES.includes(post.state);
    parts.push(html`<section aria-labelledby="reschedule-title">
<h3 id="reschedule-title">Move to a new time</h3>
${postForm(
  { action: `${action}/reschedule`, csrf: r.csrf },
  html`${input({
    name: "scheduled_at",
    pointer: ACTION_POINTERS.scheduledAt,
    label: `New time (${zone})`,
    type: "datetime-local",
    value: values.scheduled_at ?? toLocalInput(post.scheduled_at, zone),
    required: true,
    errors: errorsOf("reschedule"),
  })}
${needsAck ? acknowledgement(ACTION_POINTERS.rescheduleAck, errorsOf("reschedule")) : ""}
<button type="submit">Move the post</button>`,
)}</section>`);
  }
  if (actions.includes("cancel"))
    parts.push(html`<section aria-labelledby="cancel-title"><h3 id="cancel-title">Cancel</h3>
<p>The post will not go out; this cannot be undone.</p>
${buttonForm({ action: `${action}/cancel`, csrf: r.csrf, label: "Cancel the post", danger: true })}
</section>`);
  if (actions.includes("delete"))
    parts.push(html`<section aria-labelledby="delete-title"><h3 id="delete-title">Delete the draft</h3>
${buttonForm({
  action: `${action}/delete`,
  csrf: r.csrf,
  label: "Delete the draft",
  danger: true,
  // The draft as this page showed it: a changed draft is not deleted unseen (412).
  fields: { etag },
})}</section>`);
  return html`<h2>Actions</h2>${parts}`;
}

/**
 * The required "I checked" box of sending again a post whose last outcome is unknown; the API's
 * error for it is shown right here.
 */
function acknowledgement(pointer: string, errors: FieldErrors): Markup {
  const id = fieldId(pointer);
  const error = errors.get(pointer);
  return html`<div class="field">
${error ? html`<p class="error" id="${id}-error">${error}</p>` : ""}
<div class="choice"><input id="${id}" type="checkbox" name="acknowledge_duplicate_risk" value="yes" required${
    error ? html` aria-describedby="${id}-error" aria-invalid="true"` : ""
  }> <label for="${id}">I checked the network: send it even if that makes a duplicate.</label></div>
</div>`;
}

/** Publish a draft now or at a time, to a destination of its network. */
function publishForm(
  r: DashboardRequest,
  post: Post,
  destinations: { id: string; channel: string; display_name: string }[],
  errorsOf: (form: string) => FieldErrors,
  valuesOf: (form: string) => Record<string, string>,
): Markup {
  const ws = r.workspace!;
  const usable = destinations.filter((d) => d.channel === post.channel);
  if (usable.length === 0)
    return html`<section aria-labelledby="publish-title"><h3 id="publish-title">Publish</h3>
<p>Connect a ${post.channel} destination to publish this draft:
<a href="/dashboard/workspaces/${ws.id}/destinations">Destinations</a>.</p></section>`;
  const values = valuesOf("publish");
  const errors = errorsOf("publish");
  return html`<section aria-labelledby="publish-title"><h3 id="publish-title">Publish</h3>
${postForm(
  { action: `${postPath(ws.id, post.id)}/publish`, csrf: r.csrf },
  html`<input type="hidden" name="version" value="${String(post.version)}">
${select({
  name: "destination_id",
  pointer: ACTION_POINTERS.destination,
  label: "Destination",
  options: usable.map((d) => [d.id, d.display_name]),
  value: values.destination_id ?? post.destination_id ?? usable[0]!.id,
  errors,
})}
${choices({
  name: "when_mode",
  pointer: "/when_mode",
  legend: "When",
  type: "radio",
  options: [
    { value: "now", label: "Now" },
    { value: "at", label: "At a time" },
  ],
  checked: [values.when_mode === "at" ? "at" : "now"],
})}
${input({
  name: "when_at",
  pointer: ACTION_POINTERS.when,
  label: `Time (${ws.timeZone})`,
  hint: "Only when you choose At a time.",
  type: "datetime-local",
  value: values.when_at ?? "",
  errors,
})}
<button type="submit">Publish</button>`,
)}</section>`;
}
