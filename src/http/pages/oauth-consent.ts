import type { Scope } from "../../core/scopes.ts";
import type { FieldErrors } from "../dashboard/api.ts";
import { dashboardLayout, type DashboardFrame, type WorkspaceRef } from "../dashboard/layout.ts";
import { workspaceAccessChoices } from "../dashboard/keys-form.ts";
import { choices, errorSummary, postForm } from "../dashboard/ui.ts";
import { html } from "./html.ts";

/** What the consent form holds (as first shown, or as posted when it came back with errors). */
export interface ConsentValues {
  scopes: string[];
  workspaceAccess: string;
  workspaceIds: string[];
}

export const CONSENT_FIELD_LABELS: Record<string, string> = {
  "/scopes": "Permissions",
  "/workspace_access": "Workspace access",
  "/workspace_ids": "Workspaces",
};

/**
 * The consent page of `/oauth/authorize`, in the dashboard's frame: who asks (the client's name and
 * where it sends the person back), which workspaces and which permissions (only those the person's
 * role holds), and Allow / Deny. The authorization request's parameters ride along as hidden fields.
 */
export function consentPage(
  frame: DashboardFrame,
  view: {
    clientName: string;
    redirectHost: string;
    /** `registered` clients named themselves; a metadata document's host vouches for the other kind. */
    clientSource: "registered" | "metadata_document";
    clientId: string;
    grantDays: number;
    roleScopes: readonly Scope[];
    workspaces: WorkspaceRef[];
    params: Record<string, string>;
    values: ConsentValues;
    errors: FieldErrors;
  },
): string {
  const { values, errors } = view;
  const who =
    view.clientSource === "metadata_document"
      ? html`Its identity is published at <strong>${new URL(view.clientId).host}</strong>.`
      : html`It registered itself with this server; Herald has not checked who made it.`;
  return dashboardLayout(
    frame,
    html`<h1>Allow “${view.clientName}” to use Herald?</h1>
<p>“${view.clientName}” asks to act for you in <strong>${frame.accountName}</strong> through Herald's MCP
endpoint. ${who} After you answer, your browser goes back to <strong>${view.redirectHost}</strong>.</p>
<p>It gets only what you choose below, for at most ${view.grantDays} days. The access is listed with your
<a href="/dashboard/keys">API keys</a>, where you can revoke it at any time.</p>
${errorSummary(errors, null, CONSENT_FIELD_LABELS)}
${postForm(
  { action: "/oauth/authorize", csrf: frame.csrf, label: `Allow or deny ${view.clientName}` },
  html`${Object.entries(view.params).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )}
${workspaceAccessChoices(values, view.workspaces, errors)}
${choices({
  name: "scopes",
  pointer: "/scopes",
  legend: `Permissions (those your role, ${frame.role}, holds)`,
  type: "checkbox",
  options: view.roleScopes.map((s) => ({ value: s, label: s })),
  checked: values.scopes,
  errors,
})}
<div class="actions"><button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button></div>`,
)}`,
  );
}
