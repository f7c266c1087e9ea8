/** How the client retries (pass `retries: false` to createHeraldClient to send every request once). */
export interface RetryOptions {
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /**
   * The longest wait accepted before a retry, in seconds (default 60). When the server asks for a longer
   * `Retry-After`, its answer is handed to the caller instead of waiting.
   */
  maxDelaySeconds?: number;
  /** Waits between attempts (default a timer); tests pass a recorder. */
  sleep?: (ms: number) => Promise<void>;
  /** The clock that an HTTP-date `Retry-After` is read against, in ms since the epoch (default Date.now). */
  now?: () => number;
}

type Fetch = (request: Request) => Promise<Response>;

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The waits without a `Retry-After` (network errors, a 503 without one): 0.5 s, 1 s, 2 s, … */
const BACKOFF_BASE_MS = 500;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Whether sending the request again cannot do its work twice: a read, a write carrying an
 * Idempotency-Key (the server answers a repeat with the first result), or a conditional write
 * (If-Match: a repeat after success finds a new ETag and is refused).
 */
function safeToRepeat(request: Request): boolean {
  return (
    !WRITE_METHODS.has(request.method) ||
    request.headers.has("idempotency-key") ||
    request.headers.has("if-match")
  );
}

/**
 * The wait a `Retry-After` value asks for, in ms: integer seconds or an HTTP date; null when absent or
 * unreadable.
 */
export function retryAfterMs(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/**
 * A fetch that retries what may be retried: 429 (the rate limiter refused the request before any work)
 * always; 503 and network errors only when the request is safe to repeat. Nothing else is retried: a
 * write's 4xx or 500 is its answer. The wait honours `Retry-After`; attempts are bounded.
 */
export function retryingFetch(send: Fetch, options: RetryOptions = {}): Fetch {
  const maxRetries = options.maxRetries ?? 2;
  const maxDelayMs = (options.maxDelaySeconds ?? 60) * 1000;
  const sleep = options.sleep ?? defaultSleep;
  const now = options.now ?? Date.now;
  return async (request) => {
    // The body is read once so that every attempt sends the same bytes.
    const body = request.body === null ? null : await request.arrayBuffer();
    const attempt = () =>
      send(
        new Request(request.url, {
          method: request.method,
          headers: request.headers,
          body,
          signal: request.signal,
          redirect: request.redirect,
        }),
      );
    for (let retry = 0; ; retry++) {
      const backoffMs = BACKOFF_BASE_MS * 2 ** retry;
      let response: Response;
      try {
        response = await attempt();
      } catch (error) {
        if (retry >= maxRetries || request.signal.aborted || !safeToRepeat(request)) throw error;
        await sleep(Math.min(backoffMs, maxDelayMs));
        continue;
      }
      const retryable = response.status === 429 || (response.status === 503 && safeToRepeat(request));
      if (!retryable || retry >= maxRetries) return response;
      const waitMs = retryAfterMs(response.headers.get("retry-after"), now()) ?? backoffMs;
      if (waitMs > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(waitMs);
      if (request.signal.aborted) throw request.signal.reason;
    }
  };
}
