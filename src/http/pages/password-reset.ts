import { html } from "./html.ts";
import { csrfField, errorSummary, field, layout, newPasswordFields } from "./layout.ts";

/** What a person without a way to get a link by mail is told (no promise of an e-mail). */
const ASK_THE_OPERATOR = html`This server does not send e-mail. Ask the person who runs it for a reset link:
they make one with <code>herald admin reset-password --email</code> and your address.`;

/**
 * /password-reset: the address to send a link to. Without mail there is nothing to send, so the page
 * says who can make a link instead and shows no form.
 */
export function resetRequestPage(view: {
  csrf: string;
  mailAvailable: boolean;
  /** What was typed, sent back with `error` when it is not an address. */
  email?: string;
  error?: string;
}): string {
  if (!view.mailAvailable)
    return layout(
      { title: "Forgot your password?" },
      html`<h1>Forgot your password?</h1>
<p>${ASK_THE_OPERATOR}</p>
<p><a href="/login">Back to sign-in</a></p>`,
    );
  return layout(
    { title: "Forgot your password?" },
    html`<h1>Forgot your password?</h1>
${errorSummary(view.error ? [{ field: "email", message: view.error }] : [])}
<p>Enter the address you sign in with. We will e-mail it a link to choose a new password.</p>
<form method="post" action="/password-reset" novalidate>
${csrfField(view.csrf)}
${field({
  name: "email",
  label: "E-mail address",
  type: "email",
  value: view.email ?? "",
  error: view.error,
  autocomplete: "username",
  required: true,
  autofocus: true,
  maxlength: 254,
})}
<div class="actions"><button type="submit">Send the link</button></div>
</form>
<p><a href="/login">Back to sign-in</a></p>`,
  );
}

/**
 * The one answer to a reset request, whether or not the address has an account (the page never
 * tells which addresses do).
 */
export function resetRequestedPage(view: { email: string; mailAvailable: boolean }): string {
  if (!view.mailAvailable) return resetRequestPage({ csrf: "", mailAvailable: false });
  return layout(
    { title: "Check your e-mail" },
    html`<h1>Check your e-mail</h1>
<p class="notice ok" role="status">If an account uses <strong>${view.email}</strong>, a link to choose a new
password is on its way there. The link works once, for one hour.</p>
<p>No e-mail after a few minutes? Check the spam folder and the address, then
<a href="/password-reset">ask again</a>.</p>
<p><a href="/login">Back to sign-in</a></p>`,
  );
}

/** The form behind a reset link: the new password, twice. */
export function newPasswordPage(view: {
  csrf: string;
  action: string;
  email: string;
  passwordMin: number;
  errors: { password?: string; password_confirmation?: string };
}): string {
  const summary = (["password", "password_confirmation"] as const)
    .filter((f) => view.errors[f])
    .map((f) => ({ field: f, message: view.errors[f]! }));
  return layout(
    { title: "Choose a new password" },
    html`<h1>Choose a new password</h1>
${errorSummary(summary)}
<p>For <strong>${view.email}</strong>. Setting it signs this person out everywhere: every browser signs in
again with the new password. API keys keep working.</p>
<form method="post" action="${view.action}" novalidate>
${csrfField(view.csrf)}
${newPasswordFields(view.passwordMin, view.errors)}
<div class="actions"><button type="submit">Set the new password</button></div>
</form>`,
  );
}
