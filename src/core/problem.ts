/**
 * Stable error codes: the contract's four, DESIGN.md's table, the rails' 405/415/431, the CLI
 * authorization's outcomes and what connecting an account can meet (docs/decisions.md).
 */
const CATALOG = {
  public_invalid_request: {
    status: 400,
    title: "Invalid request",
    category: "validation",
    userAction: "check_request",
  },
  public_authentication_required: {
    status: 401,
    title: "Authentication required",
    category: "authentication",
    userAction: "check_credentials",
  },
  public_subscription_required: {
    status: 402,
    title: "Subscription required",
    category: "billing",
    userAction: "upgrade_plan",
  },
  public_usage_limit_reached: {
    status: 402,
    title: "Usage limit reached",
    category: "billing",
    userAction: "upgrade_plan",
  },
  public_scope_missing: {
    status: 403,
    title: "Scope missing",
    category: "permission",
    userAction: "check_credentials",
  },
  public_live_credential_required: {
    status: 403,
    title: "Live credential required",
    category: "permission",
    userAction: "check_credentials",
  },
  public_signup_closed: {
    status: 403,
    title: "Signup closed",
    category: "permission",
    userAction: "check_credentials",
  },
  public_email_unconfirmed: {
    status: 403,
    title: "Address not confirmed",
    category: "permission",
    userAction: "check_credentials",
  },
  public_cli_authorization_denied: {
    status: 403,
    title: "CLI authorization denied",
    category: "permission",
    userAction: "check_credentials",
  },
  public_not_found: { status: 404, title: "Not found", category: "not_found", userAction: "check_request" },
  public_method_not_allowed: {
    status: 405,
    title: "Method not allowed",
    category: "validation",
    userAction: "check_request",
  },
  public_conflict: { status: 409, title: "Conflict", category: "conflict", userAction: "inspect_resource" },
  public_idempotency_key_reused: {
    status: 409,
    title: "Idempotency key reused",
    category: "conflict",
    userAction: "check_request",
  },
  public_idempotency_outcome_unknown: {
    status: 409,
    title: "Idempotency outcome unknown",
    category: "conflict",
    userAction: "inspect_resource",
  },
  public_post_group_channel_conflict: {
    status: 409,
    title: "Post group channel conflict",
    category: "conflict",
    userAction: "check_request",
  },
  public_version_conflict: {
    status: 409,
    title: "Version conflict",
    category: "conflict",
    userAction: "inspect_resource",
  },
  public_cli_authorization_expired: {
    status: 409,
    title: "CLI authorization expired",
    category: "conflict",
    userAction: "check_request",
  },
  public_cli_authorization_consumed: {
    status: 409,
    title: "CLI authorization already exchanged",
    category: "conflict",
    userAction: "check_request",
  },
  public_precondition_failed: {
    status: 412,
    title: "Precondition failed",
    category: "conflict",
    userAction: "inspect_resource",
  },
  public_payload_too_large: { status: 413, title: "Payload too large", category: null, userAction: null },
  public_unsupported_media_type: {
    status: 415,
    title: "Unsupported media type",
    category: "validation",
    userAction: "check_request",
  },
  public_unpublishable: {
    status: 422,
    title: "Cannot be published",
    category: "validation",
    userAction: "check_request",
  },
  public_provider_credentials_refused: {
    status: 422,
    title: "Credentials refused by the network",
    category: "validation",
    userAction: "check_request",
  },
  public_provider_app_not_configured: {
    status: 422,
    title: "Network app not configured",
    category: "configuration",
    userAction: "contact_operator",
  },
  public_precondition_required: {
    status: 428,
    title: "Precondition required",
    category: "validation",
    userAction: "check_request",
  },
  public_rate_limited: {
    status: 429,
    title: "Rate limit exceeded",
    category: "rate_limit",
    userAction: "retry_later",
  },
  public_request_header_too_large: {
    status: 431,
    title: "Request header too large",
    category: "validation",
    userAction: "check_request",
  },
  public_internal_error: {
    status: 500,
    title: "Internal error",
    category: "internal",
    userAction: "retry_later",
  },
  public_provider_error: {
    status: 502,
    title: "Provider error",
    category: "provider",
    userAction: "retry_later",
  },
  public_provider_unreachable: {
    status: 502,
    title: "Network unreachable",
    category: "provider",
    userAction: "check_request",
  },
  public_unavailable: {
    status: 503,
    title: "Service unavailable",
    category: "unavailable",
    userAction: "retry_later",
  },
} as const;

/** Every problem code Herald answers with. */
export type ProblemCode = keyof typeof CATALOG;

/** The catalogue, for the error reference page and the OpenAPI document. */
export const problemCatalog: Readonly<
  Record<ProblemCode, { status: number; title: string; category: string | null; userAction: string | null }>
> = CATALOG;

/**
 * One field-level problem; `pointer` is a JSON pointer into the body, `parameter` names a query parameter
 * or header.
 */
export interface FieldError {
  pointer: string;
  code: string;
  detail: string;
  parameter?: string;
}

/** Whether the same request may be sent again, and when. */
export type RetrySafety = "safe" | "unsafe" | "not_retryable";

/** A failure that becomes an `application/problem+json` response; throw it from anywhere. */
export class ProblemError extends Error {
  readonly status: number;
  readonly errors: FieldError[];
  readonly retryable: boolean;
  readonly retrySafety: RetrySafety;
  readonly retryAfter: number | null;
  readonly headers: Record<string, string>;
  readonly userAction: string | null;
  /** Members of the problem document beside `errors` (a CSV import's `rows`). */
  readonly extensions: Record<string, unknown>;

  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    options: {
      errors?: FieldError[];
      retryAfter?: number;
      retrySafety?: RetrySafety;
      headers?: Record<string, string>;
      userAction?: string;
      extensions?: Record<string, unknown>;
    } = {},
  ) {
    super(detail);
    const entry = CATALOG[code];
    this.status = entry.status;
    this.errors = options.errors ?? [];
    this.retryAfter = options.retryAfter ?? null;
    this.retrySafety =
      options.retrySafety ?? (entry.status === 429 || entry.status >= 500 ? "safe" : "not_retryable");
    this.retryable = this.retrySafety !== "not_retryable";
    this.headers = options.headers ?? {};
    this.userAction = options.userAction ?? entry.userAction;
    this.extensions = options.extensions ?? {};
  }
}

/** 400 `public_invalid_request` with one field error. */
export function invalid(pointer: string, detail: string, parameter?: string): ProblemError {
  const error: FieldError = { pointer, code: "custom", detail };
  if (parameter) error.parameter = parameter;
  return new ProblemError("public_invalid_request", parameter ? `Invalid ${parameter}: ${detail}` : detail, {
    errors: [error],
  });
}

/** 404 that never says whether the thing exists elsewhere. */
export function notFound(what: string): ProblemError {
  return new ProblemError("public_not_found", `No such ${what}.`);
}

/** Builds the problem+json response (the 413 shape omits category, retry and user_action). */
export function problemResponse(problem: ProblemError, requestId: string, docsUrl: string): Response {
  const entry = CATALOG[problem.code];
  const body: Record<string, unknown> = {
    type: `${docsUrl}/reference/errors#${problem.code}`,
    title: entry.title,
    status: problem.status,
    detail: problem.detail,
    instance: `urn:service:request:${requestId}`,
    code: problem.code,
  };
  if (problem.status !== 413) body.category = entry.category;
  body.request_id = requestId;
  body.retryable = problem.retryable;
  if (problem.status !== 413) {
    body.retry = { safety: problem.retrySafety, after: problem.retryAfter };
    body.user_action = problem.userAction;
  }
  body.errors = problem.errors;
  for (const [name, value] of Object.entries(problem.extensions)) if (!(name in body)) body[name] = value;
  const headers: Record<string, string> = {
    "content-type": "application/problem+json",
    "service-request-id": requestId,
    ...problem.headers,
  };
  if (problem.retryAfter !== null) headers["retry-after"] = String(problem.retryAfter);
  return new Response(JSON.stringify(body), { status: problem.status, headers });
}
