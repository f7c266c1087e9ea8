import { deliveryBodyOf } from "../../modules/webhooks/present.ts";
import { html, type Markup } from "../pages/html.ts";
import type { Listing, WebhookDelivery, WebhookEndpoint } from "./api-resources.ts";
import type { DashboardRequest } from "./router.ts";
import { DELIVERY_TONE, deliveryOutcome, endpointsApi, webhooksPath } from "./webhook-common.ts";
import { badge, buttonForm, pager, table } from "./ui.ts";
import { localTime } from "../pages/time.ts";

/**
 * The body a delivery sends, byte for byte. The API's delivery log has no bodies, so it is rendered the
 * way the sender does, from the stored event, for a delivery the API has just listed for this person.
 */
async function bodyOf(
  r: DashboardRequest,
  endpoint: WebhookEndpoint,
  deliveryId: string,
): Promise<string | null> {
  return deliveryBodyOf(r.h.db, endpoint.id, deliveryId, endpoint.content_mode);
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** One delivery: a summary line that opens onto its timing, attempts, request and response. */
function deliveryDetails(
  r: DashboardRequest,
  endpoint: WebhookEndpoint,
  d: WebhookDelivery,
  body: string | null,
  canWrite: boolean,
): Markup {
  const tz = r.workspace!.timeZone;
  const attempts = table({
    caption: `Attempts of delivery ${d.id}`,
    hideCaption: true,
    head: ["Attempt", "Started", "Took", "Response", "Error"],
    rows: d.attempts.map((a) => [
      String(a.number),
      localTime(a.started_at, tz),
      `${a.duration_ms} ms`,
      a.response_status === null ? null : `HTTP ${a.response_status}`,
      a.error,
    ]),
    empty: "No attempt yet.",
  });
  const headers = [
    ["Content-Type", "application/json"],
    ["Service-Event-Id", d.event_id],
    ["Service-Delivery-Id", d.id],
    ["Service-Signature", "t=…,v1=… (made at each attempt, one per active secret)"],
  ];
  const redeliver =
    canWrite && endpoint.enabled
      ? buttonForm({
          action: `${webhooksPath(r)}/${endpoint.id}/deliveries/${d.id}/redeliver`,
          csrf: r.csrf,
          label: "Send again",
          secondary: true,
        })
      : "";
  return html`<li><details class="delivery">
<summary>${d.event_type} ${badge(d.status, DELIVERY_TONE[d.status])} ${deliveryOutcome(d)} ·
${plural(d.attempt_count, "attempt")} · ${localTime(d.created_at, tz)}</summary>
<dl>
<dt>Delivery</dt><dd><code>${d.id}</code>${
    d.redelivery_of ? html` (sent again from <code>${d.redelivery_of}</code>)` : ""
  }</dd>
<dt>Event</dt><dd><code>${d.event_id}</code></dd>
<dt>Last attempt</dt><dd>${localTime(d.last_attempt_at, tz)}${
    d.last_duration_ms === null ? "" : ` (took ${d.last_duration_ms} ms)`
  }</dd>
${d.status === "pending" ? html`<dt>Next retry</dt><dd>${localTime(d.next_attempt_at, tz)}</dd>` : ""}
${d.delivered_at ? html`<dt>Delivered</dt><dd>${localTime(d.delivered_at, tz)}</dd>` : ""}
${d.failed_at ? html`<dt>Given up</dt><dd>${localTime(d.failed_at, tz)}</dd>` : ""}
</dl>
${attempts}
<h3>Request</h3>
<pre class="wire">POST ${endpoint.url}
${headers.map(([name, value]) => `${name}: ${value}\n`)}</pre>
${body === null ? "" : html`<pre class="wire">${body}</pre>`}
<h3>Response</h3>
<p>${deliveryOutcome(d)}. Herald keeps each attempt's status code or error (above), not the
receiver's headers or body.</p>
${redeliver}
</details></li>`;
}

/** The endpoint's delivery log, newest first, a page at a time. */
export async function deliveryLog(
  r: DashboardRequest,
  endpoint: WebhookEndpoint,
  canWrite: boolean,
): Promise<Markup> {
  const after = r.query.get("after");
  const page = after ? `&after=${encodeURIComponent(after)}` : "";
  const listed = await r.api.get<Listing<WebhookDelivery>>(
    `${endpointsApi(r)}/${endpoint.id}/deliveries?limit=25${page}`,
  );
  const heading = html`<h2 id="deliveries">Delivery log</h2>`;
  if (!listed.ok)
    return html`${heading}<p class="error">${listed.body?.detail ?? "The log cannot be read."}</p>`;
  const deliveries = listed.body.data;
  if (deliveries.length === 0)
    return html`${heading}<p class="muted">Nothing was sent to this endpoint yet.</p>`;
  const bodies = await Promise.all(deliveries.map((d) => bodyOf(r, endpoint, d.id)));
  return html`${heading}
<p class="muted">Newest first. Open a delivery for its attempts, the request as sent and the response.</p>
<ul class="plain deliveries">${deliveries.map((d, i) =>
    deliveryDetails(r, endpoint, d, bodies[i] ?? null, canWrite),
  )}</ul>
${pager(`${webhooksPath(r)}/${endpoint.id}`, r.query, listed.body)}`;
}
