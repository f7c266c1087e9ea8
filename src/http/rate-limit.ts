import { ProblemError } from "../core/problem.ts";

/**
 * Fixed one-minute windows per credential, kept in memory: a limit protects this process, and a
 * restart forgetting the counts is harmless.
 */
export class RateLimiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly perMinute: number) {}

  /** Counts one request for `key` at `now`; throws 429 with Retry-After when over the limit. */
  hit(key: string, now: number): void {
    const windowStart = now - (now % 60_000);
    let window = this.windows.get(key);
    if (!window || window.start !== windowStart) {
      if (this.windows.size > 10_000) this.prune(windowStart);
      window = { start: windowStart, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    if (window.count > this.perMinute) {
      const retryAfter = Math.max(1, Math.ceil((windowStart + 60_000 - now) / 1000));
      throw new ProblemError(
        "public_rate_limited",
        `More than ${this.perMinute} requests a minute with this API key.`,
        { retryAfter },
      );
    }
  }

  private prune(currentStart: number): void {
    for (const [key, window] of this.windows) if (window.start !== currentStart) this.windows.delete(key);
  }
}

/**
 * Failures per key (a client address, an account, a browser) in fixed windows, in memory (per
 * process): once a key has used up its failures, `check` throws 429 with Retry-After until the window
 * ends. Successes are not counted. What a caller refuses with it is the caller's choice: the API
 * refuses only further failures (a valid key is never refused), the sign-in page refuses to check a
 * password at all (a password can be guessed; a key cannot).
 */
export class FailedAuthLimiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
    private readonly what = `failed authentications a minute from this address`,
  ) {}

  /** Whether any key has failed lately (when none has, `check` need not know the key). */
  get active(): boolean {
    return this.windows.size > 0;
  }

  /** Throws 429 with Retry-After when `key` has used up its failures in the current window. */
  check(key: string, now: number): void {
    const windowStart = now - (now % this.windowMs);
    const window = this.windows.get(key);
    if (!window || window.start !== windowStart || window.count < this.limit) return;
    const retryAfter = Math.max(1, Math.ceil((windowStart + this.windowMs - now) / 1000));
    throw new ProblemError("public_rate_limited", `More than ${this.limit} ${this.what}.`, { retryAfter });
  }

  /** Counts one failure of `key` at `now`. */
  fail(key: string, now: number): void {
    const windowStart = now - (now % this.windowMs);
    const window = this.windows.get(key);
    if (window && window.start === windowStart) {
      window.count += 1;
      return;
    }
    if (this.windows.size > 10_000) {
      for (const [old, w] of this.windows) if (w.start !== windowStart) this.windows.delete(old);
    }
    this.windows.set(key, { start: windowStart, count: 1 });
  }
}
