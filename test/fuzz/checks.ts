// What every answer must be: a status the document declares for the operation (never a 500), a body
// valid against the declared schema, the headers the document marks `required` (Service-Request-Id
// always, ETag on resources, Retry-After on 202 and 429), and every error a problem+json whose `code`
// is in the catalogue with that status.
import { problemCatalog, type ProblemCode } from "../../src/core/problem.ts";
import type { Operation, ResponseValidator } from "./document.ts";
import type { Answer } from "./send.ts";

/** Every way `answer` breaks the contract of `op`; empty when it keeps it. */
export function violations(op: Operation, answer: Answer, validator: ResponseValidator): string[] {
  const out: string[] = [];
  const { status, headers } = answer;
  const declared = op.responses.get(status);
  if (status === 500) out.push("500: an internal error");
  if (!declared) out.push(`status ${status} is not declared for ${op.name}`);
  if (!headers.get("service-request-id")) out.push("no Service-Request-Id header");
  if ((status === 429 || status === 503) && !headers.get("retry-after"))
    out.push(`${status} without Retry-After`);
  const type = headers.get("content-type") ?? "";
  if (answer.parseError) out.push(`body is not the JSON its content-type says: ${answer.parseError}`);
  if (status >= 400) out.push(...problemViolations(answer, type));
  else if (status >= 200 && status < 300 && !type.startsWith("application/json"))
    out.push(`success answered as ${type || "no content-type"}, not application/json`);
  if (!declared) return out;
  for (const header of declared.required)
    if (!headers.get(header)) out.push(`no ${header} header (documented as required)`);
  // Link is documented on listings without `required`: it is there exactly when another page is.
  const body = answer.body as Record<string, unknown> | undefined;
  if (declared.headers.includes("link") && body?.has_more === true && !headers.get("link"))
    out.push("has_more is true but there is no Link header");
  if (declared.schema && !answer.parseError) {
    const errors = validator.errors(declared.schema, answer.body);
    if (errors) out.push(`body does not match the ${status} schema: ${errors.join("; ")}`);
  }
  return out;
}

function problemViolations(answer: Answer, type: string): string[] {
  const out: string[] = [];
  if (type !== "application/problem+json")
    out.push(`error answered as ${type || "no content-type"}, not problem+json`);
  const body = answer.body as Record<string, any> | undefined;
  if (!body || typeof body !== "object") return [...out, "error without a problem body"];
  const entry = problemCatalog[body.code as ProblemCode];
  if (!entry) out.push(`code ${JSON.stringify(body.code)} is not in the error catalogue`);
  else if (entry.status !== answer.status)
    out.push(`code ${body.code} is a ${entry.status}, answered ${answer.status}`);
  if (body.status !== answer.status) out.push(`problem status ${body.status} differs from ${answer.status}`);
  if (body.request_id !== answer.headers.get("service-request-id"))
    out.push("request_id differs from the header");
  return out;
}
