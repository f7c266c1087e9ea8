import type { OriginRefusal } from "../lib/network-guard.ts";
import { ProblemError } from "./problem.ts";

/** Seconds a client is told to wait before sending a request again whose host did not resolve. */
export const UNRESOLVABLE_RETRY_AFTER_SECONDS = 30;

/**
 * The problem a refused origin check becomes, for the body field at `pointer`: a host that did not
 * resolve is 503 `public_unavailable` (retryable, `Retry-After`), since DNS may answer later; every
 * other refusal is 400 `public_invalid_request`. `subject` starts the sentence (default: the field).
 */
export function originCheckProblem(check: OriginRefusal, pointer: string, subject?: string): ProblemError {
  const what = subject ?? `\`${pointer.slice(1).replaceAll("/", ".")}\``;
  if (check.reason === "unresolvable") {
    const detail = `${what} ${check.detail}; this may be temporary, try again later.`;
    return new ProblemError("public_unavailable", detail, {
      retryAfter: UNRESOLVABLE_RETRY_AFTER_SECONDS,
      errors: [{ pointer, code: "unresolvable", detail: check.detail }],
    });
  }
  return new ProblemError("public_invalid_request", `${what} ${check.detail}.`, {
    errors: [{ pointer, code: "custom", detail: check.detail }],
  });
}
