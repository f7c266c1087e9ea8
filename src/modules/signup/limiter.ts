import { ProblemError } from "../../core/problem.ts";

/**
 * Requests per client address in fixed windows, in memory (per process, like the API's other limits:
 * a restart forgets the counts). Guards the operations anyone may call without a key.
 */
export class AddressLimiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly what: string,
  ) {}

  /** Counts one request from `address` at `now`; 429 with Retry-After once the window's limit is used. */
  hit(address: string, now: number): void {
    const start = now - (now % this.windowMs);
    let window = this.windows.get(address);
    if (!window || window.start !== start) {
      if (this.windows.size > 10_000)
        for (const [key, old] of this.windows) if (old.start !== start) this.windows.delete(key);
      window = { start, count: 0 };
      this.windows.set(address, window);
    }
    window.count += 1;
    if (window.count <= this.limit) return;
    const retryAfter = Math.max(1, Math.ceil((start + this.windowMs - now) / 1000));
    throw new ProblemError("public_rate_limited", `More than ${this.limit} ${this.what} from this address.`, {
      retryAfter,
    });
  }
}

const startLimiters = new WeakMap<object, AddressLimiter>();

/**
 * The one limiter of signup and CLI-authorization starts per client address
 * (HERALD_SIGNUP_REQUESTS_PER_HOUR), shared by the API and the /signup page so neither doubles it.
 */
export function signupStartLimiter(h: { config: { signupRequestsPerHour: number } }): AddressLimiter {
  let limiter = startLimiters.get(h);
  if (!limiter) {
    limiter = new AddressLimiter(
      h.config.signupRequestsPerHour,
      3_600_000,
      "signups and CLI authorizations an hour",
    );
    startLimiters.set(h, limiter);
  }
  return limiter;
}
