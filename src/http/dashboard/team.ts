import { iso } from "../../lib/clock.ts";
import { listAccountUsers } from "../../modules/account/repo.ts";
import { roleAllows } from "../../modules/account/roles.ts";
import { listInvitations } from "../../modules/invitations/repo.ts";
import { presentInvitation } from "../../modules/invitations/service.ts";
import { html, type Markup } from "../pages/html.ts";
import { fieldErrorsOf, type FieldErrors } from "./api.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { badge, errorSummary, input, localTime, notice, postForm, table } from "./ui.ts";
import { refusal } from "./workspaces.ts";

const NOTICES = { invited: "The invitation is stored and its e-mail is on its way." };
const DELIVERY = { pending: "waiting to be sent", sent: "sent", failed: "could not be sent" } as const;

/** `/dashboard/team`: the account's people and invitations, and (with team:write) the invite form. */
export function teamPages(routes: DashboardRoutes): void {
  routes
    .page("/dashboard/team", (r) => teamPage(r, "", new Map()))
    .form("/dashboard/team/invitations", async (r, form) => {
      const email = (form.get("email") ?? "").trim();
      const answer = await r.api.call("POST", "/account/invitations", {
        body: { email },
        idempotencyKey: form.get("idempotency_key") ?? undefined,
      });
      if (answer.ok) return r.redirect("/dashboard/team?notice=invited");
      const refused = refusal(r, answer.status);
      if (refused) return refused;
      const errors = fieldErrorsOf(answer);
      return teamPage(
        r,
        email,
        errors,
        answer.status,
        errors.size ? null : (answer.body?.detail ?? "Not sent."),
      );
    });
}

async function teamPage(
  r: DashboardRequest,
  email: string,
  errors: FieldErrors,
  status = 200,
  problem: string | null = null,
): Promise<Response> {
  const now = r.h.clock.now();
  const people = await listAccountUsers(r.h.db, r.session.accountId);
  const invitations = (await listInvitations(r.h.db, r.session.accountId)).map((i) =>
    presentInvitation(i, now),
  );
  return r.render(
    "Team",
    html`<h1>Team</h1>
${notice(r.query, NOTICES)}
<p>Everyone in the account can use every workspace; their role decides what they may do. Owners do
everything, admins everything but change billing, members publish and read the rest.</p>
${table({
  caption: "People",
  head: ["E-mail", "Role", "Since"],
  rows: people.map((p) => [
    p.id === r.session.userId ? html`${p.email} <span class="muted">(you)</span>` : p.email,
    p.role,
    localTime(iso(p.createdAt)),
  ]),
  empty: "Nobody yet.",
})}
<h2>Invitations</h2>
${table({
  caption: "Invitations",
  hideCaption: true,
  head: ["E-mail", "Status", "Sent", "E-mail delivery", "Expires"],
  rows: invitations.map((i) => [
    i.email,
    i.status === "pending" ? badge("pending", "ok") : badge("expired", "neutral"),
    localTime(i.delivery.requested_at),
    DELIVERY[i.delivery.status as keyof typeof DELIVERY] ?? i.delivery.status,
    localTime(i.expires_at),
  ]),
  empty: "No invitations.",
})}
${
  roleAllows(r.session.role, "team:write")
    ? inviteForm(r, email, errors, problem)
    : html`<p class="muted">Your role (${r.session.role}) cannot invite people.</p>`
}`,
    { section: "team", status },
  );
}

function inviteForm(r: DashboardRequest, email: string, errors: FieldErrors, problem: string | null): Markup {
  return html`<h2>Invite someone</h2>
${errorSummary(errors, problem, { "/email": "E-mail address" })}
${postForm(
  { action: "/dashboard/team/invitations", csrf: r.csrf, label: "Invite someone" },
  html`${input({
    name: "email",
    pointer: "/email",
    label: "E-mail address",
    hint: "We e-mail them an invitation; it expires after seven days.",
    type: "email",
    value: email,
    required: true,
    maxlength: 254,
    errors,
  })}
<button type="submit">Send invitation</button>`,
)}`;
}
