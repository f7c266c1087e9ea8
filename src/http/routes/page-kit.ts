import type { Herald } from "../../herald.ts";
import type { SignupForm } from "../../modules/signup/service.ts";
import type { Markup } from "../pages/html.ts";
import { messagePage, type PageFrame } from "../pages/layout.ts";
import { type Browser, csrfOf, pageResponse } from "../pages/respond.ts";

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
