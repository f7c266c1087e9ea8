// How Herald talks to Google's APIs for YouTube (providers.md §9.4): one call helper, and the mapping
// of Google's error envelope `{"error":{code,message,errors:[{domain,reason,message}]}}` and of the
// OAuth endpoint's `{"error","error_description"}` to failure kinds. Quotas reset at midnight Pacific.
import { DateTime } from "luxon";
import { providerFetch, readJson, responseDetails } from "../http.ts";
import { ProviderError, type ProviderDeps } from "../types.ts";

/** The YouTube calls Herald makes, as operation names in errors and attempt logs. */
export const YOUTUBE_OPERATIONS = {
  token: "POST /token",
  channels: "GET /youtube/v3/channels",
  session: "POST /upload/youtube/v3/videos?uploadType=resumable",
  chunk: "PUT <upload session>",
  probe: "PUT <upload session> (status)",
  videos: "GET /youtube/v3/videos",
} as const;

/** Where YouTube's daily quotas reset: midnight in this zone. */
export const YOUTUBE_QUOTA_ZONE = "America/Los_Angeles";

/** When Google throttles without a Retry-After: its rate limits are per minute. */
export const YOUTUBE_RATE_LIMIT_WAIT_MS = 60_000;

/** Reasons that mean a daily quota is spent: nothing helps before the Pacific midnight reset. */
const QUOTA_REASONS = new Set(["quotaExceeded", "uploadLimitExceeded", "dailyLimitExceeded"]);

/** Reasons that mean "too fast": retry after a short wait. */
const RATE_REASONS = new Set(["rateLimitExceeded", "userRateLimitExceeded"]);

/** Reasons on a 401/403 that a token refresh cannot fix: the account must be connected again. */
const REAUTHORIZE_REASONS = new Set([
  "youtubeSignupRequired",
  "insufficientPermissions",
  "authenticatedUserAccountClosed",
  "authenticatedUserAccountSuspended",
  "accountDelegationForbidden",
]);

/** The next midnight in Los Angeles after `now` (epoch ms), when YouTube's daily quotas reset. */
export function nextPacificMidnight(now: number): number {
  return DateTime.fromMillis(now, { zone: YOUTUBE_QUOTA_ZONE }).startOf("day").plus({ days: 1 }).toMillis();
}

/** An origin without its trailing slashes. */
export function youtubeBase(origin: string): string {
  return origin.replace(/\/+$/, "");
}

/** The bearer header of a destination's (or a fresh) access token. */
export function bearer(accessToken: unknown): Record<string, string> {
  return { authorization: `Bearer ${String(accessToken ?? "")}` };
}

/**
 * One call to Google: the Response when it is 2xx (or a status in `allow`), else a typed
 * ProviderError (see `youtubeError`). A 429 keeps the shared classification and gains Google's
 * reason and the right `retryAt` (Pacific midnight for a spent quota, else Retry-After or a minute).
 */
export async function youtubeCall(input: {
  deps: ProviderDeps;
  operation: string;
  url: string;
  init?: RequestInit;
  idempotent: boolean;
  allow?: number[];
  /** An upload body: sent on a connection of its own (see `providerFetch`). */
  freshConnection?: boolean;
}): Promise<Response> {
  const { deps, operation, allow = [] } = input;
  const response = await providerFetch({
    ...input,
    limitError: (limited) => youtubeError({ operation, response: limited, now: deps.clock.now() }),
    // A 3xx the caller expects (the resumable upload's 308 Resume Incomplete) is an answer.
    answerStatuses: allow,
  });
  if (response.ok || allow.includes(response.status)) return response;
  throw await youtubeError({ operation, response, now: deps.clock.now() });
}

/** A Google call answering JSON. */
export async function youtubeJson(input: Parameters<typeof youtubeCall>[0]): Promise<Record<string, any>> {
  const response = await youtubeCall(input);
  const body = await readJson(response);
  if (body === null)
    throw new ProviderError(
      "transient",
      `${input.operation}: the response (${response.status}) is not JSON`,
      responseDetails({ operation: input.operation, response }),
    );
  return body;
}

/**
 * Maps a Google 4xx (or 429) to a kind:
 * - `quotaExceeded`, `uploadLimitExceeded`, `dailyLimitExceeded` → `transient`, retried at the next
 *   midnight Pacific (when YouTube's quotas reset);
 * - `rateLimitExceeded`, `userRateLimitExceeded`, any 429 → `transient` after Retry-After or a minute;
 * - the token endpoint's OAuth errors (`invalid_grant`: revoked or expired grant, a used code) →
 *   `auth_revoked`;
 * - 401 → `auth_expired` (one-hour tokens: refresh, then retry), except `youtubeSignupRequired`;
 * - no channel, missing permission, closed or suspended account → `auth_revoked`;
 * - everything else (invalid title, description, tags, category, a forbidden upload) → `rejected`.
 */
export async function youtubeError(input: {
  operation: string;
  response: Response;
  now: number;
}): Promise<ProviderError> {
  const { operation, response, now } = input;
  const body = await readJson(response);
  const envelope = body?.error !== null && typeof body?.error === "object" ? body.error : null;
  const first = Array.isArray(envelope?.errors) ? envelope.errors[0] : null;
  const oauthError = typeof body?.error === "string" ? body.error : null;
  const reason = text(first?.reason) ?? oauthError ?? text(envelope?.status);
  const message =
    text(envelope?.message) ??
    text(first?.message) ??
    text(body?.error_description) ??
    oauthError ??
    `${operation} failed with HTTP ${response.status}`;
  const details = responseDetails({ operation, response, errorCode: reason });
  const described = reason ? `${message} (${reason})` : message;
  if (reason && QUOTA_REASONS.has(reason))
    return new ProviderError(
      "transient",
      `${described}; YouTube's quota resets at midnight Pacific time, when Herald tries again`,
      { ...details, retryAt: nextPacificMidnight(now) },
    );
  if (response.status === 429 || (reason && RATE_REASONS.has(reason)))
    return new ProviderError("transient", `${operation}: rate limited: ${described}`, {
      ...details,
      retryAt: rateLimitRetryAt(response.headers, now),
    });
  if (operation === YOUTUBE_OPERATIONS.token) return new ProviderError("auth_revoked", described, details);
  if (reason && REAUTHORIZE_REASONS.has(reason)) return new ProviderError("auth_revoked", described, details);
  if (response.status === 401) return new ProviderError("auth_expired", described, details);
  return new ProviderError("rejected", described, details);
}

/** Retry-After (seconds or an HTTP date) when Google sends one, else a minute from `now`. */
function rateLimitRetryAt(headers: Headers, now: number): number {
  const raw = headers.get("retry-after");
  if (raw && /^\d+$/.test(raw)) return now + Number(raw) * 1000;
  const date = raw ? Date.parse(raw) : Number.NaN;
  return Number.isFinite(date) && date > now ? date : now + YOUTUBE_RATE_LIMIT_WAIT_MS;
}

function text(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value : null;
}
