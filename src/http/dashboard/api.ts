import type { Actor } from "../../core/actor.ts";
import { ProblemError } from "../../core/problem.ts";
import { actAs } from "../plugin.ts";
import type { Listing, Problem } from "./api-resources.ts";

/**
 * What an in-process API call answered: on success the body the route's response schema describes
 * (`T`, from `api-resources.ts`), otherwise its problem (null when the answer had no JSON body). A call
 * made without `T` cannot read its success body: every page names what it reads.
 */
export type ApiAnswer<T = never> =
  | { ok: true; status: number; headers: Headers; body: T }
  | { ok: false; status: number; headers: Headers; body: Problem | null };

/** A problem's field errors: JSON pointer → what is wrong there. */
export type FieldErrors = Map<string, string>;

/**
 * The dashboard's client of Herald's own API: every page reads and writes through `/v1` in-process, as
 * the signed-in person, so the contract's validation, scopes, workspace rules, idempotency and audit
 * apply to the browser exactly as they do to an API key.
 */
export class DashboardApi {
  constructor(
    private readonly handle: (request: Request) => Promise<Response>,
    private readonly actor: Actor,
  ) {}

  get<T = never>(path: string): Promise<ApiAnswer<T>> {
    return this.call<T>("GET", path);
  }

  /**
   * Every item of a listing, page after page (`limit=100`, following `next_cursor`): for the short lists
   * a page shows whole (people, invitations).
   */
  async all<T>(path: string): Promise<ApiAnswer<T[]>> {
    const items: T[] = [];
    const join = path.includes("?") ? "&" : "?";
    let cursor: string | null = null;
    for (;;) {
      const after: string = cursor === null ? "" : `&after=${encodeURIComponent(cursor)}`;
      const page = await this.get<Listing<T>>(`${path}${join}limit=100${after}`);
      if (!page.ok) return page;
      items.push(...page.body.data);
      cursor = page.body.next_cursor;
      if (cursor === null) return { ...page, body: items };
    }
  }

  /**
   * Sends one request under `/v1`. `idempotencyKey` comes from the form (a resubmitted form replays the
   * first answer instead of acting twice).
   */
  async call<T = never>(
    method: string,
    path: string,
    options: { body?: unknown; idempotencyKey?: string; ifMatch?: string } = {},
  ): Promise<ApiAnswer<T>> {
    // No Service-Request-Id: an in-process request keeps the ids of the page request (plugin.ts).
    const headers: Record<string, string> = {};
    if (options.body !== undefined) headers["content-type"] = "application/json";
    if (options.idempotencyKey) headers["idempotency-key"] = options.idempotencyKey;
    if (options.ifMatch) headers["if-match"] = options.ifMatch;
    const request = new Request(`http://herald.internal/v1${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const response = await this.handle(actAs(request, this.actor));
    const text = await response.text();
    const json = /json/.test(response.headers.get("content-type") ?? "") && text ? JSON.parse(text) : null;
    // One answer every page shows the same way (router.ts): confirm your address first.
    if (response.status === 403 && json?.code === "public_email_unconfirmed")
      throw new ProblemError("public_email_unconfirmed", json.detail);
    const answered = { status: response.status, headers: response.headers };
    return response.ok ? { ...answered, ok: true, body: json as T } : { ...answered, ok: false, body: json };
  }
}

/** The field errors of a problem answer (empty for success or a problem without pointers). */
export function fieldErrorsOf(answer: ApiAnswer<unknown>): FieldErrors {
  const errors: FieldErrors = new Map();
  if (answer.ok || !Array.isArray(answer.body?.errors)) return errors;
  for (const e of answer.body.errors)
    if (typeof e.pointer === "string" && !errors.has(e.pointer))
      errors.set(e.pointer, e.detail ?? "is not valid");
  return errors;
}

/** The problem a failed answer carries (null for success, or a failure without a JSON body). */
export function problemOf(answer: ApiAnswer<unknown>): Problem | null {
  return answer.ok ? null : answer.body;
}
