import { html } from "./html.ts";
import { csrfField, layout, messagePage, type PageFrame } from "./layout.ts";

/** How a connection ended on the return page (`ok`: connected). */
export function oauthOutcomePage(frame: PageFrame, outcome: { ok: boolean; message: string }): string {
  return messagePage(frame, {
    heading: outcome.ok ? "Connected" : "Not connected",
    paragraphs: [outcome.message],
  });
}

/** A connection started in the dashboard came back to a browser not signed in with the session that started it. */
export function otherBrowserPage(frame: PageFrame): string {
  return messagePage(frame, {
    heading: "Not connected: started in another browser",
    paragraphs: [
      "This connection was started in Herald's dashboard in another browser, or by another person. " +
        "Nothing was connected.",
      "If you started it, open the authorization link again in the browser where you are signed in to " +
        "Herald and started connecting. If someone sent you this link, do not use it: it would attach " +
        "your account to their workspace.",
    ],
  });
}

/**
 * The question of a connection started with an API key: which network accounts go to which workspace
 * of which Herald account. Nothing is attached until the person presses "Connect".
 */
export function oauthConfirmPage(
  frame: PageFrame,
  view: {
    action: string;
    csrf: string;
    confirmation: string;
    channel: string;
    origin: string;
    accounts: { handle: string; displayName: string }[];
    workspaceName: string;
    accountName: string;
    expiresAt: string;
  },
): string {
  const names = view.accounts.map((a) => a.handle || a.displayName);
  const label = names.length === 1 ? names[0]! : `${names.length} accounts`;
  return layout(
    frame,
    html`<h1>Connect ${label} to Herald?</h1>
<p>The connection was started with an API key, not in this browser: confirm that it is yours before
anything is attached. Continue only if you started it yourself (with <code>herald destinations connect</code>
or the API). If someone sent you the link, cancel: their workspace would publish as you.</p>
<dl>
<dt>${names.length === 1 ? "Account" : "Accounts"}</dt><dd>${view.accounts.map((a, i) => {
      const shownName = a.displayName && a.displayName !== a.handle ? html`${a.displayName} ` : "";
      return html`${i > 0 ? ", " : ""}${shownName}<strong>${a.handle}</strong>`;
    })}</dd>
<dt>Network</dt><dd>${view.channel} (${view.origin})</dd>
<dt>Workspace</dt><dd><strong>${view.workspaceName}</strong></dd>
<dt>Herald account</dt><dd><strong>${view.accountName}</strong></dd>
<dt>Answer by</dt><dd><time datetime="${view.expiresAt}">${view.expiresAt}</time></dd>
</dl>
<form method="post" action="${view.action}">
${csrfField(view.csrf)}
<input type="hidden" name="confirmation" value="${view.confirmation}">
<button type="submit" name="decision" value="attach">Connect ${label} to ${view.workspaceName}</button>
<button type="submit" name="decision" value="cancel" class="secondary">Cancel</button>
</form>`,
  );
}
