import { roleAllows } from "../../modules/account/roles.ts";
import { html, type Markup } from "../pages/html.ts";
import { fieldErrorsOf, type FieldErrors } from "./api.ts";
import type { Invitation, Member } from "./api-resources.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { badge, buttonForm, errorSummary, input, postForm, select, table } from "./ui.ts";
import { localTime } from "../pages/time.ts";
import { notice, withNotice } from "./notices.ts";
import { refusal } from "./workspaces.ts";

const ROLES: [string, string][] = [
  ["member", "Member: publishes and reads the setup"],
  ["admin", "Admin: everything but billing changes"],
  ["owner", "Owner: everything"],
];
const DELIVERY = { pending: "waiting to be sent", sent: "sent", failed: "could not be sent" } as const;

/** The account's people as the API lists them, oldest first (empty when the role may not read them). */
export async function accountMembers(r: DashboardRequest): Promise<Member[]> {
  const listed = await r.api.all<Member>("/account/members");
  if (!listed.ok) return [];
  return listed.body.toSorted((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
}

/** `/dashboard/team`: the account's people and invitations, and (with team:write) the invite form. */
export function teamPages(routes: DashboardRoutes): void {
  routes
    .page("/dashboard/team", (r) => teamPage(r, "", new Map()))
    .form("/dashboard/team/invitations/:invitation_id/:verb", async (r) => {
      const { invitation_id: id, verb } = r.params;
      if (verb !== "resend" && verb !== "revoke") return r.message(404, "Page not found", []);
      // The Confirmed action: the person pressed the button (and, for revoke, confirmed the dialog).
      const answer = await r.api.call<Invitation>(
        "POST",
        `/account/invitations/${encodeURIComponent(id!)}/${verb}`,
        { body: { confirmed: true } },
      );
      if (answer.ok && answer.body.invitation_url) return linkToPassOn(r, answer.body, "resent");
      const resent = r.h.mail ? "resent" : "resent-link-shown";
      if (answer.ok)
        return r.redirect(withNotice("/dashboard/team", "team", verb === "resend" ? resent : "revoked"));
      return refusal(r, answer.status) ?? teamPage(r, "", new Map(), answer.status, answer.body?.detail);
    })
    .form("/dashboard/team/members/:member_id/remove", async (r, form) => {
      const confirmation = form.get("confirmation") ?? "";
      const answer = await r.api.call(
        "POST",
        `/account/members/${encodeURIComponent(r.params.member_id!)}/remove`,
        {
          body: { confirmed: true, confirmation },
        },
      );
      if (answer.ok) return r.redirect(withNotice("/dashboard/team", "team", "removed"));
      const refused = refusal(r, answer.status);
      if (refused) return refused;
      const errors = fieldErrorsOf(answer);
      const detail = errors.get("/confirmation") ?? answer.body?.detail ?? "Not removed.";
      return teamPage(r, "", new Map(), answer.status, `Not removed: ${detail}`);
    })
    .form("/dashboard/team/invitations", async (r, form) => {
      const email = (form.get("email") ?? "").trim();
      const role = form.get("role") ?? "member";
      const answer = await r.api.call<Invitation>("POST", "/account/invitations", {
        body: { email, role },
        idempotencyKey: form.get("idempotency_key") ?? undefined,
      });
      if (answer.ok && answer.body.invitation_url) return linkToPassOn(r, answer.body, "invited");
      if (answer.ok)
        return r.redirect(withNotice("/dashboard/team", "team", r.h.mail ? "invited" : "invited-link-shown"));
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

/**
 * The answer to inviting (or resending) while no mail server is configured: the one-time link for the
 * inviter to pass on, shown this once (Herald keeps only its hash; the e-mail waits in the outbox).
 */
function linkToPassOn(r: DashboardRequest, invitation: Invitation, outcome: "invited" | "resent"): Response {
  const heading = outcome === "invited" ? "Invitation created" : "New invitation link";
  return r.render(
    heading,
    html`<h1>${heading}</h1>
<div class="notice ok" role="status"><p><strong>No e-mail goes out: this server has no mail configured.</strong>
Pass this link on to ${invitation.email} yourself. It is shown only this once, and works until
${localTime(invitation.expires_at)}.</p></div>
<p>Invitation link for ${invitation.email}:</p>
<div class="secret"><code id="invitation-link">${invitation.invitation_url}</code>
<button type="button" data-copy="invitation-link" hidden>Copy</button>
<span id="invitation-link-status" role="status"></span></div>
${outcome === "resent" ? html`<p>The earlier link no longer works.</p>` : ""}
<p>The e-mail stays queued and is sent if a mail server (<code>HERALD_SMTP_URL</code>) is configured later.</p>
<p><a href="/dashboard/team">Back to the team</a></p>`,
    { section: "team", status: outcome === "invited" ? 201 : 200 },
  );
}

async function teamPage(
  r: DashboardRequest,
  email: string,
  errors: FieldErrors,
  status = 200,
  problem: string | null = null,
): Promise<Response> {
  const manage = roleAllows(r.session.role, "team:write");
  const [people, invitations] = await Promise.all([
    accountMembers(r),
    r.api.all<Invitation>("/account/invitations"),
  ]);
  return r.render(
    "Team",
    html`<h1>Team</h1>
${notice(r.query, "team")}
<p>Everyone in the account can use every workspace; their role decides what they may do. Owners do
everything, admins everything but change billing, members publish and read the rest.</p>
${problem && errors.size === 0 ? html`<div class="errors" role="alert"><p>${problem}</p></div>` : ""}
${table({
  caption: "People",
  head: manage ? ["E-mail", "Role", "Since", "Remove"] : ["E-mail", "Role", "Since"],
  rows: people.map((p) => [
    p.id === r.session.userId ? html`${p.email} <span class="muted">(you)</span>` : p.email,
    p.role,
    localTime(p.created_at),
    ...(manage ? [removeForm(r, p)] : []),
  ]),
  empty: "Nobody yet.",
})}
<h2>Invitations</h2>
${table({
  caption: "Invitations",
  hideCaption: true,
  head: ["E-mail", "Role", "Status", "Sent", "E-mail delivery", "Expires", ...(manage ? ["Actions"] : [])],
  rows: (invitations.ok ? invitations.body : []).map((i) => [
    i.email,
    i.role,
    i.status === "pending" ? badge("pending", "ok") : badge("expired", "neutral"),
    localTime(i.delivery.requested_at),
    DELIVERY[i.delivery.status as keyof typeof DELIVERY] ?? i.delivery.status,
    localTime(i.expires_at),
    ...(manage ? [invitationActions(r, i)] : []),
  ]),
  empty: "No invitations.",
})}
${
  manage
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
    hint: r.h.mail
      ? "We e-mail them an invitation; it expires after seven days."
      : "This server sends no mail: you get the invitation link to pass on; it expires after seven days.",
    type: "email",
    value: email,
    required: true,
    maxlength: 254,
    errors,
  })}
${select({
  name: "role",
  pointer: "/role",
  label: "Role",
  hint: "Admins and owners can be invited only by someone whose role holds all of theirs.",
  options: ROLES,
  value: "member",
  errors,
})}
<button type="submit">Send invitation</button>`,
)}`;
}

/** Removing a person: their address typed again, as the API asks (`confirmation`). */
function removeForm(r: DashboardRequest, person: { id: string; email: string }): Markup {
  const id = `remove-${person.id}`;
  return postForm(
    { action: `/dashboard/team/members/${person.id}/remove`, csrf: r.csrf, className: "inline" },
    html`<label for="${id}">Type ${person.email} to remove them</label>
<input id="${id}" name="confirmation" type="email" autocomplete="off" required>
<button type="submit" class="danger">Remove<span class="visually-hidden"> ${person.email}</span></button>`,
  );
}

/** Resend and revoke for an invitation. */
function invitationActions(r: DashboardRequest, invitation: { id: string; email: string }): Markup {
  const at = `/dashboard/team/invitations/${invitation.id}`;
  return html`${buttonForm({
    action: `${at}/resend`,
    csrf: r.csrf,
    label: `Resend to ${invitation.email}`,
    secondary: true,
  })} ${buttonForm({
    action: `${at}/revoke`,
    csrf: r.csrf,
    label: `Revoke ${invitation.email}`,
    danger: true,
    confirm: `Revoke the invitation of ${invitation.email}?`,
  })}`;
}
