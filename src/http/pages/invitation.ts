import { html } from "./html.ts";
import { csrfField, newPasswordFields, errorSummary, field, layout } from "./layout.ts";

/** The form of an invitation link: the person's name and a password (twice). */
export function invitationPage(view: {
  csrf: string;
  action: string;
  email: string;
  accountName: string;
  role: string;
  name: string;
  passwordMin: number;
  errors: Partial<Record<"name" | "password" | "password_confirmation", string>>;
}): string {
  const summary = (["name", "password", "password_confirmation"] as const)
    .filter((f) => view.errors[f])
    .map((f) => ({ field: f, message: view.errors[f]! }));
  return layout(
    { title: "Join the account" },
    html`<h1>Join ${view.accountName} on Herald</h1>
${errorSummary(summary)}
<dl>
<dt>Account</dt><dd>${view.accountName}</dd>
<dt>E-mail address</dt><dd>${view.email}</dd>
<dt>Role</dt><dd>${view.role}</dd>
</dl>
<form method="post" action="${view.action}" novalidate>
${csrfField(view.csrf)}
${field({
  name: "name",
  label: "Your name",
  hint: "Shown to the other people of the account.",
  value: view.name,
  autocomplete: "name",
  required: true,
  maxlength: 200,
  error: view.errors.name,
})}
${newPasswordFields(view.passwordMin, view.errors)}
<div class="actions"><button type="submit">Join the account</button></div>
</form>`,
  );
}
