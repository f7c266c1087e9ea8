import { Elysia } from "elysia";
import { ProblemError } from "../../core/problem.ts";
import type { Herald } from "../../herald.ts";
import {
  completePasswordReset,
  inspectResetLink,
  PASSWORD_RESET_PATH,
  requestPasswordReset,
  resetByMailAvailable,
} from "../../modules/password-reset/service.ts";
import { AddressLimiter } from "../../modules/signup/limiter.ts";
import { PASSWORD_MIN_LENGTH } from "../../modules/signup/password.ts";
import { html } from "../pages/html.ts";
import { newPasswordPage, resetRequestedPage, resetRequestPage } from "../pages/password-reset.ts";
import {
  type Browser,
  browserOf,
  cookie,
  csrfOf,
  formFromThisBrowser,
  pageResponse,
  readForm,
  SESSION_COOKIE,
} from "../pages/respond.ts";
import { requestIdOf, type ClientAddress } from "../plugin.ts";
import { csrfRefused, formPost, hidden, pageMessage } from "./page-kit.ts";

/** Reset requests one client address may make an hour (whatever addresses it asks for). */
export const RESET_REQUESTS_PER_CLIENT_HOUR = 10;
/** Reset e-mails one address receives an hour at most (later requests answer alike and send nothing). */
export const RESET_MAILS_PER_ADDRESS_HOUR = 3;

/** What the reset pages share: Herald, the peer address and the two request limits. */
interface ResetPages {
  h: Herald;
  clientAddress: ClientAddress;
  perClient: AddressLimiter;
  perAddress: AddressLimiter;
}
type PageRequest = { request: Request };
type TokenPage = PageRequest & { params: { token: string } };

/**
 * The password reset pages: /password-reset asks for an address and always answers the same page;
 * /password-reset/{token} (the e-mailed or operator-made link) sets a new password. Server-rendered,
 * no scripts, every form a POST with the browser's CSRF token, like the other hosted pages.
 */
export function passwordResetRoutes(h: Herald, clientAddress: ClientAddress) {
  const hour = 60 * 60 * 1000;
  const p: ResetPages = {
    h,
    clientAddress,
    perClient: new AddressLimiter(RESET_REQUESTS_PER_CLIENT_HOUR, hour, "password reset requests an hour"),
    perAddress: new AddressLimiter(RESET_MAILS_PER_ADDRESS_HOUR, hour, "password reset e-mails an hour"),
  };
  // Handlers take the parts they read by name (Elysia compiles each route from its handler's source).
  return new Elysia()
    .get(PASSWORD_RESET_PATH, ({ request }) => showResetRequest(p, { request }), hidden)
    .post(PASSWORD_RESET_PATH, ({ request }) => submitResetRequest(p, { request }), formPost)
    .get(
      `${PASSWORD_RESET_PATH}/:token`,
      ({ request, params }) => showNewPassword(p, { request, params }),
      hidden,
    )
    .post(
      `${PASSWORD_RESET_PATH}/:token`,
      ({ request, params }) => submitNewPassword(p, { request, params }),
      formPost,
    );
}

async function showResetRequest({ h }: ResetPages, { request }: PageRequest) {
  const browser = await browserOf(h, request);
  const page = resetRequestPage({ csrf: csrfOf(h, browser), mailAvailable: resetByMailAvailable(h) });
  return pageResponse(h, browser, page);
}

async function submitResetRequest(p: ResetPages, { request }: PageRequest) {
  const { h } = p;
  const browser = await browserOf(h, request);
  const form = await readForm(request);
  if (!formFromThisBrowser(h, browser, form)) return csrfRefused(h, browser);
  const now = h.clock.now();
  try {
    p.perClient.hit(p.clientAddress(request), now);
  } catch (error) {
    return tooMany(p, browser, error);
  }
  const email = (form.get("email") ?? "").trim().slice(0, 254);
  const mailAvailable = resetByMailAvailable(h);
  if (mailAvailable && !/^[^\s@]+@[^\s@]+$/.test(email)) {
    const error = email ? "This is not an e-mail address: check it." : "Enter the address you sign in with.";
    const page = resetRequestPage({ csrf: csrfOf(h, browser), mailAvailable, email, error });
    return pageResponse(h, browser, page, { status: 400 });
  }
  // Past an address's e-mails of the hour the answer is the same page, and nothing more is sent:
  // asking again and again floods no mailbox, and says nothing about the address.
  let withinMailLimit = true;
  try {
    p.perAddress.hit(email.toLowerCase(), now);
  } catch {
    withinMailLimit = false;
  }
  await requestPasswordReset(h, withinMailLimit ? email : "");
  const page = resetRequestedPage({ email, mailAvailable });
  return pageResponse(h, browser, page);
}

async function showNewPassword(p: ResetPages, { request, params }: TokenPage) {
  const browser = await browserOf(p.h, request);
  return newPasswordForm(p, browser, params.token, {}, 200);
}

async function submitNewPassword(p: ResetPages, { request, params }: TokenPage) {
  const { h } = p;
  const browser = await browserOf(h, request);
  const form = await readForm(request);
  if (!formFromThisBrowser(h, browser, form)) return csrfRefused(h, browser);
  const outcome = await completePasswordReset(h, {
    token: params.token,
    form: {
      password: form.get("password") ?? "",
      password_confirmation: form.get("password_confirmation") ?? "",
    },
    requestId: requestIdOf(request),
  });
  switch (outcome.kind) {
    case "unknown":
    case "used":
    case "expired":
      return linkGone(p, browser, outcome.kind);
    case "invalid":
      return newPasswordForm(p, browser, params.token, outcome.errors, 400);
    case "done": {
      // This browser's session ended with the others when it was this person's.
      const signedOut = browser.session?.userId === outcome.userId;
      const page = pageMessage(
        h,
        signedOut ? { ...browser, session: null } : browser,
        200,
        "Your password is changed",
        [
          html`<strong>${outcome.email}</strong> signs in with the new password from now on. Every browser
that was signed in as this person is signed out; API keys keep working.`,
          html`<a href="/login">Sign in</a>`,
        ],
      );
      if (signedOut) page.headers.append("set-cookie", cookie(h, SESSION_COOKIE, "", 0));
      return page;
    }
  }
}

/** The new-password form of an open link (with its errors), or what became of the link. */
async function newPasswordForm(
  p: ResetPages,
  browser: Browser,
  token: string,
  errors: { password?: string; password_confirmation?: string },
  status: number,
): Promise<Response> {
  const { h } = p;
  const link = await inspectResetLink(h, token);
  if (link.kind !== "open") return linkGone(p, browser, link.kind);
  const page = newPasswordPage({
    csrf: csrfOf(h, browser),
    action: `${PASSWORD_RESET_PATH}/${token}`,
    email: link.email,
    passwordMin: PASSWORD_MIN_LENGTH,
    errors,
  });
  return pageResponse(h, browser, page, { status });
}

function linkGone({ h }: ResetPages, browser: Browser, kind: "unknown" | "used" | "expired"): Response {
  const again = html`<a href="${PASSWORD_RESET_PATH}">Ask for a new link</a>.`;
  if (kind === "unknown")
    return pageMessage(h, browser, 404, "This password reset link is not valid", [
      "Check that the whole link was copied. A link stops working once a new password is set with any link.",
      again,
    ]);
  if (kind === "used")
    return pageMessage(h, browser, 410, "This password reset link was already used", [
      html`If you chose a new password with it, <a href="/login">sign in</a> with that. Otherwise:`,
      again,
    ]);
  return pageMessage(h, browser, 410, "This password reset link has expired", [
    "Reset links work for one hour.",
    again,
  ]);
}

function tooMany({ h }: ResetPages, browser: Browser, error: unknown): Response {
  const retryAfter = error instanceof ProblemError ? (error.retryAfter ?? 3600) : 3600;
  const minutes = Math.ceil(retryAfter / 60);
  return pageMessage(
    h,
    browser,
    429,
    "Too many requests",
    [`Too many password resets were asked for from here. Try again in ${minutes} minutes.`],
    { "retry-after": String(retryAfter) },
  );
}
