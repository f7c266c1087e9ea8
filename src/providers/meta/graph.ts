// Meta's Graph API conventions shared by Threads, Instagram and Facebook: the error envelope
// `{"error":{message,type,code,error_subcode,is_transient,fbtrace_id}}` mapped to failure kinds, the
// X-Business-Use-Case-Usage header that says when a throttled app may call again, and one call helper.
import type { Clock } from "../../lib/clock.ts";
import { providerFetch, readJson, requestIdOf, type RetryAtParser } from "../http.ts";
import { ProviderError, type FailureKind, type ProviderDeps } from "../types.ts";

/** Graph codes that mean "throttled": app (4), user (17), page (32), custom (613) and the BUC ranges. */
export const META_RATE_LIMIT_CODES: ReadonlySet<number> = new Set([
  4, 17, 32, 613, 80000, 80001, 80002, 80003, 80004, 80005, 80006, 80007, 80008, 80009, 80014,
]);

/**
 * Subcodes of "the account published as many posts as the API allows in 24 h" (Instagram's, reused by
 * Threads).
 */
export const META_PUBLISHING_LIMIT_SUBCODES: ReadonlySet<number> = new Set([2207042]);

/**
 * When Meta throttles without saying for how long (no BUC estimate, no Retry-After): the window
 * is rolling, so Herald tries again after this long rather than hammering a throttled app.
 */
export const META_THROTTLE_FALLBACK_MS = 10 * 60_000;

/** When a publishing-limit refusal says nothing of its reset: the 24 h window frees one slot at a time. */
export const META_PUBLISHING_LIMIT_FALLBACK_MS = 60 * 60_000;

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
      : typeof value === "string" && /^\d+$/.test(value)
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
 * Maps a Graph 4xx to a failure kind:
 * - code 190 (token invalid, expired or revoked) and permission errors (10, 200–299) → `auth_revoked`:
 *   Meta's long-lived tokens cannot be renewed once dead, so only a new authorization helps;
 * - throttling codes and the publishing limit → `transient` with `retryAt` (BUC estimate, else a fallback);
 * - codes 1/2 or `is_transient` ("unexpected error, retry later") → `transient` on idempotent calls, but
 *   `outcome_unknown` on a call that creates something: Meta has published on such answers;
 * - anything else (bad parameter, refused content) → `rejected` with Meta's message.
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
  const message = `${operation}: ${meta?.message ?? "request failed"} (${label})`;
  const details = {
    operation,
    statusCode: response.status,
    errorCode: code === null ? null : String(code),
    subcode: subcode === null ? null : String(subcode),
    requestId: meta?.fbtraceId ?? response.headers.get("x-fb-trace-id") ?? requestIdOf(response.headers),
  };
  const kind = kindOf({ meta, status: response.status, idempotent: input.idempotent });
  if (kind === "transient" && (isThrottle(meta) || isPublishingLimit(meta))) {
    const fallback = isPublishingLimit(meta) ? META_PUBLISHING_LIMIT_FALLBACK_MS : META_THROTTLE_FALLBACK_MS;
    const retryAt = metaRetryAt(clock)(response.headers) ?? clock.now() + fallback;
    return new ProviderError(kind, message, { ...details, retryAt });
  }
  return new ProviderError(kind, message, details);
}

function kindOf(input: { meta: MetaError | null; status: number; idempotent: boolean }): FailureKind {
  const { meta, status, idempotent } = input;
  const code = meta?.code ?? null;
  if (code === 190 || code === 10 || (code !== null && code >= 200 && code <= 299)) return "auth_revoked";
  if (meta === null && status === 401) return "auth_revoked";
  if (isThrottle(meta) || isPublishingLimit(meta)) return "transient";
  if (code === 1 || code === 2 || meta?.isTransient) return idempotent ? "transient" : "outcome_unknown";
  return "rejected";
}

/** Whether a Graph error is throttling (the request was refused, not acted on). */
export function isThrottle(meta: MetaError | null): boolean {
  return meta?.code !== null && meta?.code !== undefined && META_RATE_LIMIT_CODES.has(meta.code);
}

/** Whether a Graph error is the per-account publishing limit (Threads: 250 posts, 1,000 replies a day). */
export function isPublishingLimit(meta: MetaError | null): boolean {
  if (
    meta?.subcode !== null &&
    meta?.subcode !== undefined &&
    META_PUBLISHING_LIMIT_SUBCODES.has(meta.subcode)
  )
    return true;
  return /publishing limit|maximum number of (posts|replies)/i.test(meta?.message ?? "");
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
