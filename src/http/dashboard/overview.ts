import { userAwaitsConfirmation, resendEmailConfirmation } from "../../modules/signup/confirmation.ts";
import { html } from "../pages/html.ts";
import { closeUserSessions, liveSessionsOf } from "../../modules/sessions/service.ts";
import { cookie, redirect as redirectWith, SESSION_COOKIE } from "../pages/respond.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { zonedTime } from "../pages/time.ts";
import { buttonForm, table } from "./ui.ts";

/** `/dashboard`: the account, its workspaces, a pending address confirmation, the command line. */
export function overviewPages(routes: DashboardRoutes): void {
  routes
    .page("/dashboard", async (r) => {
      const welcome = r.query.get("welcome");
      const awaiting = await userAwaitsConfirmation(r.h.db, r.session.userId);
      const welcomeNotice =
        welcome === "setup"
          ? html`<div class="notice ok" role="status"><p><strong>Herald is set up.</strong> You own its first
account; who may sign up can be changed under <a href="/dashboard/server">Server</a>.</p></div>`
          : welcome === "cli" || welcome === "account"
            ? html`<div class="notice ok" role="status"><p><strong>Your account is ready.</strong></p>${
                welcome === "cli"
                  ? html`<p>The command line is approved: return to your terminal, where
<code>herald login</code> finishes by itself${awaiting ? " once your address is confirmed" : ""}.</p>`
                  : ""
              }</div>`
            : "";
      const confirmation = awaiting
        ? html`<div class="notice warn"><p>Confirm <strong>${r.session.email}</strong> ${
            r.h.mail
              ? "with the link we e-mailed you"
              : "(this server sends no e-mail yet: its operator can confirm the address)"
          }: until then you can look around, but not create API keys, invitations, destinations or posts,
and the command line's key is held back. An account left unconfirmed for 7 days is deleted.</p>
${r.query.get("resent") === "1" ? html`<p role="status">A new link is on its way.</p>` : ""}
${buttonForm({
  action: "/dashboard/resend-confirmation",
  csrf: r.csrf,
  label: "Send the link again",
  secondary: true,
})}</div>`
        : "";
      return r.render(
        r.session.accountName,
        html`<h1>${r.session.accountName}</h1>
${welcomeNotice}
${confirmation}
<p class="muted">Signed in as ${r.session.email}.</p>
<h2>Workspaces</h2>
<ul class="plain">${r.workspaces.map(
          (w) =>
            html`<li><a href="/dashboard/workspaces/${w.id}/posts">${w.name}</a>
<span class="muted"><code>${w.id}</code></span></li>`,
        )}</ul>
<h2>Command line</h2>
<p>Run <code>herald login</code> in a terminal and approve it here. Have a code already?
<a href="/device">Enter it</a>.</p>
${await sessionsSection(r)}`,
        { section: "overview" },
      );
    })
    .form("/dashboard/sessions/close-all", async (r) => {
      await closeUserSessions(r.h, r.session.userId);
      const cleared = cookie(r.h, SESSION_COOKIE, "", 0);
      return redirectWith(r.h, r.browser, "/login?signed_out=1", [cleared]);
    })
    .form("/dashboard/resend-confirmation", async (r) => {
      const sent = await resendEmailConfirmation(r.h, {
        userId: r.session.userId,
        accountId: r.session.accountId,
        email: r.session.email,
      });
      return r.redirect(sent ? "/dashboard?resent=1" : "/dashboard");
    });
}

/** The person's live sessions (browsers signed in) and the button that ends them all. */
async function sessionsSection(r: DashboardRequest) {
  const live = await liveSessionsOf(r.h, r.session.userId);
  return html`<h2>Where you are signed in</h2>
${table({
  caption: "Your sessions",
  hideCaption: true,
  head: ["Signed in", "Ends", ""],
  rows: live.map((s) => [
    zonedTime(new Date(s.createdAt).toISOString()),
    zonedTime(new Date(s.expiresAt).toISOString()),
    s.id === r.session.id ? "This browser" : "",
  ]),
  empty: "No sessions.",
})}
<p>Lost a device, or signed in somewhere you should not have? End every session, this one included.</p>
${buttonForm({
  action: "/dashboard/sessions/close-all",
  csrf: r.csrf,
  label: "Sign out everywhere",
  secondary: true,
})}`;
}
