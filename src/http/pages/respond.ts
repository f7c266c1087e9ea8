import type { Herald } from "../../herald.ts";
import { csrfToken, csrfTokenValid, newBrowserKey } from "../../modules/sessions/csrf.ts";
import { currentSession, type PageSession } from "../../modules/sessions/service.ts";
import { boundedText } from "../../lib/bounded-body.ts";

/** The session cookie (its value is the session token; the database has only its hash). */
export const SESSION_COOKIE = "herald_session";
/** The browser's random CSRF key, which the forms' tokens are bound to. */
export const CSRF_COOKIE = "herald_csrf";

/** Form bodies the pages accept at most (a few short fields). */
const MAX_FORM_BYTES = 16 * 1024;

/**
 * Headers of every page: no caching, no framing, no referrer (the pages' URLs carry one-time tokens and
 * codes), nothing loaded but the page's own stylesheet, forms posted only to Herald itself.
 */
const PAGE_HEADERS: Record<string, string> = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "content-security-policy":
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

/** What a page request brings: its cookies, the browser's CSRF key and the signed-in session. */
export interface Browser {
  browserKey: string;
  /** True when the browser had no CSRF key yet: the response sets one. */
  newKey: boolean;
  sessionToken: string | null;
  session: PageSession | null;
}

/** Parses a Cookie header into name → value (the first of a repeated name wins). */
export function parseCookies(header: string | null): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name && !cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

/**
 * The name a cookie of the pages goes by: `__Host-<name>` when the base URL is https (the browser then
 * keeps it Secure, Path=/ and to this host only, so a sibling subdomain cannot set or shadow it), the
 * plain name on http, where browsers refuse the prefix.
 */
export function cookieName(h: Herald, name: string): string {
  return h.config.baseUrl.startsWith("https:") ? `__Host-${name}` : name;
}

/** Reads the browser's cookies (by the names this base URL uses) and session. */
export async function browserOf(h: Herald, request: Request): Promise<Browser> {
  const cookies = parseCookies(request.headers.get("cookie"));
  const existing = cookies.get(cookieName(h, CSRF_COOKIE));
  const valid = existing !== undefined && /^[A-Za-z0-9]{32}$/.test(existing);
  const sessionToken = cookies.get(cookieName(h, SESSION_COOKIE)) ?? null;
  return {
    browserKey: valid ? existing : newBrowserKey(),
    newKey: !valid,
    sessionToken,
    session: await currentSession(h, sessionToken),
  };
}

/** The CSRF token this browser's forms carry (bound to its session when signed in). */
export function csrfOf(h: Herald, browser: Browser): string {
  return csrfToken(h.secrets, browser.browserKey, browser.session?.id ?? null);
}

/** Whether a posted form carries this browser's token (a new browser key never matches). */
export function formFromThisBrowser(h: Herald, browser: Browser, form: URLSearchParams): boolean {
  if (browser.newKey) return false;
  return csrfTokenValid(h.secrets, browser.browserKey, browser.session?.id ?? null, form.get("csrf_token"));
}

/**
 * `Set-Cookie` for a cookie of the pages: HttpOnly, SameSite=Lax, Path=/, and on an https base URL
 * Secure with the `__Host-` prefix (`cookieName`).
 */
export function cookie(h: Herald, name: string, value: string, maxAgeSeconds?: number): string {
  const secure = h.config.baseUrl.startsWith("https:") ? "; Secure" : "";
  const age = maxAgeSeconds === undefined ? "" : `; Max-Age=${maxAgeSeconds}`;
  return `${cookieName(h, name)}=${value}; Path=/; HttpOnly; SameSite=Lax${secure}${age}`;
}

/** An HTML response with the pages' headers, any cookies, and the CSRF cookie when the browser is new. */
export function pageResponse(
  h: Herald,
  browser: Browser,
  body: string | null,
  init: { status?: number; headers?: Record<string, string>; cookies?: string[] } = {},
): Response {
  const headers = new Headers({ ...PAGE_HEADERS, ...init.headers });
  if (browser.newKey) headers.append("set-cookie", cookie(h, CSRF_COOKIE, browser.browserKey));
  for (const c of init.cookies ?? []) headers.append("set-cookie", c);
  return new Response(body, { status: init.status ?? 200, headers });
}

/** 303 See Other to a local path (after a form, so reloading does not send it again). */
export function redirect(h: Herald, browser: Browser, location: string, cookies: string[] = []): Response {
  return pageResponse(h, browser, null, { status: 303, headers: { location }, cookies });
}

/**
 * Reads a urlencoded form (what browsers send), at most 16 KiB; anything else reads as an empty form,
 * which no CSRF check accepts. So does a form holding a NUL character: no browser sends one from a
 * form, no field may hold one, and PostgreSQL text cannot store one (a sign-in with one was a 500).
 */
export async function readForm(request: Request): Promise<URLSearchParams> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type) || !request.body)
    return new URLSearchParams();
  const text = await boundedText(request, MAX_FORM_BYTES);
  if (text === null) return new URLSearchParams();
  const form = new URLSearchParams(text);
  for (const [name, value] of form)
    if (name.includes("\0") || value.includes("\0")) return new URLSearchParams();
  return form;
}

/**
 * A `next` value that is a path on this server (`/device?user_code=…`, `/dashboard`); anything else
 * (another origin, `//host`, schemes) is null, so sign-in never redirects off-site.
 */
export function localPath(next: string | null): string | null {
  if (!next) return null;
  return /^\/[a-z][a-z-]*(\/[A-Za-z0-9_-]+)*(\?[A-Za-z0-9_=&%.-]*)?$/.test(next) ? next : null;
}

/** The stylesheet response (cacheable: it changes only with the program). */
export function stylesheetResponse(css: string): Response {
  return new Response(css, {
    headers: {
      "content-type": "text/css; charset=utf-8",
      "cache-control": "public, max-age=3600",
      "x-content-type-options": "nosniff",
    },
  });
}
