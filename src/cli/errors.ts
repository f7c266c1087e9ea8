// The command-line client's errors, each with its exit code (main.ts prints them as one line). Kept
// apart from the commands so the client starts without loading the server's modules.

/** A command-line mistake: printed as one line, exit code 2. */
export class UsageError extends Error {}

/** A refusal from the API (exit code 1), shown with its problem detail, code and request id. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly retryable = false,
    readonly requestId: string | null = null,
    /** The answer's Retry-After (or problem `retry.after`) in milliseconds, when it had one. */
    readonly retryAfterMs: number | null = null,
    /** The problem document as answered (a command may show more of it, like an import's rows). */
    readonly problem: unknown = null,
  ) {
    super(message);
  }
}

/**
 * The API could not be reached or its answer was lost on the way (exit code 3). An ApiError with
 * status 0, so code that retries "status 0 or 5xx" treats it as retryable.
 */
export class NetworkError extends ApiError {
  constructor(message: string) {
    super(0, message, null, true);
  }
}

/** A command that cannot go on for a reason that is neither usage nor the API's (exit code 1). */
export class CommandError extends Error {}

/** The exit code of a client error: usage 2, network 3, API and other command errors 1; null if not one. */
export function clientExitCode(error: unknown): number | null {
  if (error instanceof UsageError) return 2;
  if (error instanceof NetworkError) return 3;
  if (error instanceof ApiError || error instanceof CommandError) return 1;
  return null;
}
