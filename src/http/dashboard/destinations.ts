import { html, type Markup } from "../pages/html.ts";
import { defaultDestinationIds } from "../../modules/destinations/default.ts";
import { type ApiAnswer, problemOf } from "./api.ts";
import type { Destination, Listing } from "./api-resources.ts";
import {
  type ConnectFailure,
  connectAccount,
  connectErrorLabels,
  connectFormActions,
  connectionNotice,
  connectSection,
  connectsThroughHeraldsApp,
  networkName,
} from "./destination-connect.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { badge, buttonForm, errorSummary, table } from "./ui.ts";
import { type NoticeOf, withNotice } from "./notices.ts";
import { webhookPages } from "./webhooks.ts";

/** A destination as the API lists it. */

const BASE = "/dashboard/workspaces/:workspace_id/destinations";
const pathOf = (r: DashboardRequest) => `/dashboard/workspaces/${r.workspace!.id}/destinations`;

/** Helper pages of destinations and webhooks, registered together. */
export function destinationAndWebhookPages(routes: DashboardRoutes): void {
  destinationPages(routes);
  webhookPages(routes);
}

/**
 * `/dashboard/workspaces/:id/destinations`: the connected accounts with their state and actions, and a
 * form per network to connect one.
 */
function destinationPages(routes: DashboardRoutes): void {
  routes
    .page(BASE, (r) => destinationsPage(r, null))
    .form(`${BASE}/connect/:provider`, (r, form) =>
      connectAccount(r, form, (failure) => destinationsPage(r, failure)),
    )
    .form(`${BASE}/:destination_id/enable`, (r) => change(r, "PATCH", { enabled: true }, "enabled"))
    .form(`${BASE}/:destination_id/disable`, (r) => change(r, "PATCH", { enabled: false }, "disabled"))
    .form(`${BASE}/:destination_id/default`, (r) => change(r, "PATCH", { is_default: true }, "default"))
    .form(`${BASE}/:destination_id/disconnect`, (r) => change(r, "DELETE", undefined, "disconnected"));
}

/** One change of one destination through the API, then back to the list (or why it was refused). */
async function change(
  r: DashboardRequest,
  method: "PATCH" | "DELETE",
  body: Record<string, boolean> | undefined,
  outcome: NoticeOf<"destinations">,
): Promise<Response> {
  const id = encodeURIComponent(r.params.destination_id!);
  const answer = await r.api.call(method, `/workspaces/${r.workspace!.id}/destinations/${id}`, { body });
  if (answer.ok) return r.redirect(withNotice(pathOf(r), "destinations", outcome));
  return refusal(r, answer);
}

/** A refused change as a page of its own, with the API's words. */
function refusal(r: DashboardRequest, answer: ApiAnswer<unknown>): Response {
  const headings: Record<number, string> = {
    403: "You cannot change destinations",
    404: "Destination not found",
    409: "The destination cannot be disconnected yet",
  };
  return r.message(answer.status, headings[answer.status] ?? "The change did not go through", [
    problemOf(answer)?.detail ?? "Try again.",
    html`<a href="${pathOf(r)}">Back to the destinations</a>`,
  ]);
}

/** Why a destination cannot publish, in words. */
function reasonInWords(d: Destination): string {
  const name = networkName(d.channel);
  if (d.unavailable_reason === "reauthorization_required")
    return `${name} no longer accepts Herald's access: reauthorize the account.`;
  if (d.unavailable_reason === "app_not_configured") {
    const prefix = `HERALD_${d.channel.toUpperCase()}`;
    const variables = `${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET`;
    return `Herald's app for ${name} is not configured: the operator must set ${variables}.`;
  }
  if (d.unavailable_reason === "api_version_retired") {
    const variable = `HERALD_${d.channel.toUpperCase()}_API_VERSION`;
    return `${name} no longer accepts the API version Herald sends: the operator must set ${variable} to a current one.`;
  }
  return `Unavailable (${d.unavailable_reason ?? "no reason given"}).`;
}

function statusCell(d: Destination): Markup {
  if (d.status === "ready") return badge("Ready", "ok");
  if (d.status === "disabled") return badge("Disabled", "neutral");
  return html`${badge("Unavailable", "danger")}<p class="hint">${reasonInWords(d)}</p>`;
}

/** The buttons of one destination (none for a person who may only read). */
function actionsCell(r: DashboardRequest, d: Destination): Markup {
  const at = `${pathOf(r)}/${d.id}`;
  const label = `${networkName(d.channel)} ${d.display_name}`;
  const button = (action: string, text: string, extra: { danger?: boolean; confirm?: string } = {}) =>
    buttonForm({ action: `${at}/${action}`, csrf: r.csrf, label: text, secondary: !extra.danger, ...extra });
  const reauthorize =
    d.unavailable_reason !== "reauthorization_required"
      ? ""
      : connectsThroughHeraldsApp(r.h, d.channel)
        ? buttonForm({
            action: `${pathOf(r)}/connect/${d.channel}`,
            csrf: r.csrf,
            label: `Reauthorize ${label}`,
          })
        : html`<a class="button" href="#connect-${d.channel}">Reauthorize ${label}</a>`;
  return html`<div class="row-actions">${reauthorize}
${d.status !== "disabled" ? button("disable", `Disable ${label}`) : ""}
${d.status !== "ready" ? button("enable", `Enable ${label}`) : ""}
${d.is_default ? "" : button("default", `Make ${label} the default`)}
${button("disconnect", `Disconnect ${label}`, {
  danger: true,
  confirm: `Disconnect ${label}? Herald erases its credentials; connecting it again needs a new approval.`,
})}</div>`;
}

/** The list, the connect forms, and a connect form that came back with its problems. */
async function destinationsPage(r: DashboardRequest, failure: ConnectFailure | null): Promise<Response> {
  const answer = await r.api.get<Listing<Destination>>(`/workspaces/${r.workspace!.id}/destinations`);
  if (!answer.ok) return refusal(r, answer);
  const destinations = answer.body.data.toSorted(
    (a, b) => a.channel.localeCompare(b.channel) || a.display_name.localeCompare(b.display_name),
  );
  const canWrite = r.actor.scopes.includes("destinations:write");
  // A network's only (enabled) account acts as its default, as the compose page preselects it.
  const defaults = defaultDestinationIds(destinations.filter((d) => d.status !== "disabled"));
  const rows = destinations.map((d) => [
    networkName(d.channel),
    d.display_name,
    statusCell(d),
    defaults.has(d.id) ? badge("Default", "ok") : "",
    ...(canWrite ? [actionsCell(r, d)] : []),
  ]);
  return r.render(
    "Destinations",
    html`<h1>Destinations</h1>
${failure ? errorSummary(failure.errors, null, connectErrorLabels(failure)) : ""}
${await connectionNotice(r, destinations)}
<p>The social accounts this workspace publishes to. Each network can mark one of its accounts as the
default; a network with one account has it as its default. Compose chooses the defaults for you.</p>
${table({
  caption: "Connected accounts",
  head: ["Network", "Account", "Status", "Default", ...(canWrite ? ["Actions"] : [])],
  rows,
  empty: "No account is connected yet.",
})}
${
  canWrite
    ? connectSection(r, failure)
    : html`<p class="muted">Your role lets you see the destinations; an owner or admin connects and changes
them.</p>`
}`,
    {
      section: "destinations",
      status: failure?.status ?? 200,
      formActions: canWrite ? connectFormActions(r.h) : undefined,
    },
  );
}
