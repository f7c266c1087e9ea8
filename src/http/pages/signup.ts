import { html, type Markup } from "./html.ts";
import { csrfField, newPasswordFields, errorSummary, field, firstWorkspaceField, layout } from "./layout.ts";

/** The signup form of a signup intent: a name and a password (twice). */
export function signupPage(view: {
  csrf: string;
  action: string;
  email: string;
  workspaceName: string;
  name: string;
  cli: { deviceName: string; cliVersion: string | null } | null;
  confirmEmail: AddressConfirmation;
  passwordMin: number;
  errors: Partial<Record<"name" | "password" | "password_confirmation", string>>;
}): string {
  const summary = (["name", "password", "password_confirmation"] as const)
    .filter((f) => view.errors[f])
    .map((f) => ({ field: f, message: view.errors[f]! }));
  return layout(
    { title: "Create your account" },
    html`<h1>Create your Herald account</h1>
${errorSummary(summary)}
<dl>
<dt>E-mail address</dt><dd>${view.email}</dd>
<dt>First workspace</dt><dd>${view.workspaceName}</dd>
</dl>
${
  view.cli
    ? html`<p class="notice">Creating the account also signs in the Herald command line on
<strong>${view.cli.deviceName}</strong>${view.cli.cliVersion ? html` (version ${view.cli.cliVersion})` : ""}.
Continue only if you started this signup from your own terminal.</p>`
    : ""
}
<form method="post" action="${view.action}" novalidate>
${csrfField(view.csrf)}
${field({
  name: "name",
  label: "Name",
  hint: "Your name or your team's; it names the account.",
  value: view.name,
  autocomplete: "name",
  required: true,
  maxlength: 200,
  error: view.errors.name,
})}
${newPasswordFields(view.passwordMin, view.errors)}
${confirmationHint(view.confirmEmail, view.email)}
<div class="actions"><button type="submit">Create account</button></div>
</form>`,
  );
}

/**
 * What a new account's address needs: `mail` (a link is e-mailed), `no_mail` (confirmation is required
 * but this server sends no mail, so the operator confirms it), or null (nothing).
 */
export type AddressConfirmation = "mail" | "no_mail" | null;

/** The sentence a signup form shows about confirming the address; never promises mail that is not sent. */
export function confirmationHint(confirmation: AddressConfirmation, email: string | null): Markup | "" {
  const address = email ?? "the address";
  if (confirmation === "mail")
    return html`<p class="hint">We will send a link to ${address}; the account can be used once the address
is confirmed.</p>`;
  if (confirmation === "no_mail")
    return html`<p class="hint">This server sends no e-mail yet, so ${address} cannot be confirmed by a
link: the account can be used once the server's operator confirms it.</p>`;
  return "";
}

/** The first step of a signup from the browser: the address and the first workspace's name. */
export function signupStartPage(view: {
  csrf: string;
  values: { email: string; workspace_name: string };
  errors: Partial<Record<"email" | "workspace_name", string>>;
  /** Set when the address already has an account (the page then offers to sign in). */
  emailTaken?: boolean;
  confirmEmail: AddressConfirmation;
}): string {
  const summary = (["email", "workspace_name"] as const)
    .filter((f) => view.errors[f])
    .map((f) => ({ field: f, message: view.errors[f]! }));
  return layout(
    { title: "Create an account" },
    html`<h1>Create a Herald account</h1>
${errorSummary(summary)}
${
  view.emailTaken
    ? html`<p class="notice warn"><a href="/login">Sign in with that address</a> instead, or
<a href="/password-reset">reset its password</a>.</p>`
    : ""
}
<form method="post" action="/signup" novalidate>
${csrfField(view.csrf)}
${field({
  name: "email",
  label: "E-mail address",
  type: "email",
  value: view.values.email,
  autocomplete: "email",
  required: true,
  maxlength: 254,
  autofocus: true,
  error: view.errors.email,
})}
${firstWorkspaceField(view.values.workspace_name, view.errors.workspace_name)}
<p class="hint">Next you choose your name and a password.</p>
${confirmationHint(view.confirmEmail, null)}
<div class="actions"><button type="submit">Continue</button></div>
</form>
<p>Already have an account? <a href="/login">Sign in</a>.</p>`,
  );
}
