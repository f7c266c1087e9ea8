import { iso } from "../../lib/clock.ts";
import {
  createKeyFromForm,
  FormKeyReusedError,
  type KeyManager,
  keysSeenBy,
  revokeKeyFromDashboard,
  ScopesBeyondRoleError,
} from "../../modules/keys/dashboard.ts";
import type { ApiKeyRow } from "../../modules/keys/repo.ts";
import { UnknownWorkspacesError } from "../../modules/keys/service.ts";
import { html } from "../pages/html.ts";
import type { FieldErrors } from "./api.ts";
import {
  compactScopes,
  EMPTY_KEY_FORM,
  keyForm,
  keyFormValues,
  type KeyFormValues,
  validateKeyForm,
} from "./keys-form.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { zonedTime } from "../pages/time.ts";
import { badge, buttonForm, table } from "./ui.ts";
import { notice, withNotice } from "./notices.ts";

const STATUS_ORDER = { active: 0, expired: 1, revoked: 2 } as const;
const STATUS_TONE = { active: "ok", expired: "warn", revoked: "neutral" } as const;

const managerOf = (r: DashboardRequest): KeyManager => ({
  actor: r.actor,
  userId: r.session.userId,
  role: r.session.role,
});

/**
 * `/dashboard/keys`: the account's API keys (a member's own only), revoking them, and creating one
 * whose secret is shown once, in the answer to the form that created it.
 */
export function keyPages(routes: DashboardRoutes): void {
  routes
    .page("/dashboard/keys", (r) => keysPage(r, EMPTY_KEY_FORM, new Map()))
    .form("/dashboard/keys", async (r, form) => {
      const values = keyFormValues(form);
      const checked = validateKeyForm(values, r.session.role, r.h.clock.now());
      if (!checked.input) return keysPage(r, values, checked.errors, 400);
      let outcome: Awaited<ReturnType<typeof createKeyFromForm>>;
      try {
        outcome = await createKeyFromForm(r.h, managerOf(r), checked.input, form.get("idempotency_key"));
      } catch (error) {
        const at = (pointer: string, detail: string): FieldErrors => new Map([[pointer, detail]]);
        if (error instanceof UnknownWorkspacesError)
          return keysPage(r, values, at("/workspace_ids", "names a workspace that is not yours"), 400);
        if (error instanceof ScopesBeyondRoleError)
          return keysPage(r, values, at("/scopes", error.message), 400);
        if (error instanceof FormKeyReusedError)
          return r.message(409, "This form cannot be sent again", [
            html`<a href="/dashboard/keys">Open the API keys page</a> again and fill in a fresh form.`,
          ]);
        throw error;
      }
      if (!outcome.created)
        return r.message(200, "This key was already created", [
          html`This form was sent before: the key “${outcome.key.name}”
(<code>${outcome.key.prefix}…</code>) was created then and its secret was shown once. Herald does not
keep it, so it cannot be shown again.`,
          "If you did not store it, revoke that key and create another.",
          html`<a href="/dashboard/keys">Back to the API keys</a>`,
        ]);
      const prefix = outcome.apiKey.slice(0, 12);
      return r.render(
        "API key created",
        html`<h1>API key created</h1>
<div class="notice ok"><p><strong>Copy the key now: it will not be shown again.</strong> Herald keeps only
its hash; later pages show the prefix <code>${prefix}…</code> only.</p></div>
<p>Key “${checked.input.name}”:</p>
<div class="secret"><code id="new-api-key">${outcome.apiKey}</code>
<button type="button" data-copy="new-api-key" hidden>Copy</button>
<span id="new-api-key-status" role="status"></span></div>
<p>Use it as <code>Authorization: Bearer …</code>. Keep it on a server, never in browser code or URLs.</p>
<p><a href="/dashboard/keys">Back to the API keys</a></p>`,
        { section: "keys", status: 201 },
      );
    })
    .form("/dashboard/keys/:key_id/revoke", async (r) => {
      const out = await revokeKeyFromDashboard(r.h, managerOf(r), r.params.key_id!);
      if (!out)
        return r.message(404, "API key not found", [
          "It does not exist, or it is not one you can manage.",
          html`<a href="/dashboard/keys">Back to the API keys</a>`,
        ]);
      return r.redirect(
        withNotice("/dashboard/keys", "keys", out.alreadyRevoked ? "already-revoked" : "revoked"),
      );
    });
}

/** The list and the create form (with the values and errors of a form that came back). */
async function keysPage(r: DashboardRequest, values: KeyFormValues, errors: FieldErrors, status = 200) {
  const keys = (await keysSeenBy(r.h, r.session))
    // Active first, then expired, then revoked; newest first within each (the list's order).
    .sort((a, b) => STATUS_ORDER[a.status] - STATUS_ORDER[b.status]);
  const member = r.session.role === "member";
  const names = new Map(r.workspaces.map((w) => [w.id, w.name]));
  const workspacesOf = (k: ApiKeyRow & { workspaceIds: string[] }) =>
    k.workspaceAccessMode === "all" ? "All" : k.workspaceIds.map((id) => names.get(id) ?? id).join(", ");
  // An OAuth grant is a credential like a key: its client's name, marked, and no prefix to show (its
  // access token changes at every refresh).
  const grant = (k: ApiKeyRow) => k.kind === "oauth_grant";
  const rows = keys.map((k) => [
    grant(k) ? html`${k.name} ${badge("OAuth grant")}` : k.name,
    grant(k) ? html`MCP access · ${k.environment}` : html`<code>${k.prefix}…</code> ${k.environment}`,
    compactScopes(k.scopes),
    workspacesOf(k),
    zonedTime(iso(k.createdAt)),
    k.lastUsedAt === null ? "Never" : zonedTime(iso(k.lastUsedAt)),
    k.expiresAt === null ? "Never" : zonedTime(iso(k.expiresAt)),
    badge(k.status, STATUS_TONE[k.status]),
    k.status === "revoked"
      ? ""
      : buttonForm({
          action: `/dashboard/keys/${k.id}/revoke`,
          csrf: r.csrf,
          label: "Revoke",
          // The visible word stays short; the key's name completes what the button says aloud.
          hiddenLabel: ` ${k.name}`,
          danger: true,
          confirm: grant(k)
            ? `Revoke the OAuth grant of “${k.name}”? The application loses its access at once.`
            : `Revoke the key “${k.name}”? Whatever uses it stops working at once.`,
        }),
  ]);
  return r.render(
    "API keys",
    html`<h1>API keys</h1>
${notice(r.query, "keys")}
<p>Keys let programs use Herald's API. A key's secret is shown once, when it is created; it cannot be
shown again. Applications you allowed through Herald's MCP sign-in are listed here too, as OAuth grants.
${
  member
    ? "As a member you see and manage the keys you created; owners and admins manage every key."
    : "Owners and admins see and manage every key of the account."
}</p>
${table({
  caption: member ? "Your API keys" : "The account's API keys",
  head: ["Name", "Prefix", "Scopes", "Workspaces", "Created", "Last used", "Expires", "Status", "Action"],
  rows,
  empty: "No API keys yet.",
})}
${keyForm({ csrf: r.csrf, role: r.session.role, workspaces: r.workspaces, values, errors })}`,
    { section: "keys", status },
  );
}
