import type { Herald } from "../../herald.ts";
import { ProblemError } from "../../core/problem.ts";
import { SESSION_TTL_MS } from "../../modules/sessions/service.ts";
import { emailConfirmationRequired } from "../../modules/signup/confirmation.ts";
import type { SignupForm } from "../../modules/signup/service.ts";
import type { Markup } from "../pages/html.ts";
import { messagePage, type PageFrame } from "../pages/layout.ts";
import { type Browser, cookie, csrfOf, pageResponse, SESSION_COOKIE } from "../pages/respond.ts";
import type { AddressConfirmation } from "../pages/signup.ts";

/** What the hosted pages' handlers share (pages.ts, invitation-page.ts). */

// Pages are outside /v1 and the OpenAPI document; they answer HTML, never problem+json.
export const hidden = { detail: { hide: true } };
// Form posts are read by the page itself (urlencoded, size-limited), not by a body parser.
export const formPost = { ...hidden, parse: "none" as const };

/** The frame of a page: its title, and who is signed in (with the sign-out form's token). */
export function pageFrame(h: Herald, browser: Browser, title: string): PageFrame {
  return {
    title,
    signedIn: browser.session ? { email: browser.session.email, csrf: csrfOf(h, browser) } : null,
  };
}

/** A page that says one thing: a heading and paragraphs. */
export function pageMessage(
  h: Herald,
  browser: Browser,
  status: number,
  heading: string,
  paragraphs: (string | Markup)[],
  headers: Record<string, string> = {},
): Response {
  return pageResponse(h, browser, messagePage(pageFrame(h, browser, heading), { heading, paragraphs }), {
    status,
    headers,
  });
}

/** 403: a form post without this browser's CSRF token. */
export function csrfRefused(h: Herald, browser: Browser): Response {
  return pageMessage(h, browser, 403, "This form cannot be used", [
    "It has expired, or it was not sent from Herald's own page. Go back, reload the page and try again.",
  ]);
}

/** The fields of a form that names a new person and sets their password (signup, invitation). */
export function newPersonFields(form: { get(name: string): string | null }): SignupForm {
  return {
    name: form.get("name") ?? "",
    password: form.get("password") ?? "",
    password_confirmation: form.get("password_confirmation") ?? "",
  };
}

/** `Set-Cookie` of a new session (sign-in, signup, setup). */
export function sessionCookie(h: Herald, token: string): string {
  return cookie(h, SESSION_COOKIE, token, SESSION_TTL_MS / 1000);
}

/** 429: too many attempts from this address or session, with the wait the limiter named. */
export function tooManyAttempts(h: Herald, browser: Browser, error: unknown): Response {
  const retryAfter = error instanceof ProblemError ? (error.retryAfter ?? 60) : 60;
  // The reason first (per address, or per account across addresses), then when to try again.
  const why = error instanceof ProblemError ? [error.detail] : [];
  return pageMessage(
    h,
    browser,
    429,
    "Too many attempts",
    [...why, `Wait ${retryAfter} seconds, then try again.`],
    {
      "retry-after": String(retryAfter),
    },
  );
}

/**
 * What a new account's address needs, as signup pages say it: a link by e-mail, the operator's
 * confirmation when confirmation is required but no mail can be sent, or nothing.
 */
export function addressConfirmation(h: Herald): AddressConfirmation {
  if (!emailConfirmationRequired(h)) return null;
  return h.mail ? "mail" : "no_mail";
}
