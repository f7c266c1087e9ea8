import { html, type Markup } from "../pages/html.ts";
import { type ApiAnswer, problemOf } from "./api.ts";
import type { Destination, Listing, WebhookDelivery, WebhookEndpoint } from "./api-resources.ts";
import type { DashboardRequest } from "./router.ts";
import { badge } from "./ui.ts";

// What the webhooks list and the endpoint page share: how the API's endpoints and deliveries read.

/** The workspace's webhooks page path. */
export const webhooksPath = (r: DashboardRequest) => `/dashboard/workspaces/${r.workspace!.id}/webhooks`;
/** The API path of the workspace's endpoints. */
export const endpointsApi = (r: DashboardRequest) => `/workspaces/${r.workspace!.id}/webhook-endpoints`;

/** A signing secret, shown in the answer that made it and never again, with a copy button. */
export function secretOnce(secret: string, what: string): Markup {
  return html`<div class="notice ok"><p><strong>Copy the secret now: it will not be shown again.</strong>
Herald keeps it sealed; later pages show its last four characters only.</p></div>
<p>${what}:</p>
<div class="secret"><code id="signing-secret">${secret}</code>
<button type="button" data-copy="signing-secret" hidden>Copy</button>
<span id="signing-secret-status" role="status"></span></div>`;
}

/** A refusal of the API (no scope, not found, a conflict) as a page of its own. */
export function refused(r: DashboardRequest, answer: ApiAnswer<unknown>, back = webhooksPath(r)): Response {
  const headings: Record<number, string> = {
    403: "You cannot change webhooks",
    404: "Webhook endpoint not found",
    409: "This cannot be done now",
  };
  return r.message(answer.status, headings[answer.status] ?? "That did not go through", [
    problemOf(answer)?.detail ?? "Try again.",
    html`<a href="${back}">Back</a>`,
  ]);
}

/** An endpoint's state in words: enabled, disabled, or disabled by Herald with the reason. */
export function endpointStatus(e: WebhookEndpoint): Markup {
  if (e.enabled) return badge("Enabled", "ok");
  if (e.disabled_reason === "delivery_failures")
    return html`${badge("Disabled by Herald", "danger")}<p class="hint">After three days of failed deliveries.
Fix the receiver, then enable it again.</p>`;
  return badge("Disabled", "neutral");
}

/** The outcome of a delivery in a few words: the response status, else the error. */
export function deliveryOutcome(d: WebhookDelivery): string {
  if (d.last_response_status !== null) return `HTTP ${d.last_response_status}`;
  return d.last_error ?? (d.status === "pending" ? "not sent yet" : "no response");
}

export const DELIVERY_TONE = { pending: "warn", succeeded: "ok", failed: "danger" } as const;

/** The destinations the form offers to filter on (none when the person may not read them). */
export async function destinationChoices(r: DashboardRequest) {
  const answer = await r.api.get<Listing<Destination>>(`/workspaces/${r.workspace!.id}/destinations`);
  return answer.ok ? answer.body.data : [];
}
