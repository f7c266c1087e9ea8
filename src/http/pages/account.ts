import { html } from "./html.ts";
import { csrfField, layout, type PageFrame } from "./layout.ts";

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
