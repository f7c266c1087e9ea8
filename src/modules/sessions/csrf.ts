import { randomBase62, type SecretBox } from "../../lib/crypto.ts";

/**
 * CSRF tokens of the pages' forms: an HMAC (under a key of its own, derived from the master secret) of
 * the browser's random `herald_csrf` cookie and the session id. A form is accepted only from the
 * browser it was given to, and once signed in only within that session; another site can neither read
 * the cookie nor compute the token.
 */
const PURPOSE = "page-form";

/** A new random value for the browser's CSRF cookie. */
export function newBrowserKey(): string {
  return randomBase62(32);
}

/** The token a form carries for this browser (and session, when signed in). */
export function csrfToken(secrets: SecretBox, browserKey: string, sessionId: string | null): string {
  return secrets.sign(PURPOSE, `${browserKey}.${sessionId ?? ""}`);
}

/** Whether a posted token belongs to this browser and session (constant-time). */
export function csrfTokenValid(
  secrets: SecretBox,
  browserKey: string | null,
  sessionId: string | null,
  sent: string | null,
): boolean {
  if (!browserKey || !sent) return false;
  return secrets.verify(PURPOSE, `${browserKey}.${sessionId ?? ""}`, sent);
}
