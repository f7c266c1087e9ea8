import { html } from "./html.ts";
import { zonedTime } from "./time.ts";
import { csrfField, errorSummary, field, layout, type PageFrame } from "./layout.ts";

/** The form where a person types the code their terminal shows (a POST: typed codes stay out of URLs). */
export function deviceCodePage(
  frame: PageFrame,
  view: { csrf: string; code?: string; error?: string },
): string {
  return layout(
    frame,
    html`<h1>Sign in the command line</h1>
${view.error ? errorSummary([{ field: "user_code", message: view.error }]) : ""}
<p>Enter the code that <code>herald login</code> shows in your terminal.</p>
<form method="post" action="/device" novalidate>
${csrfField(view.csrf)}
${field({
  name: "user_code",
  label: "Code",
  hint: "Eight letters, such as WDJB-MJHT.",
  value: view.code ?? "",
  autocomplete: "one-time-code",
  required: true,
  maxlength: 20,
  error: view.error,
  autofocus: true,
})}
<div class="actions"><button type="submit">Continue</button></div>
</form>`,
  );
}

/** The approval question: which device asks, what its key may do, approve or deny. */
export function deviceConfirmPage(
  frame: PageFrame,
  view: {
    csrf: string;
    code: string;
    deviceName: string;
    cliVersion: string | null;
    requestedAt: string;
    expiresAt: string;
    accountName: string;
    workspaces: { id: string; name: string }[];
    scopes: readonly string[];
    awaitingConfirmation: string | null;
    /** Whether the confirmation link was e-mailed (false: this server has no mail). */
    mailSent: boolean;
  },
): string {
  return layout(
    frame,
    html`<h1>Sign in the Herald command line?</h1>
<p>A terminal asks for access to <strong>${view.accountName}</strong>. Approve only if you started
<code>herald login</code> yourself and it shows the same code.</p>
<dl>
<dt>Code</dt><dd class="code">${view.code}</dd>
<dt>Device</dt><dd>${view.deviceName}</dd>
<dt>CLI version</dt><dd>${view.cliVersion ?? "not given"}</dd>
<dt>Requested</dt><dd>${zonedTime(view.requestedAt)}</dd>
<dt>Expires</dt><dd>${zonedTime(view.expiresAt)}</dd>
</dl>
<p>Approving gives this device a live API key named <strong>${view.deviceName}</strong> for all the account's
workspaces, with these scopes: ${view.scopes.map((s, i) => html`${i > 0 ? ", " : ""}<code>${s}</code>`)}.
<code>herald logout</code> revokes it.</p>
${
  view.awaitingConfirmation
    ? html`<p class="notice warn">The key reaches the terminal once ${view.awaitingConfirmation} is confirmed:
${view.mailSent ? "use the link we e-mailed you." : "this server sends no e-mail, so ask its operator to confirm it."}</p>`
    : ""
}
<form method="post" action="/device">
${csrfField(view.csrf)}
<input type="hidden" name="user_code" value="${view.code}">
${
  view.workspaces.length > 1
    ? html`<div class="field"><label for="workspace_id">Default workspace for the command line</label>
<select id="workspace_id" name="workspace_id">${view.workspaces.map(
        (w) => html`<option value="${w.id}">${w.name}</option>`,
      )}</select></div>`
    : ""
}
<div class="actions">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`,
  );
}
