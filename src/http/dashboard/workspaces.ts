import { roleAllows } from "../../modules/account/roles.ts";
import { html, type Markup } from "../pages/html.ts";
import { fieldErrorsOf, type FieldErrors } from "./api.ts";
import type { Listing, Workspace } from "./api-resources.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { errorSummary, input, pager, postForm, select, table } from "./ui.ts";
import { withNotice } from "./notices.ts";

const NAME_MAX = 200;
const PAGE_SIZE = 50;

/** The time zones a workspace can take: the runtime's IANA list, UTC, and `current` if it is an alias. */
export function timeZoneOptions(current?: string): [string, string][] {
  const zones = new Set(["UTC", ...Intl.supportedValuesOf("timeZone")]);
  if (current) zones.add(current);
  return [...zones].sort().map((z) => [z, z.replaceAll("_", " ")]);
}

/** The form-level outcome of an API answer that failed: 403 and 404 as pages, the rest in the form. */
export function refusal(r: DashboardRequest, status: number): Response | null {
  if (status === 403)
    return r.message(403, "Not allowed", ["Your role in this account does not allow this change."]);
  if (status === 404)
    return r.message(404, "Not found", [html`<a href="/dashboard">Back to your account</a>`]);
  return null;
}

/** `/dashboard/workspaces`: the workspaces, and (for those who may) a form to create one. */
export function workspacePages(routes: DashboardRoutes): void {
  routes
    .page("/dashboard/workspaces", (r) => workspacesPage(r, { name: "", time_zone: "UTC" }, new Map()))
    .form("/dashboard/workspaces", async (r, form) => {
      const values = { name: form.get("name") ?? "", time_zone: form.get("time_zone") ?? "" };
      const answer = await r.api.call<Workspace>("POST", "/workspaces", {
        body: { name: values.name.trim(), time_zone: values.time_zone },
        idempotencyKey: form.get("idempotency_key") ?? undefined,
      });
      if (answer.ok)
        return r.redirect(
          withNotice(`/dashboard/workspaces/${answer.body.id}/settings`, "workspace-settings", "created"),
        );
      const refused = refusal(r, answer.status);
      if (refused) return refused;
      const errors = fieldErrorsOf(answer);
      return workspacesPage(r, values, errors, answer.status, errors.size ? null : answer.body?.detail);
    });
}

async function workspacesPage(
  r: DashboardRequest,
  values: { name: string; time_zone: string },
  errors: FieldErrors,
  status = 200,
  problem: string | null = null,
): Promise<Response> {
  const after = r.query.get("after");
  const listed = await r.api.get<Listing<Workspace>>(
    `/workspaces?limit=${PAGE_SIZE}${after ? `&after=${encodeURIComponent(after)}` : ""}`,
  );
  const rows = (listed.ok ? listed.body.data : []).map((w) => [
    html`<a href="/dashboard/workspaces/${w.id}/posts">${w.name}</a>`,
    w.time_zone.replaceAll("_", " "),
    html`<code>${w.id}</code>`,
    html`<a href="/dashboard/workspaces/${w.id}/settings">Settings<span class="visually-hidden"> of ${
      w.name
    }</span></a>`,
  ]);
  const mayCreate = roleAllows(r.session.role, "workspaces:write");
  return r.render(
    "Workspaces",
    html`<h1>Workspaces</h1>
<p>A workspace holds its own destinations, posts, queue and webhooks. Everyone in the account can use
every workspace.</p>
${table({
  caption: "The account's workspaces",
  head: ["Name", "Time zone", "Id", "Settings"],
  rows,
  empty: "No workspaces yet.",
})}
${pager("/dashboard/workspaces", r.query, listed.ok ? listed.body : {})}
${
  mayCreate
    ? createForm(r, values, errors, problem)
    : html`<p class="muted">Your role (${r.session.role}) cannot create workspaces.</p>`
}`,
    { section: "workspaces", status },
  );
}

function createForm(
  r: DashboardRequest,
  values: { name: string; time_zone: string },
  errors: FieldErrors,
  problem: string | null,
): Markup {
  return html`<h2>Create a workspace</h2>
${errorSummary(errors, problem, { "/name": "Name", "/time_zone": "Time zone" })}
${postForm(
  { action: "/dashboard/workspaces", csrf: r.csrf, label: "Create a workspace" },
  html`${input({
    name: "name",
    pointer: "/name",
    label: "Name",
    hint: "1 to 200 characters.",
    value: values.name,
    required: true,
    maxlength: NAME_MAX,
    errors,
  })}
${select({
  name: "time_zone",
  pointer: "/time_zone",
  label: "Time zone",
  hint: "The queue's posting times are in this zone.",
  options: timeZoneOptions(),
  value: values.time_zone,
  errors,
})}
<button type="submit">Create workspace</button>`,
)}`;
}
