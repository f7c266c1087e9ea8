import { html } from "./html.ts";
import { csrfField, layout, type PageFrame } from "./layout.ts";

/** The signed-in landing page: who, which account and workspaces, and whether the address awaits confirmation. */
export function dashboardPage(
  frame: PageFrame,
  view: {
    csrf: string;
    email: string;
    accountName: string;
    workspaces: { id: string; name: string }[];
    awaitingConfirmation: boolean;
    welcome: "account" | "cli" | null;
    resent: boolean;
  },
): string {
  const welcome =
    view.welcome === null
      ? ""
      : html`<div class="notice ok" role="status"><p><strong>Your account is ready.</strong></p>${
          view.welcome === "cli"
            ? html`<p>The command line is approved: return to your terminal, where <code>herald login</code>
finishes by itself${view.awaitingConfirmation ? " once your address is confirmed" : ""}.</p>`
            : ""
        }</div>`;
  return layout(
    frame,
    html`<h1>${view.accountName}</h1>
${welcome}
${
  view.awaitingConfirmation
    ? html`<div class="notice warn"><p>Confirm <strong>${view.email}</strong> with the link we e-mailed you: until then
the account's command line keys are held back.</p>
${view.resent ? html`<p role="status">A new link is on its way.</p>` : ""}
<form method="post" action="/dashboard/resend-confirmation">${csrfField(view.csrf)}
<button type="submit" class="secondary">Send the link again</button></form></div>`
    : ""
}
<h2>Workspaces</h2>
<ul class="plain">${view.workspaces.map((w) => html`<li>${w.name} <span class="muted"><code>${w.id}</code></span></li>`)}</ul>
<h2>Command line</h2>
<p>Run <code>herald login</code> in a terminal and approve it here. Have a code already?
<a href="/device">Enter it</a>.</p>`,
  );
}

/** The confirmation link's page: one button, so link scanners that only fetch do not confirm. */
export function confirmEmailPage(
  frame: PageFrame,
  view: { csrf: string; action: string; email: string },
): string {
  return layout(
    frame,
    html`<h1>Confirm your address</h1>
<p>Confirm that <strong>${view.email}</strong> is your address and belongs to this Herald account.</p>
<form method="post" action="${view.action}">
${csrfField(view.csrf)}
<div class="actions"><button type="submit">Confirm ${view.email}</button></div>
</form>`,
  );
}
