import { html } from "../pages/html.ts";
import { type ApiAnswer, type FieldErrors, fieldErrorsOf, problemOf } from "./api.ts";
import type { WebhookEndpoint, WebhookEndpointWithSecret } from "./api-resources.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { deliveryLog } from "./webhook-deliveries.ts";
import {
  destinationChoices,
  endpointStatus,
  endpointsApi,
  refused,
  secretOnce,
  webhooksPath,
} from "./webhook-common.ts";
import {
  endpointFormValues,
  EVENT_TYPE_MEANINGS,
  WEBHOOK_FIELD_LABELS,
  webhookBody,
  webhookFields,
  type WebhookFormValues,
  webhookFormValues,
} from "./webhook-form.ts";
import { buttonForm, errorSummary, postForm } from "./ui.ts";
import { localTime } from "../pages/time.ts";
import { type NoticeOf, notice, withNotice } from "./notices.ts";

const BASE = "/dashboard/workspaces/:workspace_id/webhooks/:endpoint_id";

/** A settings form that came back: what it held and the API's problems. */
interface SettingsFailure {
  values: WebhookFormValues;
  errors: FieldErrors;
  answer: ApiAnswer<unknown>;
}

const pagePath = (r: DashboardRequest) => `${webhooksPath(r)}/${encodeURIComponent(r.params.endpoint_id!)}`;
const apiPath = (r: DashboardRequest) => `${endpointsApi(r)}/${encodeURIComponent(r.params.endpoint_id!)}`;
const key = (form: URLSearchParams) => form.get("idempotency_key") ?? undefined;

/**
 * `…/webhooks/:endpoint_id`: the endpoint's settings, enable/disable, a new secret, a test event,
 * deleting it, and its delivery log with redelivery.
 */
export function webhookEndpointPages(routes: DashboardRoutes): void {
  routes
    .page(BASE, (r) => endpointPage(r, null))
    .form(BASE, async (r, form) => {
      const values = webhookFormValues(form);
      const answer = await r.api.call("PATCH", apiPath(r), {
        body: webhookBody(values),
        ifMatch: form.get("etag") || undefined,
      });
      if (answer.status === 403 || answer.status === 404) return refused(r, answer);
      if (!answer.ok) return endpointPage(r, { values, errors: fieldErrorsOf(answer), answer });
      return r.redirect(withNotice(pagePath(r), "webhook-endpoint", "saved"));
    })
    .form(`${BASE}/enable`, (r) => act(r, "PATCH", "", { enabled: true }, "enabled"))
    .form(`${BASE}/disable`, (r) => act(r, "PATCH", "", { enabled: false }, "disabled"))
    .form(`${BASE}/test`, (r, form) => act(r, "POST", "/test", {}, "test_sent", key(form)))
    .form(`${BASE}/deliveries/:delivery_id/redeliver`, (r, form) => {
      const delivery = `/deliveries/${encodeURIComponent(r.params.delivery_id!)}/redeliver`;
      return act(r, "POST", delivery, {}, "redelivered", key(form));
    })
    .form(`${BASE}/delete`, async (r, form) => {
      const answer = await r.api.call("DELETE", apiPath(r), { idempotencyKey: key(form) });
      if (!answer.ok) return refused(r, answer, pagePath(r));
      return r.redirect(withNotice(webhooksPath(r), "webhooks", "deleted"));
    })
    .form(`${BASE}/rotate-secret`, async (r, form) => {
      const answer = await r.api.call<WebhookEndpointWithSecret>("POST", `${apiPath(r)}/rotate-secret`, {
        body: {},
        idempotencyKey: key(form),
      });
      if (!answer.ok) return refused(r, answer, pagePath(r));
      if (answer.headers.get("idempotent-replayed") === "true")
        return r.message(200, "The secret was already rotated", [
          "This form was sent before; the new secret was shown then and is not shown again.",
          html`<a href="${pagePath(r)}">Back to the endpoint</a>`,
        ]);
      const endpoint = answer.body;
      return r.render(
        "New signing secret",
        html`<h1>New signing secret</h1>
${secretOnce(endpoint.secret, `The new signing secret of “${endpoint.name}”`)}
<p>Until ${localTime(endpoint.previous_secret_expires_at, r.workspace!.timeZone)} every delivery carries
a signature with the old secret too, so the receiver can switch over without missing events.</p>
<p><a href="${pagePath(r)}">Back to the endpoint</a></p>`,
        { section: "webhooks" },
      );
    });
}

/** One action on the endpoint through the API, then back to its page with a notice. */
async function act(
  r: DashboardRequest,
  method: "PATCH" | "POST",
  suffix: string,
  body: Record<string, unknown>,
  outcome: NoticeOf<"webhook-endpoint">,
  idempotencyKey?: string,
): Promise<Response> {
  const answer = await r.api.call(method, `${apiPath(r)}${suffix}`, { body, idempotencyKey });
  if (!answer.ok) return refused(r, answer, pagePath(r));
  return r.redirect(withNotice(pagePath(r), "webhook-endpoint", outcome));
}

/** The endpoint's page; a settings form that came back is shown with its values and problems. */
async function endpointPage(r: DashboardRequest, failure: SettingsFailure | null): Promise<Response> {
  const got = await r.api.get<WebhookEndpoint>(apiPath(r));
  if (!got.ok) return refused(r, got);
  const e = got.body;
  const tz = r.workspace!.timeZone;
  const canWrite = r.actor.scopes.includes("webhooks:write");
  const events = e.event_types.map(
    (t) => html`${t} <span class="muted">(${EVENT_TYPE_MEANINGS[t]})</span><br>`,
  );
  const summary = failure ? settingsSummary(failure) : "";
  const actions = canWrite ? await endpointActions(r, e, got.headers.get("etag") ?? "", failure) : "";
  return r.render(
    e.name,
    html`<p><a href="${webhooksPath(r)}">Webhooks</a></p>
<h1>${e.name}</h1>
${summary}
${notice(r.query, "webhook-endpoint")}
<dl>
<dt>URL</dt><dd><code>${e.url}</code></dd>
<dt>Status</dt><dd>${endpointStatus(e)}</dd>
<dt>Events</dt><dd>${events}</dd>
<dt>Posts on</dt><dd>${
      e.destination_filter_mode === "all"
        ? "Every destination"
        : `${e.destination_ids.length} selected destination(s)`
    }</dd>
<dt>Content</dt><dd>${
      e.content_mode === "full" ? "Full (with the post's headline and body)" : "Metadata"
    }</dd>
<dt>Signing secret</dt><dd>Ends in <code>${e.secret_last_four}</code>${
      e.previous_secret_expires_at
        ? html`; the previous one signs too until ${localTime(e.previous_secret_expires_at, tz)}`
        : ""
    }</dd>
<dt>Created</dt><dd>${localTime(e.created_at, tz)}</dd>
</dl>
${actions}
${await deliveryLog(r, e, canWrite)}`,
    { section: "webhooks", status: failure?.answer.status ?? 200 },
  );
}

/** The settings form's summary when it came back: a stale version, its field problems, or the API's refusal. */
function settingsSummary(failure: SettingsFailure) {
  const stale = failure.answer.status === 412;
  return errorSummary(
    failure.errors,
    stale
      ? "The endpoint changed since this page was opened: check the settings below and save again."
      : failure.errors.size
        ? null
        : problemOf(failure.answer)?.detail,
    WEBHOOK_FIELD_LABELS,
  );
}

/**
 * What a person who may write webhooks sees: test, enable or disable, rotate, delete, and the settings
 * form (the values that came back, else the endpoint's) carrying the version shown (`etag`).
 */
async function endpointActions(
  r: DashboardRequest,
  e: WebhookEndpoint,
  etag: string,
  failure: SettingsFailure | null,
) {
  const at = pagePath(r);
  const values = failure?.values ?? endpointFormValues(e);
  return html`<h2>Actions</h2>
<div class="actions">
${e.enabled ? buttonForm({ action: `${at}/test`, csrf: r.csrf, label: "Send a test event" }) : ""}
${
  e.enabled
    ? buttonForm({ action: `${at}/disable`, csrf: r.csrf, label: "Disable", secondary: true })
    : buttonForm({ action: `${at}/enable`, csrf: r.csrf, label: "Enable" })
}
${buttonForm({
  action: `${at}/rotate-secret`,
  csrf: r.csrf,
  label: "Rotate the secret",
  secondary: true,
  confirm: "Make a new signing secret? The current one keeps signing for 24 hours, then stops.",
})}
${buttonForm({
  action: `${at}/delete`,
  csrf: r.csrf,
  label: "Delete the endpoint",
  danger: true,
  confirm: `Delete “${e.name}” and its delivery log? No more events are sent to it.`,
})}
</div>
<h2>Settings</h2>
${postForm(
  { action: at, csrf: r.csrf, label: "Endpoint settings" },
  // The version this page shows: saving over someone else's later change is refused (412), not lost.
  html`<input type="hidden" name="etag" value="${etag}">
${webhookFields(values, failure?.errors ?? new Map(), await destinationChoices(r))}
<button type="submit">Save settings</button>`,
)}`;
}
