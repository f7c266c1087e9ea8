import { html, type Markup } from "./html.ts";
import { csrfField, errorSummary, field, layout, newPasswordFields, firstWorkspaceField } from "./layout.ts";

type SetupField = "email" | "name" | "workspace_name" | "password" | "password_confirmation" | "signup";

/** The first-run form of /setup: the owner, the first workspace, and who may sign up. */
export function setupPage(view: {
  csrf: string;
  token: string;
  values: { email: string; name: string; workspace_name: string; signup: string };
  /** HERALD_SIGNUP when the operator set it: it decides, so the page does not ask. */
  signupFromEnvironment: "open" | "closed" | null;
  passwordMin: number;
  errors: Partial<Record<SetupField, string>>;
}): string {
  const order: SetupField[] = [
    "email",
    "name",
    "workspace_name",
    "password",
    "password_confirmation",
    "signup",
  ];
  const summary = order.filter((f) => view.errors[f]).map((f) => ({ field: f, message: view.errors[f]! }));
  return layout(
    { title: "Set up Herald" },
    html`<h1>Set up Herald</h1>
<p>Nobody uses this server yet. Create the first account: you become its owner, and you are signed in
right after.</p>
${errorSummary(summary)}
<form method="post" action="/setup" novalidate>
${csrfField(view.csrf)}
<input type="hidden" name="token" value="${view.token}">
${field({
  name: "email",
  label: "E-mail address",
  type: "email",
  value: view.values.email,
  autocomplete: "username",
  required: true,
  maxlength: 254,
  autofocus: true,
  error: view.errors.email,
})}
${field({
  name: "name",
  label: "Name",
  hint: "Your name or your team's; it names the account.",
  value: view.values.name,
  autocomplete: "name",
  required: true,
  maxlength: 200,
  error: view.errors.name,
})}
${firstWorkspaceField(view.values.workspace_name, view.errors.workspace_name)}
${newPasswordFields(view.passwordMin, view.errors)}
${signupChoice(view.signupFromEnvironment, view.values.signup, view.errors.signup)}
<div class="actions"><button type="submit">Set up Herald</button></div>
</form>`,
  );
}

/** Who may sign up: two radios ("only people I invite" preselected), or what HERALD_SIGNUP decided. */
function signupChoice(fromEnvironment: "open" | "closed" | null, value: string, error?: string): Markup {
  if (fromEnvironment !== null)
    return html`<input type="hidden" name="signup" value="${fromEnvironment}">
<p class="notice">Who may sign up is decided by <code>HERALD_SIGNUP=${fromEnvironment}</code> on this server:
${fromEnvironment === "open" ? "anyone may sign up." : "only people an owner invites."}</p>`;
  const options = [
    {
      value: "closed",
      label: "Only people I invite",
      hint: "Recommended on a server others can reach: everyone who signs up publishes through this server's network apps.",
    },
    { value: "open", label: "Anyone", hint: "Anyone who opens this server can create an account." },
  ];
  const chosen = value === "open" ? "open" : "closed";
  return html`<fieldset class="field" id="signup"${error ? html` aria-describedby="signup-error"` : ""}>
<legend>Who may sign up?</legend>
<p class="hint">You can change this later in the dashboard, under Server.</p>
${error ? html`<p class="error" id="signup-error">${error}</p>` : ""}
${options.map(
  (
    o,
  ) => html`<div class="choice"><input id="signup-${o.value}" type="radio" name="signup" value="${o.value}"${
    o.value === chosen ? html` checked` : ""
  } aria-describedby="signup-${o.value}-hint"> <label for="signup-${o.value}">${o.label}</label>
<p class="hint" id="signup-${o.value}-hint">${o.hint}</p></div>`,
)}
</fieldset>`;
}
