import { ALL_SCOPES, isScope, type Scope } from "../../core/scopes.ts";
import { ROLE_SCOPES, type Role } from "../../modules/account/roles.ts";
import type { NewKeyInput } from "../../modules/keys/service.ts";
import { html, type Markup } from "../pages/html.ts";
import type { FieldErrors } from "./api.ts";
import type { WorkspaceRef } from "./layout.ts";
import { choices, errorSummary, input, postForm } from "./ui.ts";

/** What the create form holds, as posted (re-rendered unchanged after a validation failure). */
export interface KeyFormValues {
  name: string;
  environment: string;
  scopes: string[];
  workspaceAccess: string;
  workspaceIds: string[];
  expiry: string;
  expiresOn: string;
}

export const EMPTY_KEY_FORM: KeyFormValues = {
  name: "",
  environment: "live",
  scopes: [],
  workspaceAccess: "all",
  workspaceIds: [],
  expiry: "90",
  expiresOn: "",
};

/** The form's fields as the error summary names them (keyed by the pointers errors use). */
export const KEY_FIELD_LABELS: Record<string, string> = {
  "/name": "Name",
  "/environment": "Environment",
  "/scopes": "Scopes",
  "/workspace_access": "Workspace access",
  "/workspace_ids": "Workspaces",
  "/expiry": "Expiry",
  "/expires_on": "Expiry date",
};

const NAME_MAX = 100;
const DAY_MS = 24 * 60 * 60 * 1000;
const EXPIRY_DAYS: Record<string, number> = { "30": 30, "90": 90, "365": 365 };

export function keyFormValues(form: URLSearchParams): KeyFormValues {
  return {
    name: form.get("name") ?? "",
    environment: form.get("environment") ?? "",
    scopes: form.getAll("scopes"),
    workspaceAccess: form.get("workspace_access") ?? "",
    workspaceIds: form.getAll("workspace_ids"),
    expiry: form.get("expiry") ?? "",
    expiresOn: (form.get("expires_on") ?? "").trim(),
  };
}

/**
 * Checks the posted form against what the person may grant: every problem at its field, or the key's
 * settings. A scope beyond the person's role is refused here, never quietly dropped.
 */
export function validateKeyForm(
  values: KeyFormValues,
  role: Role,
  now: number,
): { errors: FieldErrors; input: Omit<NewKeyInput, "accountId"> | null } {
  const errors: FieldErrors = new Map();
  const name = values.name.trim();
  if (!name) errors.set("/name", "is required");
  else if (name.length > NAME_MAX) errors.set("/name", `must be at most ${NAME_MAX} characters`);
  if (values.environment !== "live" && values.environment !== "test")
    errors.set("/environment", "must be live or test");

  const unknown = values.scopes.filter((s) => !isScope(s));
  const beyond = values.scopes.filter((s) => isScope(s) && !ROLE_SCOPES[role].includes(s));
  if (unknown.length > 0) errors.set("/scopes", `not a scope: ${unknown.join(", ")}`);
  else if (beyond.length > 0) errors.set("/scopes", `your role (${role}) cannot grant ${beyond.join(", ")}`);
  else if (values.scopes.length === 0) errors.set("/scopes", "choose at least one scope");

  if (values.workspaceAccess !== "all" && values.workspaceAccess !== "selected")
    errors.set("/workspace_access", "must be all or selected");
  else if (values.workspaceAccess === "selected" && values.workspaceIds.length === 0)
    errors.set("/workspace_ids", "choose at least one workspace");

  let expiresAt: number | null = null;
  if (values.expiry === "date") {
    const day = /^\d{4}-\d{2}-\d{2}$/.test(values.expiresOn)
      ? Date.parse(`${values.expiresOn}T00:00:00Z`)
      : NaN;
    // The key works through the whole chosen day (UTC).
    if (Number.isNaN(day)) errors.set("/expires_on", "must be a date (YYYY-MM-DD)");
    else if (day + DAY_MS <= now) errors.set("/expires_on", "must be today or later");
    else expiresAt = day + DAY_MS;
  } else if (values.expiry in EXPIRY_DAYS) expiresAt = now + EXPIRY_DAYS[values.expiry]! * DAY_MS;
  else if (values.expiry !== "never") errors.set("/expiry", "must be never, 30, 90 or 365 days, or a date");

  if (errors.size > 0) return { errors, input: null };
  return {
    errors,
    input: {
      name,
      environment: values.environment as "live" | "test",
      scopes: values.scopes as Scope[],
      workspaceAccessMode: values.workspaceAccess as "all" | "selected",
      workspaceIds: values.workspaceAccess === "selected" ? [...new Set(values.workspaceIds)] : [],
      expiresAt,
    },
  };
}

/** A key's scopes in few words: "every scope", or each resource with its verbs. */
export function compactScopes(scopes: string[]): string {
  if (ALL_SCOPES.every((s) => scopes.includes(s))) return "every scope";
  const verbs = new Map<string, string[]>();
  for (const scope of scopes) {
    const [resource, verb] = scope.split(":") as [string, string];
    verbs.set(resource, [...(verbs.get(resource) ?? []), verb]);
  }
  return [...verbs].map(([resource, list]) => `${resource}: ${list.join(", ")}`).join("; ");
}

/** The create form, with the scopes the person's role allows and the account's workspaces. */
export function keyForm(spec: {
  csrf: string;
  role: Role;
  workspaces: WorkspaceRef[];
  values: KeyFormValues;
  errors: FieldErrors;
}): Markup {
  const { values, errors } = spec;
  return html`<h2 id="create">Create a key</h2>
${errorSummary(errors, null, KEY_FIELD_LABELS)}
${postForm(
  { action: "/dashboard/keys", csrf: spec.csrf, label: "Create a key" },
  html`${input({
    name: "name",
    pointer: "/name",
    label: "Name",
    hint: "What uses the key, e.g. “CI publisher”. 1 to 100 characters.",
    value: values.name,
    required: true,
    maxlength: NAME_MAX,
    errors,
  })}
${choices({
  name: "environment",
  pointer: "/environment",
  legend: "Environment",
  type: "radio",
  options: [
    { value: "live", label: "Live", hint: "publishes for real" },
    { value: "test", label: "Test", hint: "cannot publish or schedule" },
  ],
  checked: [values.environment],
  errors,
})}
${choices({
  name: "scopes",
  pointer: "/scopes",
  legend: `Scopes (those your role, ${spec.role}, may grant)`,
  type: "checkbox",
  options: ROLE_SCOPES[spec.role].map((s) => ({ value: s, label: s })),
  checked: values.scopes,
  errors,
})}
${workspaceAccessChoices(values, spec.workspaces, errors)}
${keyExpiryFields(values, errors)}
<button type="submit">Create key</button>`,
)}`;
}

/** When the key stops working: never, after a period, or at the end of a chosen day (UTC). */
function keyExpiryFields(values: KeyFormValues, errors: FieldErrors): Markup {
  return html`${choices({
    name: "expiry",
    pointer: "/expiry",
    legend: "Expiry",
    type: "radio",
    options: [
      { value: "never", label: "Never" },
      { value: "30", label: "In 30 days" },
      { value: "90", label: "In 90 days" },
      { value: "365", label: "In a year" },
      { value: "date", label: "On the date below" },
    ],
    checked: [values.expiry],
    errors,
  })}
${input({
  name: "expires_on",
  pointer: "/expires_on",
  label: "Expiry date",
  hint: "Used with “On the date below”: the key works until the end of that day (UTC).",
  type: "date",
  value: values.expiresOn,
  errors,
})}`;
}

/**
 * The workspace access fields of a credential (a key's form, an OAuth consent): all workspaces, or the
 * ones ticked.
 */
export function workspaceAccessChoices(
  values: { workspaceAccess: string; workspaceIds: string[] },
  workspaces: WorkspaceRef[],
  errors: FieldErrors,
): Markup {
  return html`${choices({
    name: "workspace_access",
    pointer: "/workspace_access",
    legend: "Workspace access",
    type: "radio",
    options: [
      { value: "all", label: "All workspaces", hint: "including ones created later" },
      { value: "selected", label: "Only the workspaces selected below" },
    ],
    checked: [values.workspaceAccess],
    errors,
  })}
${choices({
  name: "workspace_ids",
  pointer: "/workspace_ids",
  legend: "Selected workspaces",
  type: "checkbox",
  options: workspaces.map((w) => ({ value: w.id, label: w.name, hint: w.id })),
  checked: values.workspaceIds,
  errors,
})}`;
}
