import { html } from "../pages/html.ts";
import { type ApiAnswer, type FieldErrors, fieldErrorsOf } from "./api.ts";
import { ACTION_POINTERS } from "./post-action-forms.ts";
import { renderPostDetail } from "./post-detail.ts";
import { fromLocalInput, postPath } from "./post-view.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { withNotice } from "./notices.ts";

const POST = "/dashboard/workspaces/:workspace_id/posts/:post_id";

/**
 * The POST forms of a post's page. Each calls the API's verb as the person (so the state rules,
 * scopes and idempotency are the API's) and answers 303 back to the post with a notice, or shows the
 * page again with the API's errors next to the controls they point to.
 */
export function postActionForms(routes: DashboardRoutes): void {
  routes
    .form(`${POST}/cancel`, async (r, form) => {
      const answer = await verb(r, form, "cancel", { confirmed: true });
      return answer.ok
        ? r.redirect(withNotice(detail(r), "post", "cancelled"))
        : refused(r, answer, "cancel", {});
    })
    .form(`${POST}/retry`, async (r, form) => {
      const body = { confirmed: true, ...acknowledged(form) };
      const answer = await verb(r, form, "retry", body);
      return answer.ok
        ? r.redirect(withNotice(detail(r), "post", "retried"))
        : refused(r, answer, "retry", {});
    })
    .form(`${POST}/reschedule`, async (r, form) => {
      const local = form.get("scheduled_at") ?? "";
      const values = { scheduled_at: local };
      const scheduledAt = fromLocalInput(local, r.workspace!.timeZone);
      if ("problem" in scheduledAt)
        return invalidInput(r, "reschedule", ACTION_POINTERS.scheduledAt, scheduledAt.problem, values);
      const body = { confirmed: true, scheduled_at: scheduledAt.iso, ...acknowledged(form) };
      const answer = await verb(r, form, "reschedule", body);
      return answer.ok
        ? r.redirect(withNotice(detail(r), "post", "rescheduled"))
        : refused(r, answer, "reschedule", values);
    })
    .form(`${POST}/publish`, async (r, form) => {
      const values = {
        destination_id: form.get("destination_id") ?? "",
        when_mode: form.get("when_mode") === "at" ? "at" : "now",
        when_at: form.get("when_at") ?? "",
      };
      let when = "now";
      if (values.when_mode === "at") {
        const at = fromLocalInput(values.when_at, r.workspace!.timeZone);
        if ("problem" in at) return invalidInput(r, "publish", ACTION_POINTERS.when, at.problem, values);
        when = at.iso;
      }
      if (!values.destination_id)
        return invalidInput(r, "publish", ACTION_POINTERS.destination, "Choose a destination.", values);
      const answer = await r.api.call("POST", `/workspaces/${r.workspace!.id}/posts/publish`, {
        idempotencyKey: form.get("idempotency_key") ?? undefined,
        body: {
          confirmed: true,
          when,
          posts: [
            {
              id: r.params.post_id!,
              version: Number(form.get("version")) || 1,
              destination_id: values.destination_id,
            },
          ],
        },
      });
      if (!answer.ok) return refused(r, answer, "publish", values);
      // 202 without provider work under way: the workspace requires approval and the draft awaits it.
      const awaiting = answer.status === 202 && !answer.headers.get("retry-after");
      const sent = awaiting ? "sent-for-approval" : when === "now" ? "published" : "scheduled";
      return r.redirect(withNotice(detail(r), "post", sent));
    })
    .form(`${POST}/delete`, async (r, form) => {
      const answer = await r.api.call("DELETE", apiPath(r), {
        idempotencyKey: form.get("idempotency_key") ?? undefined,
        ifMatch: form.get("etag") || undefined,
      });
      if (!answer.ok) return refused(r, answer, "delete", {});
      return r.redirect(
        withNotice(`/dashboard/workspaces/${r.workspace!.id}/posts?view=drafts`, "posts", "deleted"),
      );
    });
}

const detail = (r: DashboardRequest) => postPath(r.workspace!.id, r.params.post_id!);
const apiPath = (r: DashboardRequest) =>
  `/workspaces/${r.workspace!.id}/posts/${encodeURIComponent(r.params.post_id!)}`;

/** The acknowledgement of a possible duplicate, sent only when the box was ticked. */
function acknowledged(form: URLSearchParams): { acknowledge_duplicate_risk?: true } {
  return form.get("acknowledge_duplicate_risk") === "yes" ? { acknowledge_duplicate_risk: true } : {};
}

function verb(r: DashboardRequest, form: URLSearchParams, name: string, body: unknown): Promise<ApiAnswer> {
  return r.api.call("POST", `${apiPath(r)}/${name}`, {
    body,
    idempotencyKey: form.get("idempotency_key") ?? undefined,
  });
}

/** A value the page could not turn into a request: the form again, the problem next to its control. */
function invalidInput(
  r: DashboardRequest,
  form: string,
  pointer: string,
  detail: string,
  values: Record<string, string>,
): Promise<Response> {
  return renderPostDetail(r, {
    form,
    status: 400,
    errors: new Map([[pointer, detail]]),
    fallback: null,
    values,
  });
}

/** Pointers of each form's controls, as the API names them → as the page names them. */
const FORM_POINTERS: Record<string, Record<string, string>> = {
  retry: { "/acknowledge_duplicate_risk": ACTION_POINTERS.retryAck },
  reschedule: {
    "/scheduled_at": ACTION_POINTERS.scheduledAt,
    "/acknowledge_duplicate_risk": ACTION_POINTERS.rescheduleAck,
  },
  publish: {
    "/when": ACTION_POINTERS.when,
    "/posts/0/destination_id": ACTION_POINTERS.destination,
  },
};

/**
 * What the API refused. No right (403) or no post (404) is a message page; anything else shows the
 * post again with the problem: errors of the form's own controls next to them, the rest in the summary.
 */
function refused(
  r: DashboardRequest,
  answer: ApiAnswer,
  form: string,
  values: Record<string, string>,
): Promise<Response> | Response {
  const detailText: string =
    answer.body?.detail ?? answer.body?.title ?? "The request could not be completed.";
  if (answer.status === 403)
    return r.message(403, "Not allowed", [detailText, html`<a href="${detail(r)}">Back to the post</a>`]);
  if (answer.status === 404)
    return r.message(404, "Post not found", [
      "It does not exist in this workspace, or it was a draft that was deleted.",
      html`<a href="/dashboard/workspaces/${r.workspace!.id}/posts">Back to the posts</a>`,
    ]);
  const known = FORM_POINTERS[form] ?? {};
  const errors: FieldErrors = new Map();
  const elsewhere: string[] = [];
  for (const [pointer, text] of fieldErrorsOf(answer)) {
    const mine = known[pointer];
    if (mine) errors.set(mine, text);
    else elsewhere.push(pointer ? `${pointer}: ${text}` : text);
  }
  const fallback =
    answer.status === 412
      ? "The post changed since this page was opened. Check it below and try again."
      : [detailText, ...elsewhere].join(" ");
  return renderPostDetail(r, { form, status: answer.status, errors, fallback, values });
}
