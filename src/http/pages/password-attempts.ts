import type { Herald } from "../../herald.ts";
import { randomBase62 } from "../../lib/crypto.ts";
import { FailedAuthLimiter } from "../rate-limit.ts";
import { cookie, cookieName, parseCookies } from "./respond.ts";

/** A browser that has signed in to an address before: `<nonce>.<signature of nonce and address>`. */
export const KNOWN_BROWSER_COOKIE = "herald_known";
const KNOWN_BROWSER_PURPOSE = "known-browser";
const KNOWN_BROWSER_MAX_AGE_SECONDS = 365 * 24 * 60 * 60;

/** Failed sign-ins to one address, from browsers that never signed in to it, in one window. */
export const ACCOUNT_FAILURES = 10;
export const ACCOUNT_WINDOW_MS = 15 * 60 * 1000;

/** One password attempt: the buckets its failure counts in. */
export interface PasswordAttempt {
  /** The browser's known-browser nonce for this address, or null when it never signed in to it. */
  knownBrowser: string | null;
  address: string;
  email: string;
}

/**
 * The limits of every password check (docs/decisions.md, "Issue 26: guard"). A password can be
 * guessed, so past a limit it is not checked at all (429). Two limits for a browser that never signed
 * in to the address: failures per client address a minute (HERALD_AUTH_FAILURES_PER_MINUTE), and
 * failures per address (account) in 15 minutes from anywhere, which slows a guesser spread over many
 * addresses. A browser that signed in to that address before (a signed cookie) counts only its own
 * failures: an outsider can hold the account's limit full, but never locks its owner's browsers out.
 */
export class PasswordAttempts {
  private readonly byAddress: FailedAuthLimiter;
  private readonly byAccount = new FailedAuthLimiter(
    ACCOUNT_FAILURES,
    ACCOUNT_WINDOW_MS,
    "failed sign-ins to this account in 15 minutes from new browsers; " +
      "sign in from a browser you used before, or reset the password",
  );
  private readonly byBrowser: FailedAuthLimiter;

  constructor(private readonly h: Herald) {
    const perMinute = h.config.authFailuresPerMinute;
    this.byAddress = new FailedAuthLimiter(perMinute, 60_000, "failed sign-ins a minute from this address");
    this.byBrowser = new FailedAuthLimiter(perMinute, 60_000, "failed sign-ins a minute from this browser");
  }

  /** The attempt of a request to sign in as `email` from `address`. */
  attemptOf(request: Request, email: string, address: string): PasswordAttempt {
    const normalized = email.trim().toLowerCase();
    // On https the cookie carries the `__Host-` prefix, as every page cookie does (`cookieName`).
    const cookies = parseCookies(request.headers.get("cookie"));
    const value = cookies.get(cookieName(this.h, KNOWN_BROWSER_COOKIE)) ?? "";
    const [nonce, signature] = value.split(".");
    const known =
      nonce !== undefined &&
      signature !== undefined &&
      this.h.secrets.verify(KNOWN_BROWSER_PURPOSE, `${nonce}\n${normalized}`, signature);
    return { knownBrowser: known ? nonce! : null, address, email: normalized };
  }

  /** Throws 429 when the attempt's limits are used up: the password must then not be checked. */
  check(attempt: PasswordAttempt, now: number): void {
    if (attempt.knownBrowser !== null) return this.byBrowser.check(attempt.knownBrowser, now);
    this.byAddress.check(attempt.address, now);
    this.byAccount.check(attempt.email, now);
  }

  /** Counts a wrong password (or an unknown address: the answer must not tell which it was). */
  fail(attempt: PasswordAttempt, now: number): void {
    if (attempt.knownBrowser !== null) return this.byBrowser.fail(attempt.knownBrowser, now);
    this.byAddress.fail(attempt.address, now);
    this.byAccount.fail(attempt.email, now);
  }

  /** The cookie that makes this browser known for `email` after it signed in (kept a year). */
  knownBrowserCookie(attempt: PasswordAttempt): string {
    const nonce = attempt.knownBrowser ?? randomBase62(16);
    const signature = this.h.secrets.sign(KNOWN_BROWSER_PURPOSE, `${nonce}\n${attempt.email}`);
    return cookie(this.h, KNOWN_BROWSER_COOKIE, `${nonce}.${signature}`, KNOWN_BROWSER_MAX_AGE_SECONDS);
  }
}
