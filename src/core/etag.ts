import { createHash } from "node:crypto";
import { invalid, ProblemError } from "./problem.ts";

/** A strong ETag of a resource's JSON representation. */
export function etagOf(resource: unknown): string {
  return etagOfJson(JSON.stringify(resource));
}

/** The ETag of a resource already serialized (the response body), so it is serialized once. */
export function etagOfJson(json: string): string {
  return `"${createHash("sha256").update(json).digest("base64url").slice(0, 27)}"`;
}

/** RFC 9110 If-Match: `*`, or a comma-separated list of (optionally weak) quoted entity tags. */
const ENTITY_TAG = String.raw`(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"`;
const IF_MATCH = new RegExp(String.raw`^(?:\*|${ENTITY_TAG}(?:[ \t]*,[ \t]*${ENTITY_TAG})*)$`);

/**
 * The shared If-Match check: 428 when `required` and absent, 400 when it is not `*` or a list of
 * entity tags, 412 when no listed tag matches the current one (`*` matches any existing resource).
 */
export function checkIfMatch(ifMatch: string | null, currentEtag: string, required: boolean): void {
  if (ifMatch === null || ifMatch.trim() === "") {
    if (required)
      throw new ProblemError(
        "public_precondition_required",
        "This operation needs an If-Match header with the resource's current ETag.",
      );
    return;
  }
  if (!IF_MATCH.test(ifMatch.trim())) {
    throw invalid("", 'must be * or a list of quoted entity tags such as "abc"', "If-Match");
  }
  const tags = ifMatch.split(",").map((t) => t.trim());
  if (tags.includes("*") || tags.includes(currentEtag)) return;
  throw new ProblemError(
    "public_precondition_failed",
    "The resource has changed since the ETag in If-Match was issued; fetch it again.",
  );
}
