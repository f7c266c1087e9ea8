import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import {
  type AcceptOutcome,
  acceptInvitation,
  inspectInvitationLink,
  type InvitationLink,
} from "../../modules/invitations/accept.ts";
import { INVITATION_PAGE_PATH } from "../../modules/invitations/service.ts";
import { closeSession, SESSION_TTL_MS } from "../../modules/sessions/service.ts";
import { PASSWORD_MIN_LENGTH } from "../../modules/signup/service.ts";
import { html } from "../pages/html.ts";
import { invitationPage } from "../pages/invitation.ts";
import { requestIdOf } from "../plugin.ts";
import {
  type Browser,
  browserOf,
  cookie,
  csrfOf,
  formFromThisBrowser,
  pageResponse,
  readForm,
  redirect,
  SESSION_COOKIE,
} from "../pages/respond.ts";
import { csrfRefused, formPost, hidden, newPersonFields, pageMessage } from "./page-kit.ts";
import { publicHandler } from "./context.ts";

/**
 * The hosted page of an invitation's e-mailed link, `/invitations/{token}` (outside /v1, HTML, no
 * scripts, the form CSRF-protected like the signup page): a new person names themselves, chooses a
 * password and is signed in to the inviting account.
 */
export function invitationPageRoutes(h: Herald) {
  return new Elysia()
    .get(`${INVITATION_PAGE_PATH}/:token`, publicHandler(h, showInvitation), hidden)
    .post(`${INVITATION_PAGE_PATH}/:token`, publicHandler(h, acceptInvitationForm), formPost);
}

type TokenPage = { request: Request; params: { token: string } };

async function showInvitation(h: Herald, { request, params }: TokenPage) {
  const browser = await browserOf(h, request);
  const link = await inspectInvitationLink(h, params.token);
  if (link.kind !== "open") return closed(h, browser, link.kind);
  return form(h, browser, params.token, link, "", {});
}

async function acceptInvitationForm(h: Herald, { request, params }: TokenPage) {
  const browser = await browserOf(h, request);
  const posted = await readForm(request);
  if (!formFromThisBrowser(h, browser, posted)) return csrfRefused(h, browser);
  const fields = newPersonFields(posted);
  const outcome = await acceptInvitation(h, {
    token: params.token,
    form: fields,
    requestId: requestIdOf(request),
  });
  if (outcome.kind === "invalid") {
    const link = await inspectInvitationLink(h, params.token);
    if (link.kind !== "open") return closed(h, browser, link.kind);
    return form(h, browser, params.token, link, fields.name, outcome.errors, 400);
  }
  if (outcome.kind !== "done") return closed(h, browser, outcome.kind);
  // A browser signs in as one person at a time: an earlier session ends here.
  if (browser.session) await closeSession(h, browser.session.id);
  return redirect(h, browser, "/dashboard", [
    cookie(h, SESSION_COOKIE, outcome.session.token, SESSION_TTL_MS / 1000),
  ]);
}

/** The form of an open invitation, with what was typed and its errors. */
function form(
  h: Herald,
  browser: Browser,
  token: string,
  link: Extract<InvitationLink, { kind: "open" }>,
  name: string,
  errors: Extract<AcceptOutcome, { kind: "invalid" }>["errors"],
  status = 200,
) {
  return pageResponse(
    h,
    browser,
    invitationPage({
      csrf: csrfOf(h, browser),
      action: `${INVITATION_PAGE_PATH}/${token}`,
      email: link.invitation.email,
      accountName: link.accountName,
      role: link.invitation.role,
      name,
      passwordMin: PASSWORD_MIN_LENGTH,
      errors,
    }),
    { status },
  );
}

/** Every way a link cannot be used, as a page that says what to do instead. */
function closed(
  h: Herald,
  browser: Browser,
  kind: Exclude<AcceptOutcome["kind"], "open" | "invalid" | "done">,
) {
  switch (kind) {
    case "unknown":
      return pageMessage(h, browser, 404, "This invitation link is not valid", [
        "Check that the whole link was copied from the e-mail. A link stops working when the " +
          "invitation is sent again: use the newest e-mail.",
      ]);
    case "revoked":
      return pageMessage(h, browser, 410, "This invitation was withdrawn", [
        "Ask the person who invited you to send a new one.",
      ]);
    case "accepted":
      return pageMessage(h, browser, 410, "This invitation was already accepted", [
        html`The account is ready: <a href="/login">sign in</a>.`,
      ]);
    case "expired":
      return pageMessage(h, browser, 410, "This invitation has expired", [
        "Invitations work for seven days. Ask the person who invited you to send it again.",
      ]);
    case "member":
      return pageMessage(h, browser, 409, "You are already a member of this account", [
        html`<a href="/login">Sign in</a> with this address.`,
      ]);
    case "other_account":
      return pageMessage(h, browser, 409, "This address already has a Herald account", [
        "On Herald a person belongs to one account, and this address is in another one already. " +
          "Ask to be invited at another address, or ask that account's owner to remove you first.",
        html`<a href="/login">Sign in</a> to the account you have.`,
      ]);
  }
}
