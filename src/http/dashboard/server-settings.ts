import { auditActorOf } from "../../core/actor.ts";
import {
  changeSignupPolicy,
  mayManageInstallation,
  signupSetting,
} from "../../modules/installation/service.ts";
import { emailConfirmationRequired } from "../../modules/signup/confirmation.ts";
import { html } from "../pages/html.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { notice, withNotice } from "./notices.ts";
import { choices, postForm } from "./ui.ts";

const OPTIONS = [
  {
    value: "closed",
    label: "Only people I invite",
    hint: "Everyone who signs up publishes through this server's network apps; invitations always work.",
  },
  { value: "open", label: "Anyone", hint: "The sign-in page links to a signup form anyone can use." },
];

/**
 * `/dashboard/server`: the installation's settings, for the owners of its first account (the one
 * /setup made): who may sign up, and how mail is set up.
 */
export function serverSettingsPages(routes: DashboardRoutes): void {
  routes
    .page("/dashboard/server", async (r) =>
      (await mayManageInstallation(r.h, r.session)) ? serverPage(r) : notAllowed(r),
    )
    .form("/dashboard/server/signup", async (r, form) => {
      if (!(await mayManageInstallation(r.h, r.session))) return notAllowed(r);
      const policy = form.get("signup");
      if (policy !== "open" && policy !== "closed") return serverPage(r, 400, "Choose who may sign up.");
      if ((await signupSetting(r.h)).source === "environment") return serverPage(r, 409);
      await changeSignupPolicy(r.h, auditActorOf(r.actor), policy);
      return r.redirect(withNotice("/dashboard/server", "server", policy));
    });
}

function notAllowed(r: DashboardRequest): Response {
  return r.message(403, "Server settings", [
    "Only the owners of this server's first account change its settings.",
    html`<a href="/dashboard">Back to your account</a>`,
  ]);
}

async function serverPage(r: DashboardRequest, status = 200, error?: string): Promise<Response> {
  const setting = await signupSetting(r.h);
  const current = setting.policy === "open" ? "Anyone may sign up." : "Only invited people may join.";
  const signup =
    setting.source === "environment"
      ? html`<p>${current} <code>HERALD_SIGNUP=${setting.policy}</code> is set in the server's environment and
decides this, so it cannot be changed here; without the variable, the choice here applies.</p>`
      : postForm(
          { action: "/dashboard/server/signup", csrf: r.csrf, label: "Who may sign up" },
          html`${choices({
            name: "signup",
            pointer: "/signup",
            legend: "Who may sign up?",
            type: "radio",
            options: OPTIONS,
            checked: [setting.policy],
            errors: error ? new Map([["/signup", error]]) : undefined,
          })}
<button type="submit">Save</button>`,
        );
  const mail = r.h.mail
    ? "Mail is configured (HERALD_SMTP_URL): invitations and links are e-mailed."
    : "Mail is not configured (HERALD_SMTP_URL is not set): nothing is e-mailed.";
  const confirm = emailConfirmationRequired(r.h)
    ? "New accounts confirm their address before they can be used."
    : "New accounts need no address confirmation.";
  return r.render(
    "Server",
    html`<h1>Server</h1>
${notice(r.query, "server")}
<h2>Who may sign up</h2>
${signup}
<h2>Mail</h2>
<p>${mail} ${confirm}</p>`,
    { section: "server", status },
  );
}
