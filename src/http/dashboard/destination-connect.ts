import type { Herald } from "../../herald.ts";
import { NETWORK_RULES } from "../../providers/registry.ts";
import type { ProviderAdapter } from "../../providers/types.ts";
import { html, type Markup } from "../pages/html.ts";
import { type ApiAnswer, type FieldErrors, fieldErrorsOf } from "./api.ts";
import type { DashboardRequest } from "./router.ts";
import { notice, withNotice } from "./notices.ts";
import { fieldId, input, postForm } from "./ui.ts";

/** A connect form that came back: its network, what it held (never the app password) and the problems. */
export interface ConnectFailure {
  channel: string;
  values: Record<string, string>;
  /** Keyed `/<channel>/<field>` (the page has nine forms, so ids carry the network). */
  errors: FieldErrors;
  /** The problem's own words, for what no field explains. */
  detail: string | null;
  status: number;
  /** The error summary's labels of the form's fields. */
  labels: Record<string, string>;
}

/**
 * The name people know a network by ("Bluesky"), or the channel itself; `h` adds the networks Herald
 * was built with beside the contract's nine.
 */
export function networkName(channel: string, h?: Herald): string {
  const rules = h?.providers.adapter(channel) ?? NETWORK_RULES.find((n) => n.channel === channel);
  return rules?.displayName ?? channel;
}

/** Whether a network is connected through Herald's own app (one button: no instance to name). */
export function connectsThroughHeraldsApp(h: Herald, channel: string): boolean {
  const flow = h.providers.adapter(channel)?.connection;
  return flow?.kind === "oauth" && flow.registration === "fixed-app";
}

/**
 * Where the connect forms may lead: the networks' authorization pages (any https site: Mastodon
 * instances are the person's choice), and plain http too when the test-only private-network switch is on.
 */
export function connectFormActions(h: Herald): string[] {
  return h.config.devAllowPrivateNetwork ? ["https:", "http:"] : ["https:"];
}

const path = (r: DashboardRequest) => `/dashboard/workspaces/${r.workspace!.id}/destinations`;

/** The error summary's labels of a failure's fields. */
export function connectErrorLabels(failure: ConnectFailure | null): Record<string, string> {
  return failure?.labels ?? {};
}

/** The labels of a network's connect fields in the error summary ("Mastodon instance"). */
function fieldLabels(adapter: ProviderAdapter): Record<string, string> {
  const { channel: c, displayName: name, connection } = adapter;
  const origin =
    connection.kind === "oauth" && connection.registration === "fixed-app" ? null : connection.form.origin;
  return {
    [`/${c}/provider`]: name,
    ...(origin ? { [`/${c}/instance_origin`]: `${name} ${origin.inSentence}` } : {}),
    [`/${c}/handle`]: `${name} handle`,
    [`/${c}/app_password`]: `${name} app password`,
  };
}

/** The inputs a network's form asks for, by how the network is connected. */
function connectFields(
  adapter: ProviderAdapter,
  values: Record<string, string>,
  errors: FieldErrors,
): Markup {
  const { channel, connection } = adapter;
  const at = (field: string) => `/${channel}/${field}`;
  if (connection.kind === "password") {
    const { handleHint, passwordHint, origin } = connection.form;
    return html`${input({
      name: "handle",
      pointer: at("handle"),
      label: "Handle",
      hint: handleHint,
      value: values.handle,
      errors,
      required: true,
    })}${input({
      name: "app_password",
      pointer: at("app_password"),
      label: "App password",
      hint: passwordHint,
      type: "password",
      errors,
      required: true,
    })}${input({
      name: "instance_origin",
      pointer: at("instance_origin"),
      label: `${origin.label} (optional)`,
      hint: origin.hint,
      type: "url",
      value: values.instance_origin,
      errors,
    })}`;
  }
  if (connection.registration === "per-instance")
    return input({
      name: "instance_origin",
      pointer: at("instance_origin"),
      label: connection.form.origin.label,
      hint: connection.form.origin.hint,
      type: "url",
      value: values.instance_origin,
      errors,
      required: true,
    });
  return html`<p class="hint">You approve Herald on ${adapter.displayName}, then come back here.</p>`;
}

/** "Connect an account": one form per network of the registry, a failed one with its problems. */
export function connectSection(r: DashboardRequest, failure: ConnectFailure | null): Markup {
  const forms = r.h.providers.adapters.map((adapter) => {
    const { channel, displayName } = adapter;
    const mine = failure?.channel === channel ? failure : null;
    const errors = mine?.errors ?? new Map<string, string>();
    const providerError = errors.get(`/${channel}/provider`);
    return html`<section class="connect" id="connect-${channel}" aria-labelledby="connect-${channel}-title">
<h3 id="connect-${channel}-title">${displayName}</h3>
${providerError ? html`<p class="error" id="${fieldId(`/${channel}/provider`)}">${providerError}</p>` : ""}
${postForm(
  { action: `${path(r)}/connect/${channel}`, csrf: r.csrf, label: `Connect ${displayName}` },
  html`${connectFields(adapter, mine?.values ?? {}, errors)}
<button type="submit">Connect ${displayName}</button>`,
)}
</section>`;
  });
  return html`<h2 id="connect">Connect an account</h2>
<div class="connect-grid">${forms}</div>`;
}

/** The API's answer to a connect form as a failure of that network's form. */
function failureOf(
  adapter: ProviderAdapter,
  values: Record<string, string>,
  answer: ApiAnswer,
): ConnectFailure {
  const channel = adapter.channel;
  const errors: FieldErrors = new Map();
  for (const [pointer, detail] of fieldErrorsOf(answer)) errors.set(`/${channel}${pointer}`, detail);
  const detail: string | null = answer.body?.detail ?? null;
  // A network whose app is not configured (or any problem without a field): its detail says what to do.
  if (errors.has(`/${channel}/provider`) || errors.size === 0)
    errors.set(`/${channel}/provider`, detail ?? "Connecting failed; try again.");
  return { channel, values, errors, detail, status: answer.status, labels: fieldLabels(adapter) };
}

/**
 * POST of a connect form: Bluesky completes at once (back to the list with a notice), the OAuth networks
 * answer where to approve Herald (a 303 there), and a refusal comes back next to that network's form.
 */
export async function connectAccount(
  r: DashboardRequest,
  form: URLSearchParams,
  renderWithFailure: (failure: ConnectFailure) => Promise<Response>,
): Promise<Response> {
  const channel = r.params.provider!;
  const adapter = r.h.providers.adapter(channel);
  if (!adapter)
    return r.message(404, "Network not found", [html`<a href="${path(r)}">Back to the destinations</a>`]);
  const flow = adapter.connection;
  const text = (name: string) => form.get(name)?.trim() || undefined;
  const body: Record<string, string | undefined> = { provider: channel };
  if (flow.kind === "password") {
    body.handle = text("handle");
    body.app_password = form.get("app_password") || undefined;
  }
  if (flow.kind === "password" || flow.registration === "per-instance")
    body.instance_origin = text("instance_origin");
  const answer = await r.api.call("POST", `/workspaces/${r.workspace!.id}/destination-connections`, {
    body,
    idempotencyKey: form.get("idempotency_key") ?? undefined,
  });
  if (answer.status === 403)
    return r.message(403, "You cannot connect accounts", [
      answer.body?.detail ?? "Your role does not allow it.",
      html`<a href="${path(r)}">Back to the destinations</a>`,
    ]);
  if (!answer.ok) {
    const values = { handle: body.handle ?? "", instance_origin: body.instance_origin ?? "" };
    return renderWithFailure(failureOf(adapter, values, answer));
  }
  const connection = answer.body as { id: string; status: string; authorization_url: string | null };
  if (connection.authorization_url) return r.redirect(connection.authorization_url);
  const outcome = connection.status === "completed" ? "connected" : "not_connected";
  return r.redirect(withNotice(path(r), "destinations", outcome, { connection: connection.id }));
}

/**
 * The destinations page's notice. The outcome of a connection the page was sent back for
 * (`?notice=connected|not_connected&connection=…`, by the form or by the OAuth return page) is read from
 * the API so the text names the real account; every other notice is the table's text.
 */
export async function connectionNotice(
  r: DashboardRequest,
  destinations: { id: string; display_name: string }[],
): Promise<Markup> {
  const code = r.query.get("notice");
  if (code !== "connected" && code !== "not_connected") return notice(r.query, "destinations");
  const id = r.query.get("connection") ?? "";
  const answer = /^[A-Za-z0-9_-]{1,64}$/.test(id)
    ? await r.api.get(`/workspaces/${r.workspace!.id}/destination-connections/${id}`)
    : null;
  if (!answer?.ok) return notice(r.query, "destinations");
  const c = answer.body as {
    provider: string;
    status: string;
    destination_id: string | null;
    error: string | null;
  };
  const network = networkName(c.provider, r.h);
  if (c.status === "completed") {
    const account = destinations.find((d) => d.id === c.destination_id)?.display_name ?? "the account";
    return html`<div class="notice ok" role="status"><p>Connected ${network}: ${account}.</p></div>`;
  }
  const why =
    c.error ?? (c.status === "expired" ? "the authorization expired" : "the authorization was not finished");
  return html`<div class="notice warn" role="status"><p>${network} was not connected: ${why}. Connect it
again below.</p></div>`;
}
