import type { Actor } from "../../core/actor.ts";
import { actAs } from "../plugin.ts";

/** What an in-process API call answered. */
export interface ApiAnswer {
  status: number;
  ok: boolean;
  headers: Headers;
  /** The parsed JSON body (a resource, a list or a problem), or null. */
  body: any;
}

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

  get(path: string): Promise<ApiAnswer> {
    return this.call("GET", path);
  }

  /**
   * Sends one request under `/v1`. `idempotencyKey` comes from the form (a resubmitted form replays the
   * first answer instead of acting twice).
   */
  async call(
    method: string,
    path: string,
    options: { body?: unknown; idempotencyKey?: string; ifMatch?: string } = {},
  ): Promise<ApiAnswer> {
    const headers: Record<string, string> = { "service-request-id": this.actor.requestId };
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
    return { status: response.status, ok: response.ok, headers: response.headers, body: json };
  }
}

/** The field errors of a problem answer (empty for success or a problem without pointers). */
export function fieldErrorsOf(answer: ApiAnswer): FieldErrors {
  const errors: FieldErrors = new Map();
  if (answer.ok || !Array.isArray(answer.body?.errors)) return errors;
  for (const e of answer.body.errors as { pointer?: string; detail?: string }[])
    if (typeof e.pointer === "string" && !errors.has(e.pointer))
      errors.set(e.pointer, e.detail ?? "is not valid");
  return errors;
}
