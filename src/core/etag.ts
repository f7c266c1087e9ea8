import { createHash } from "node:crypto";
import { ProblemError } from "./problem.ts";

/** A strong ETag of a resource's JSON representation. */
export function etagOf(resource: unknown): string {
  return `"${createHash("sha256").update(JSON.stringify(resource)).digest("base64url").slice(0, 27)}"`;
}

/**
 * The shared If-Match check: 428 when `required` and absent, 412 when no listed tag matches the
 * current one (`*` matches any existing resource).
 */
export function checkIfMatch(ifMatch: string | null, currentEtag: string, required: boolean): void {
  if (ifMatch === null || ifMatch.trim() === "") {
    if (required) throw new ProblemError("public_precondition_required", "This operation needs an If-Match header with the resource's current ETag.");
    return;
  }
  const tags = ifMatch.split(",").map((t) => t.trim());
  if (tags.includes("*") || tags.includes(currentEtag)) return;
  throw new ProblemError("public_precondition_failed", "The resource has changed since the ETag in If-Match was issued; fetch it again.");
}
