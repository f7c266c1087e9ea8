// Meta's Graph API conventions shared by Threads, Instagram and Facebook: the error envelope
// `{"error":{message,type,code,error_subcode,is_transient,fbtrace_id}}` mapped to failure kinds through
// Meta's error table (errors.ts), the X-Business-Use-Case-Usage header that says when a throttled app
// may call again, and one call helper.
import type { Clock } from "../../lib/clock.ts";
import { providerFetch, readJson, requestIdOf, type RetryAtParser } from "../http.ts";
import { ProviderError, type FailureKind, type ProviderDeps } from "../types.ts";
import { classifyMetaError, metaErrorRow, type MetaErrorClass } from "./errors.ts";

export { META_PUBLISHING_LIMIT_FALLBACK_MS, META_THROTTLE_FALLBACK_MS } from "./errors.ts";

/** The fields of Meta's error envelope Herald reads; null where the body did not say. */
export interface MetaError {
  message: string | null;
  type: string | null;
  code: number | null;
  subcode: number | null;
  /** Meta's own "retrying may work" flag (code 1/2 errors carry it). */
  isTransient: boolean;
  fbtraceId: string | null;
}

/** Reads `{"error":{…}}` from a parsed body, or null when the body is not Meta's envelope. */
export function readMetaError(body: Record<string, any> | null): MetaError | null {
  const error = body?.error;
  if (error === null || typeof error !== "object" || Array.isArray(error)) return null;
  const num = (value: unknown) =>
    typeof value === "number" && Number.isInteger(value)
      ? value
      : typeof value === "string" && /^-?\d+$/.test(value)
        ? Number(value)
        : null;
  const str = (value: unknown) => (typeof value === "string" && value !== "" ? value : null);
  return {
    message: str(error.error_user_msg) ?? str(error.message),
    type: str(error.type),
    code: num(error.code),
    subcode: num(error.error_subcode),
    isTransient: error.is_transient === true,
    fbtraceId: str(error.fbtrace_id),
  };
}

/**
 * Parses when a throttled app may call again: the largest `estimated_time_to_regain_access`
 * (minutes) of X-Business-Use-Case-Usage, else a Retry-After in seconds; null when neither says.
 */
export function metaRetryAt(clock: Clock): RetryAtParser {
  return (headers) => {
    const minutes = regainMinutes(headers.get("x-business-use-case-usage"));
    if (minutes !== null && minutes > 0) return clock.now() + minutes * 60_000;
    const seconds = headers.get("retry-after");
    if (seconds && /^\d+$/.test(seconds)) return clock.now() + Number(seconds) * 1000;
    return null;
  };
}

/** `{"<business id>":[{"type":…,"estimated_time_to_regain_access":N},…],…}` → the largest N, or null. */
function regainMinutes(raw: string | null): number | null {
  if (!raw) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== "object") return null;
  let largest: number | null = null;
  for (const entries of Object.values(parsed as Record<string, unknown>)) {
    for (const entry of Array.isArray(entries) ? entries : []) {
      const value = (entry as { estimated_time_to_regain_access?: unknown } | null)
        ?.estimated_time_to_regain_access;
      if (typeof value === "number" && Number.isFinite(value)) largest = Math.max(largest ?? 0, value);
    }
  }
  return largest;
}

/**
 * Maps a Graph 4xx to a failure through Meta's error table (errors.ts), by code and subcode:
 * - `wait` (9007/2207027, "not ready, please wait") → `transient`: the caller waits and calls again
 *   (the container flow does; `isMetaWait` recognises it);
 * - `throttled` (4, 17, 32, 613, the BUC codes, the publishing limit) → `transient` with `retryAt`
 *   (BUC estimate, else Retry-After, else the row's fallback);
 * - `auth` (190, 10, 102, 200–299) → `auth_revoked`: Meta's long-lived tokens cannot be renewed once
 *   dead, so only a new authorization helps;
 * - `server` (1, 2, Instagram's -1/-2, or `is_transient`) → `transient` on idempotent calls, but
 *   `outcome_unknown` on a call that creates something: Meta has published on such answers;
 * - `permanent` (refused content, or a restricted account such as 4/2207051) → `rejected` with Meta's
 *   message and the row's user action; never retried automatically.
 * A 401 without Meta's envelope is `auth_revoked`; any other unknown error is `rejected`.
 */
export async function metaGraphError(input: {
  operation: string;
  response: Response;
  clock: Clock;
  idempotent: boolean;
}): Promise<ProviderError> {
  const { operation, response, clock } = input;
  const meta = readMetaError(await readJson(response));
  const code = meta?.code ?? null;
  const subcode = meta?.subcode ?? null;
  const label =
    code === null ? `HTTP ${response.status}` : `Graph error ${code}${subcode ? `/${subcode}` : ""}`;
  const hint = metaErrorRow(code, subcode)?.hint;
  const message = `${operation}: ${meta?.message ?? "request failed"} (${label})${hint ? `. ${hint}` : ""}`;
  const details = {
    operation,
    statusCode: response.status,
    errorCode: code === null ? null : String(code),
    subcode: subcode === null ? null : String(subcode),
    requestId: meta?.fbtraceId ?? response.headers.get("x-fb-trace-id") ?? requestIdOf(response.headers),
  };
  if (meta === null && response.status === 401) return new ProviderError("auth_revoked", message, details);
  const kind = classifyMetaError({ code, subcode, isTransient: meta?.isTransient });
  switch (kind.kind) {
    case "throttled": {
      const retryAt = metaRetryAt(clock)(response.headers) ?? clock.now() + kind.fallbackMs;
      return new ProviderError("transient", message, { ...details, retryAt });
    }
    case "permanent":
      return new ProviderError("rejected", message, { ...details, userAction: kind.userAction });
    default:
      return new ProviderError(failureKind(kind, input.idempotent), message, details);
  }
}

/** The failure kind of a class that carries neither a retry time nor a user action. */
function failureKind(
  kind: Exclude<MetaErrorClass, { kind: "throttled" | "permanent" }>,
  idempotent: boolean,
): FailureKind {
  if (kind.kind === "auth") return "auth_revoked";
  if (kind.kind === "server" && !idempotent) return "outcome_unknown";
  return "transient";
}

/** What one Graph call answered: the parsed JSON body and the response (status, headers). */
export interface MetaAnswer {
  body: Record<string, any>;
  response: Response;
}

/**
 * One Graph call: providerFetch (network failures, 429 with the BUC retry time, 5xx) then the
 * envelope mapping for other 4xx. A 2xx body that is not JSON is `transient` on idempotent calls and
 * `outcome_unknown` otherwise (the call went through; what it did is unknown).
 */
export async function metaGraphCall(input: {
  deps: ProviderDeps;
  operation: string;
  url: string;
  init?: RequestInit;
  idempotent: boolean;
}): Promise<MetaAnswer> {
  const { deps, operation, idempotent } = input;
  const response = await providerFetch({
    deps,
    operation,
    url: input.url,
    init: input.init,
    idempotent,
    retryAt: metaRetryAt(deps.clock),
  });
  if (!response.ok) throw await metaGraphError({ operation, response, clock: deps.clock, idempotent });
  const body = await readJson(response);
  if (body === null) {
    throw new ProviderError(
      idempotent ? "transient" : "outcome_unknown",
      `${operation}: the response (${response.status}) is not JSON`,
      { operation, statusCode: response.status, requestId: response.headers.get("x-fb-trace-id") },
    );
  }
  return { body, response };
}

/** The attempt-log details of a Graph call that went through (Meta's trace id as the request id). */
export function metaProvider(operation: string, answer: MetaAnswer) {
  return {
    operation,
    requestId: answer.response.headers.get("x-fb-trace-id") ?? requestIdOf(answer.response.headers),
    statusCode: answer.response.status,
  };
}
