import { html } from "./html.ts";
import { csrfField, errorSummary, field, layout } from "./layout.ts";

/** The sign-in form; `next` is where a successful sign-in goes (a checked local path). */
export function loginPage(view: {
  csrf: string;
  email?: string;
  next: string | null;
  failed?: boolean;
  signedOut?: boolean;
  /** Whether strangers may sign up (the page then links to /signup). */
  signupOpen: boolean;
}): string {
  const errors = view.failed
    ? [{ field: "email", message: "The e-mail address or the password is not right." }]
    : [];
  return layout(
    { title: "Sign in" },
    html`<h1>Sign in to Herald</h1>
${view.signedOut ? html`<p class="notice ok" role="status">You are signed out.</p>` : ""}
${errorSummary(errors)}
<form method="post" action="/login" novalidate>
${csrfField(view.csrf)}
${view.next ? html`<input type="hidden" name="next" value="${view.next}">` : ""}
${field({
  name: "email",
  label: "E-mail address",
  type: "email",
  value: view.email ?? "",
  autocomplete: "username",
  required: true,
  autofocus: true,
  error: view.failed ? "Check the address and the password." : undefined,
})}
${field({
  name: "password",
  label: "Password",
  type: "password",
  autocomplete: "current-password",
  required: true,
})}
<div class="actions"><button type="submit">Sign in</button></div>
</form>
<p><a href="/password-reset">Forgot your password?</a></p>
${
  view.signupOpen
    ? html`<p>New to Herald? <a href="/signup">Create an account</a>.</p>`
    : html`<p class="muted">New people join this server by invitation from someone who uses it.</p>`
}`,
  );
}

/** Asks before signing out (a link must not sign anyone out: sign-out is a POST). */
export function logoutPage(view: { csrf: string; email: string }): string {
  return layout(
    { title: "Sign out" },
    html`<h1>Sign out</h1>
<p>You are signed in as <strong>${view.email}</strong>.</p>
<form method="post" action="/logout">
${csrfField(view.csrf)}
<div class="actions"><button type="submit">Sign out</button></div>
</form>`,
  );
}
