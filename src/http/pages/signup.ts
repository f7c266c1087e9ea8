import { html } from "./html.ts";
import { csrfField, newPasswordFields, errorSummary, field, layout } from "./layout.ts";

/** The signup form of a signup intent: a name and a password (twice). */
export function signupPage(view: {
  csrf: string;
  action: string;
  email: string;
  workspaceName: string;
  name: string;
  cli: { deviceName: string; cliVersion: string | null } | null;
  confirmEmail: boolean;
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
${
  view.confirmEmail
    ? html`<p class="hint">We will send a link to ${view.email}; the account can be used once the address
is confirmed.</p>`
    : ""
}
<div class="actions"><button type="submit">Create account</button></div>
</form>`,
  );
}
