import { html, type Markup } from "../pages/html.ts";
import { type ApiAnswer, type FieldErrors, fieldErrorsOf, problemOf } from "./api.ts";
import {
  DELIVERY_TONE,
  deliveryOutcome,
  destinationChoices,
  endpointStatus,
  endpointsApi,
  refused,
  secretOnce,
  webhooksPath,
} from "./webhook-common.ts";
import type {
  Listing,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from "./api-resources.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { webhookEndpointPages } from "./webhook-endpoint.ts";
import {
  EMPTY_WEBHOOK_FORM,
  WEBHOOK_FIELD_LABELS,
  webhookBody,
  webhookFields,
  type WebhookFormValues,
  webhookFormValues,
} from "./webhook-form.ts";
import { badge, errorSummary, pager, postForm, table } from "./ui.ts";
import { localTime } from "../pages/time.ts";
import { notice } from "./notices.ts";

const BASE = "/dashboard/workspaces/:workspace_id/webhooks";

/** `…/webhooks`: the endpoints and the form that adds one (its secret shown once, in the answer). */
export function webhookPages(routes: DashboardRoutes): void {
  routes
    .page(BASE, (r) => webhooksPage(r, EMPTY_WEBHOOK_FORM, new Map()))
    .form(BASE, async (r, form) => {
      const values = webhookFormValues(form);
      const answer = await r.api.call<WebhookEndpointWithSecret>("POST", endpointsApi(r), {
        body: webhookBody(values),
        idempotencyKey: form.get("idempotency_key") ?? undefined,
      });
      if (answer.status === 403) return refused(r, answer);
      if (!answer.ok) return webhooksPage(r, values, fieldErrorsOf(answer), answer);
      const endpoint = answer.body;
      const endpointPath = `${webhooksPath(r)}/${endpoint.id}`;
      // The same form sent again replays the API's answer: the secret was shown the first time only.
      if (answer.headers.get("idempotent-replayed") === "true")
        return r.message(200, "This endpoint was already added", [
          "This form was sent before; its signing secret was shown then and is not shown again.",
          html`<a href="${endpointPath}">Open the endpoint</a>`,
        ]);
      return r.render(
        "Webhook endpoint added",
        html`<h1>Webhook endpoint added</h1>
${secretOnce(endpoint.secret, "Its signing secret")}
<p>Herald signs every delivery to <code>${endpoint.url}</code> with it (the <code>Service-Signature</code>
header). Store it where your receiver checks signatures.</p>
<p><a href="${endpointPath}">Open the endpoint</a> to send a test event.</p>`,
        { section: "webhooks", status: 201 },
      );
    });
  webhookEndpointPages(routes);
}

async function lastDelivery(r: DashboardRequest, e: WebhookEndpoint): Promise<Markup | string> {
  const answer = await r.api.get<Listing<WebhookDelivery>>(`${endpointsApi(r)}/${e.id}/deliveries?limit=1`);
  const d = answer.ok ? answer.body.data[0] : undefined;
  if (!d) return "None yet";
  const when = localTime(d.created_at, r.workspace!.timeZone);
  return html`${d.event_type} ${badge(d.status, DELIVERY_TONE[d.status])} ${deliveryOutcome(d)}<br>${when}`;
}

/** The list and the add form (with the values and problems of a form that came back). */
async function webhooksPage(
  r: DashboardRequest,
  values: WebhookFormValues,
  errors: FieldErrors,
  failed?: ApiAnswer<unknown>,
): Promise<Response> {
  const after = r.query.get("after");
  const listed = await r.api.get<Listing<WebhookEndpoint>>(
    `${endpointsApi(r)}?limit=25${after ? `&after=${encodeURIComponent(after)}` : ""}`,
  );
  if (!listed.ok) return refused(r, listed, `/dashboard/workspaces/${r.workspace!.id}/posts`);
  const endpoints = listed.body.data;
  const canWrite = r.actor.scopes.includes("webhooks:write");
  const rows = await Promise.all(
    endpoints.map(async (e) => [
      html`<a href="${webhooksPath(r)}/${e.id}">${e.name}</a>`,
      html`<code>${e.url}</code>`,
      endpointStatus(e),
      e.event_types.join(", "),
      await lastDelivery(r, e),
    ]),
  );
  const form = canWrite
    ? html`<h2 id="add">Add an endpoint</h2>
${postForm(
  { action: webhooksPath(r), csrf: r.csrf, label: "Add a webhook endpoint" },
  html`${webhookFields(values, errors, await destinationChoices(r))}
<button type="submit">Add endpoint</button>`,
)}`
    : html`<p class="muted">Your role lets you see the endpoints and their deliveries; an owner or admin
changes them.</p>`;
  return r.render(
    "Webhooks",
    html`<h1>Webhooks</h1>
${failed ? errorSummary(errors, errors.size ? null : problemOf(failed)?.detail, WEBHOOK_FIELD_LABELS) : ""}
${notice(r.query, "webhooks")}
<p>Herald sends signed events about this workspace's posts to these endpoints.</p>
${table({
  caption: "Endpoints",
  head: ["Name", "URL", "Status", "Events", "Last delivery"],
  rows,
  empty: "No endpoint yet.",
})}
${pager(webhooksPath(r), r.query, listed.body)}
${form}`,
    { section: "webhooks", status: failed?.status ?? 200 },
  );
}
