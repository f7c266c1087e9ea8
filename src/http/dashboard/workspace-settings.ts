import { roleAllows } from "../../modules/account/roles.ts";
import { keysSeenBy } from "../../modules/keys/dashboard.ts";
import { html, type Markup } from "../pages/html.ts";
import { fieldErrorsOf, type FieldErrors } from "./api.ts";
import type { Queue, Workspace } from "./api-resources.ts";
import { compactScopes } from "./keys-form.ts";
import {
  queueEditor,
  type QueueRow,
  queueRowsFromForm,
  queueRowsOf,
  rowErrorsOf,
  windowsOfRows,
} from "./queue-editor.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { accountMembers } from "./team.ts";
import { choices, errorSummary, input, postForm, select, table } from "./ui.ts";
import { notice, withNotice } from "./notices.ts";
import { refusal, timeZoneOptions } from "./workspaces.ts";

/** A form that came back with problems, to render again as posted. */
interface Returned<V> {
  values: V;
  errors: FieldErrors;
  problem: string | null;
}
type GeneralValues = { name: string; time_zone: string; etag: string };
type LinkValues = { enabled: boolean; utm_source: string; utm_medium: string; utm_campaign: string };
type PageState = {
  general?: Returned<GeneralValues>;
  queue?: Returned<QueueRow[]>;
  links?: Returned<LinkValues>;
  status?: number;
};
const UTM_FIELDS = ["utm_source", "utm_medium", "utm_campaign"] as const;

/**
 * `/dashboard/workspaces/:id/settings`: name and time zone (PATCH with If-Match), the queue's posting
 * times (PUT /queue), link tracking and its UTM presets (PATCH link_tracking), and who can use the
 * workspace (every person of the account; the keys allowed).
 */
export function workspaceSettingsPages(routes: DashboardRoutes): void {
  const base = "/dashboard/workspaces/:workspace_id/settings";
  routes
    .page(base, (r) => settingsPage(r, {}))
    .form(base, async (r, form) => {
      const values = {
        name: form.get("name") ?? "",
        time_zone: form.get("time_zone") ?? "",
        etag: form.get("etag") ?? "",
      };
      const answer = await r.api.call("PATCH", `/workspaces/${r.workspace!.id}`, {
        body: { name: values.name.trim(), time_zone: values.time_zone },
        ifMatch: values.etag || undefined,
      });
      if (answer.ok)
        return r.redirect(
          withNotice(`/dashboard/workspaces/${r.workspace!.id}/settings`, "workspace-settings", "saved"),
        );
      const refused = refusal(r, answer.status);
      if (refused) return refused;
      const errors = fieldErrorsOf(answer);
      const problem =
        answer.status === 412
          ? "The workspace was changed meanwhile (in another tab or by someone else). Reload this page to " +
            "see its current settings, then make your change again."
          : errors.size
            ? null
            : (answer.body?.detail ?? "Not saved.");
      return settingsPage(r, { general: { values, errors, problem }, status: answer.status });
    })
    .form(`${base}/approval`, async (r, form) => {
      const answer = await r.api.call("PATCH", `/workspaces/${r.workspace!.id}`, {
        body: { approval_required: form.get("approval_required") === "yes" },
      });
      if (answer.ok)
        return r.redirect(
          withNotice(
            `/dashboard/workspaces/${r.workspace!.id}/settings`,
            "workspace-settings",
            "approval-saved",
          ),
        );
      const refused = refusal(r, answer.status);
      if (refused) return refused;
      return r.message(answer.status, "Not saved", [
        answer.body?.detail ?? "The setting could not be saved.",
        html`<a href="/dashboard/workspaces/${r.workspace!.id}/settings">Back to the settings</a>`,
      ]);
    })
    .form(`${base}/queue`, async (r, form) => {
      const rows = queueRowsFromForm(form);
      const wanted = windowsOfRows(rows);
      if (wanted.errors.size > 0)
        return settingsPage(r, {
          queue: { values: rows, errors: wanted.errors, problem: null },
          status: 400,
        });
      const answer = await r.api.call("PUT", `/workspaces/${r.workspace!.id}/queue`, {
        body: { windows: wanted.windows },
      });
      if (answer.ok)
        return r.redirect(
          withNotice(
            `/dashboard/workspaces/${r.workspace!.id}/settings`,
            "workspace-settings",
            "queue-saved",
          ),
        );
      const refused = refusal(r, answer.status);
      if (refused) return refused;
      const { errors, problem } = rowErrorsOf(answer, wanted.rowOfWindow);
      return settingsPage(r, { queue: { values: rows, errors, problem }, status: answer.status });
    })
    .form(`${base}/links`, async (r, form) => {
      const values: LinkValues = {
        enabled: form.get("enabled") === "true",
        utm_source: form.get("utm_source") ?? "",
        utm_medium: form.get("utm_medium") ?? "",
        utm_campaign: form.get("utm_campaign") ?? "",
      };
      // An empty box removes that preset.
      const presets = Object.fromEntries(UTM_FIELDS.map((f) => [f, values[f].trim() || null]));
      const answer = await r.api.call("PATCH", `/workspaces/${r.workspace!.id}`, {
        body: { link_tracking: { enabled: values.enabled, ...presets } },
      });
      if (answer.ok)
        return r.redirect(
          withNotice(
            `/dashboard/workspaces/${r.workspace!.id}/settings`,
            "workspace-settings",
            "links-saved",
          ),
        );
      const refused = refusal(r, answer.status);
      if (refused) return refused;
      const errors = fieldErrorsOf(answer);
      const problem = errors.size ? null : (answer.body?.detail ?? "Not saved.");
      return settingsPage(r, { links: { values, errors, problem }, status: answer.status });
    });
}

async function settingsPage(r: DashboardRequest, state: PageState): Promise<Response> {
  const ws = r.workspace!;
  const current = await r.api.get<Workspace>(`/workspaces/${ws.id}`);
  const queue = await r.api.get<Queue>(`/workspaces/${ws.id}/queue`);
  // The router found the workspace a moment ago; its reference stands in if this read fails.
  const workspace = current.ok ? current.body : { name: ws.name, time_zone: ws.timeZone };
  const role = r.session.role;
  const general: Returned<GeneralValues> = state.general ?? {
    values: {
      name: workspace.name,
      time_zone: workspace.time_zone,
      etag: current.headers.get("etag") ?? "",
    },
    errors: new Map(),
    problem: null,
  };
  const queueRows = state.queue?.values ?? queueRowsOf(queue.ok ? queue.body.windows : []);
  const tracking = current.ok ? current.body.link_tracking : null;
  const links: Returned<LinkValues> = state.links ?? {
    values: {
      enabled: tracking?.enabled ?? false,
      utm_source: tracking?.utm_source ?? "",
      utm_medium: tracking?.utm_medium ?? "",
      utm_campaign: tracking?.utm_campaign ?? "",
    },
    errors: new Map(),
    problem: null,
  };
  return r.render(
    `Settings of ${ws.name}`,
    html`<h1>Settings of ${ws.name}</h1>
${notice(r.query, "workspace-settings")}
<p class="muted">Workspace id <code>${ws.id}</code></p>
<h2>Name and time zone</h2>
${
  roleAllows(role, "workspaces:write")
    ? generalForm(r, general)
    : html`<p>${workspace.name}, time zone ${workspace.time_zone}.</p>
<p class="muted">Your role (${role}) cannot change them.</p>`
}
${approvalSetting(r, current.ok ? current.body.approval_required : false)}
<h2>Queue posting times</h2>
<p>Posts added to the queue take the next free posting time, in the workspace's time zone.</p>
${
  roleAllows(role, "posts:write")
    ? queueEditor({
        action: `/dashboard/workspaces/${ws.id}/settings/queue`,
        csrf: r.csrf,
        timeZone: workspace.time_zone,
        rows: queueRows,
        errors: state.queue?.errors ?? new Map(),
        problem: state.queue?.problem ?? null,
      })
    : html`<p class="muted">Your role (${role}) cannot change the posting times.</p>`
}
<h2>Link tracking</h2>
<p>When it is on, the URLs of posts created from now on are published as short links of this server
(<code>${r.h.config.baseUrl}/l/…</code>) that count clicks (per day, nothing about who clicked) and
redirect with the UTM parameters below. A post can opt out when it is created.</p>
${
  roleAllows(role, "workspaces:write")
    ? linkTrackingForm(r, links)
    : html`<p>Link tracking is ${links.values.enabled ? "on" : "off"}.</p>
<p class="muted">Your role (${role}) cannot change it.</p>`
}
${await accessSection(r)}`,
    { section: "settings", status: state.status ?? 200 },
  );
}

/** Whether posts need approval: a checkbox for those who may approve, else what it is. */
function approvalSetting(r: DashboardRequest, required: boolean): Markup {
  const role = r.session.role;
  const mayChange = roleAllows(role, "posts:approve") && roleAllows(role, "workspaces:write");
  return html`<h2>Approval</h2>
<p>When approval is required, posts that members (and API keys without the posts:approve scope) publish or
schedule wait as drafts until an owner or admin approves them on the
<a href="/dashboard/workspaces/${r.workspace!.id}/approvals">Awaiting approval</a> page.</p>
${
  mayChange
    ? postForm(
        {
          action: `/dashboard/workspaces/${r.workspace!.id}/settings/approval`,
          csrf: r.csrf,
          label: "Approval",
        },
        html`<div class="field"><div class="choice"><input id="f-approval_required" type="checkbox"
name="approval_required" value="yes"${required ? html` checked` : ""}> <label for="f-approval_required">Require
approval before posts go out</label></div></div>
<button type="submit">Save</button>`,
      )
    : html`<p>Approval is ${required ? "required" : "not required"} in this workspace.</p>
<p class="muted">Your role (${role}) cannot change it.</p>`
}`;
}

function generalForm(r: DashboardRequest, general: Returned<GeneralValues>): Markup {
  const { values, errors } = general;
  return html`${errorSummary(errors, general.problem, { "/name": "Name", "/time_zone": "Time zone" })}
${postForm(
  { action: `/dashboard/workspaces/${r.workspace!.id}/settings`, csrf: r.csrf, label: "Name and time zone" },
  html`<input type="hidden" name="etag" value="${values.etag}">
${input({
  name: "name",
  pointer: "/name",
  label: "Name",
  value: values.name,
  required: true,
  maxlength: 200,
  errors,
})}
${select({
  name: "time_zone",
  pointer: "/time_zone",
  label: "Time zone",
  hint: "The queue's posting times are read in this zone.",
  options: timeZoneOptions(values.time_zone),
  value: values.time_zone,
  errors,
})}
<button type="submit">Save</button>`,
)}`;
}

function linkTrackingForm(r: DashboardRequest, links: Returned<LinkValues>): Markup {
  const { values, errors } = links;
  const labels = { utm_source: "UTM source", utm_medium: "UTM medium", utm_campaign: "UTM campaign" };
  return html`${errorSummary(errors, links.problem, {
    "/link_tracking/enabled": "Track links",
    "/link_tracking/utm_source": labels.utm_source,
    "/link_tracking/utm_medium": labels.utm_medium,
    "/link_tracking/utm_campaign": labels.utm_campaign,
  })}
${postForm(
  { action: `/dashboard/workspaces/${r.workspace!.id}/settings/links`, csrf: r.csrf, label: "Link tracking" },
  html`${choices({
    name: "enabled",
    pointer: "/link_tracking/enabled",
    legend: "Short links",
    type: "checkbox",
    options: [{ value: "true", label: "Track links: publish URLs as short links that count clicks" }],
    checked: values.enabled ? ["true"] : [],
    errors,
  })}
${UTM_FIELDS.map((field) =>
  input({
    name: field,
    pointer: `/link_tracking/${field}`,
    label: labels[field],
    hint: `Added as ${field} unless the URL has one; leave empty for none.`,
    value: values[field],
    maxlength: 100,
    errors,
  }),
)}
<button type="submit">Save link tracking</button>`,
)}`;
}

/** Who can use the workspace: every person of the account, and the live keys that reach it. */
async function accessSection(r: DashboardRequest): Promise<Markup> {
  const ws = r.workspace!;
  const people = await accountMembers(r);
  const keys = (await keysSeenBy(r.h, r.session)).filter(
    (k) => k.status === "active" && (k.workspaceAccessMode === "all" || k.workspaceIds.includes(ws.id)),
  );
  return html`<h2>Members' access</h2>
<p>In this version every person of the account can use every workspace; their role decides what they may
do. Invite people on the <a href="/dashboard/team">Team</a> page.</p>
${table({
  caption: "People who can use this workspace",
  head: ["E-mail", "Role"],
  rows: people.map((p) => [p.email, p.role]),
  empty: "Nobody.",
})}
${table({
  caption:
    r.session.role === "member"
      ? "Your API keys that can use this workspace"
      : "API keys that can use this workspace",
  head: ["Name", "Prefix", "Access", "Scopes"],
  rows: keys.map((k) => [
    k.name,
    html`<code>${k.prefix}…</code>`,
    k.workspaceAccessMode === "all" ? "all workspaces" : "selected workspaces",
    compactScopes(k.scopes),
  ]),
  empty: "No active API key can use this workspace.",
})}
<p><a href="/dashboard/keys">Manage API keys</a></p>`;
}
