import type { components } from "./schema.ts";

/** The body of every error answer (application/problem+json), as the OpenAPI document describes it. */
export type Problem = components["schemas"]["Problem"];

/**
 * An error answer where the SDK throws rather than returns one (paginate): the status, and the
 * problem when the body was one (a proxy's 502 page is not).
 */
export class HeraldApiError extends Error {
  readonly status: number;
  readonly problem: Problem | null;
  readonly response: Response;

  constructor(response: Response, problem: unknown) {
    const known = isProblem(problem) ? problem : null;
    super(known ? `${known.status} ${known.code}: ${known.detail}` : `Herald answered ${response.status}`);
    this.name = "HeraldApiError";
    this.status = response.status;
    this.problem = known;
    this.response = response;
  }
}

/** Whether a parsed error body is a Herald problem. */
export function isProblem(value: unknown): value is Problem {
  const v = value as Partial<Problem> | null;
  return typeof v === "object" && v !== null && typeof v.code === "string" && typeof v.status === "number";
}
