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
 * Failed authentications per client address in fixed one-minute windows, in memory (per process):
 * past the limit every request from the address is 429 until the window ends, before its key is
 * looked at, so keys cannot be guessed quickly. Successful authentications are not counted.
 */
export class FailedAuthLimiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(private readonly perMinute: number) {}

  /** Whether any address has failed lately (when none has, `check` need not know the address). */
  get active(): boolean {
    return this.windows.size > 0;
  }

  /** Throws 429 with Retry-After when `address` has used up its failures in the current window. */
  check(address: string, now: number): void {
    const windowStart = now - (now % 60_000);
    const window = this.windows.get(address);
    if (!window || window.start !== windowStart || window.count < this.perMinute) return;
    const retryAfter = Math.max(1, Math.ceil((windowStart + 60_000 - now) / 1000));
    const detail = `More than ${this.perMinute} failed authentications a minute from this address.`;
    throw new ProblemError("public_rate_limited", detail, { retryAfter });
  }

  /** Counts one failed authentication from `address` at `now`. */
  fail(address: string, now: number): void {
    const windowStart = now - (now % 60_000);
    const window = this.windows.get(address);
    if (window && window.start === windowStart) {
      window.count += 1;
      return;
    }
    if (this.windows.size > 10_000) {
      for (const [key, old] of this.windows) if (old.start !== windowStart) this.windows.delete(key);
    }
    this.windows.set(address, { start: windowStart, count: 1 });
  }
}
