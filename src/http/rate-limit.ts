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
      throw new ProblemError("public_rate_limited", `More than ${this.perMinute} requests a minute with this API key.`, { retryAfter });
    }
  }

  private prune(currentStart: number): void {
    for (const [key, window] of this.windows) if (window.start !== currentStart) this.windows.delete(key);
  }
}
