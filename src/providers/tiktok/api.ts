// How Herald talks to TikTok's API v2 (providers.md §8): every answer is the envelope
// `{"data":{…},"error":{"code","message","log_id"}}` (`code: "ok"` on success too), OAuth answers are
// `{error, error_description, log_id}`. One call helper maps both to failure kinds; the post ids of
// a status answer are int64 JSON numbers and are read from the raw text, never through a JS number.
import type { Clock } from "../../lib/clock.ts";
import { providerFetch, requestIdOf, type RetryAtParser } from "../http.ts";
import { ProviderError, type DestinationRef, type FailureKind, type ProviderDeps } from "../types.ts";

/** The TikTok calls Herald makes, as operation names in errors and attempt logs. */
export const TIKTOK_OPERATIONS = {
  token: "POST /v2/oauth/token/",
  userInfo: "GET /v2/user/info/",
  creatorInfo: "POST /v2/post/publish/creator_info/query/",
  videoInit: "POST /v2/post/publish/video/init/",
  photoInit: "POST /v2/post/publish/content/init/",
  upload: "PUT {upload_url}",
  status: "POST /v2/post/publish/status/fetch/",
  videoQuery: "POST /v2/video/query/",
} as const;

/**
 * When TikTok throttles (429 `rate_limit_exceeded`, no reset header): its windows are per minute
 * (6 inits, 20 creator-info reads, 30 status reads per user token), so one minute later.
 */
export const TIKTOK_THROTTLE_RETRY_MS = 60_000;

/** `spam_risk_too_many_posts`: the creator's daily API post cap; a day later the cap has room again. */
export const TIKTOK_DAILY_CAP_RETRY_MS = 24 * 60 * 60_000;

/** What one API call answered: the envelope's `data`, its raw text (for int64 ids) and TikTok's log id. */
export interface TikTokAnswer {
  data: Record<string, any>;
  text: string;
  status: number;
  logId: string | null;
}

/** The retry time of a TikTok 429: a Retry-After in seconds when one comes, else a minute from now. */
export function tiktokRetryAt(clock: Clock): RetryAtParser {
  return (headers) => {
    const seconds = headers.get("retry-after");
    if (seconds && /^\d+$/.test(seconds)) return clock.now() + Number(seconds) * 1000;
    return clock.now() + TIKTOK_THROTTLE_RETRY_MS;
  };
}

/** An origin without its trailing slashes. */
export function tiktokBase(origin: string): string {
  return origin.replace(/\/+$/, "");
}

/** The bearer header of a destination's access token. */
export function tiktokBearer(destination: DestinationRef): Record<string, string> {
  return { authorization: `Bearer ${String(destination.credentials.accessToken ?? "")}` };
}

/**
 * One API v2 call: providerFetch (network failures, 429 with a retry time, 5xx), then the envelope.
 * Answers `data` when `error.code` is "ok"; throws the mapped ProviderError otherwise. A 2xx that is
 * not the envelope is `transient` on idempotent calls and `outcome_unknown` otherwise.
 */
export async function tiktokCall(input: {
  deps: ProviderDeps;
  operation: string;
  url: string;
  init?: RequestInit;
  idempotent: boolean;
}): Promise<TikTokAnswer> {
  const { deps, operation, idempotent } = input;
  let response: Response;
  try {
    response = await providerFetch({ ...input, retryAt: tiktokRetryAt(deps.clock) });
  } catch (error) {
    // TikTok's only 429 is rate_limit_exceeded; name it like the envelope would.
    if (error instanceof ProviderError && error.statusCode === 429)
      throw new ProviderError(error.kind, error.message, { ...error, errorCode: "rate_limit_exceeded" });
    throw error;
  }
  const text = await response.text();
  const body = parseObject(text);
  const logId = logIdOf(body, response.headers);
  const code = typeof body?.error?.code === "string" ? body.error.code : null;
  if (response.ok && body !== null && (code === "ok" || (code === null && isObject(body.data))))
    return { data: isObject(body.data) ? body.data : {}, text, status: response.status, logId };
  if (response.ok && code === null)
    throw new ProviderError(
      idempotent ? "transient" : "outcome_unknown",
      `${operation}: TikTok's answer (${response.status}) is not its usual JSON envelope`,
      { operation, statusCode: response.status, requestId: logId },
    );
  throw tiktokError({ operation, status: response.status, body, logId, clock: deps.clock, idempotent });
}

/**
 * Maps an envelope error to a kind:
 * - `access_token_invalid` (or a 401 without a code) → `auth_expired`: refresh, then retry;
 * - `scope_not_authorized` / `scope_permission_missed` → `auth_revoked`: only a new grant adds a scope;
 * - `rate_limit_exceeded` → `transient`, a minute later; `spam_risk_too_many_posts` (the creator's
 *   daily cap) → `transient`, a day later;
 * - `internal_error` → `transient` on reads, `outcome_unknown` on a call that creates a post;
 * - everything else (other `spam_risk_*`, `privacy_level_option_mismatch`,
 *   `unaudited_client_can_only_post_to_private_accounts`, `url_ownership_unverified`, the
 *   `*_check_failed` media checks, `invalid_params`) → `rejected` with TikTok's message.
 */
export function tiktokError(input: {
  operation: string;
  status: number;
  body: Record<string, any> | null;
  logId: string | null;
  clock: Clock;
  idempotent: boolean;
}): ProviderError {
  const { operation, status, body, clock } = input;
  const code = typeof body?.error?.code === "string" && body.error.code !== "" ? body.error.code : null;
  const said =
    typeof body?.error?.message === "string" && body.error.message !== "" ? body.error.message : null;
  const message = `${operation}: ${said ?? `TikTok answered HTTP ${status}`}${code ? ` (${code})` : ""}${hintFor(code)}`;
  const details = { operation, statusCode: status, errorCode: code, requestId: input.logId };
  const kind = kindOf(code, status, input.idempotent);
  if (code === "rate_limit_exceeded")
    return new ProviderError(kind, message, { ...details, retryAt: clock.now() + TIKTOK_THROTTLE_RETRY_MS });
  if (code === "spam_risk_too_many_posts")
    return new ProviderError(kind, message, { ...details, retryAt: clock.now() + TIKTOK_DAILY_CAP_RETRY_MS });
  return new ProviderError(kind, message, details);
}

function kindOf(code: string | null, status: number, idempotent: boolean): FailureKind {
  if (code === "access_token_invalid") return "auth_expired";
  if (code === "scope_not_authorized" || code === "scope_permission_missed") return "auth_revoked";
  if (code === "rate_limit_exceeded" || code === "spam_risk_too_many_posts") return "transient";
  if (code === "internal_error") return idempotent ? "transient" : "outcome_unknown";
  if (code === null && status === 401) return "auth_expired";
  return "rejected";
}

/** What an operator or user can do about refusals whose message does not say it. */
function hintFor(code: string | null): string {
  switch (code) {
    case "unaudited_client_can_only_post_to_private_accounts":
      return "; until TikTok audits Herald's app it posts only SELF_ONLY, to private accounts";
    case "url_ownership_unverified":
      return "; verify the domain of HERALD_BASE_URL in the app's settings on developers.tiktok.com";
    case "privacy_level_option_mismatch":
      return "; choose one of the privacy levels TikTok offers this account";
    default:
      return "";
  }
}

/** A JSON POST to the destination's API origin with its bearer token (every posting call is one). */
export function tiktokPost(input: {
  deps: ProviderDeps;
  destination: DestinationRef;
  operation: string;
  path: string;
  body?: unknown;
  idempotent: boolean;
}): Promise<TikTokAnswer> {
  return tiktokCall({
    deps: input.deps,
    operation: input.operation,
    url: `${tiktokBase(input.destination.origin)}${input.path}`,
    init: {
      method: "POST",
      headers: { ...tiktokBearer(input.destination), "content-type": "application/json; charset=UTF-8" },
      ...(input.body === undefined ? {} : { body: JSON.stringify(input.body) }),
    },
    idempotent: input.idempotent,
  });
}

/** What a status fetch says of a post. */
export interface TikTokStatus {
  /** PROCESSING_UPLOAD, PROCESSING_DOWNLOAD, SEND_TO_USER_INBOX, PUBLISH_COMPLETE or FAILED. */
  status: string;
  failReason: string | null;
  /** Bytes of a FILE_UPLOAD video TikTok has, when it says. */
  uploadedBytes: number | null;
  /** `publicaly_available_post_id`, as decimal strings. */
  postIds: string[];
  answer: TikTokAnswer;
}

/**
 * One status fetch (read-only). A refusal of the read itself (not a FAILED post) cannot say whether
 * the post went out: `outcome_unknown`, so nothing inits it again.
 */
export async function readTikTokStatus(input: {
  deps: ProviderDeps;
  destination: DestinationRef;
  publishId: string;
}): Promise<TikTokStatus> {
  let answer: TikTokAnswer;
  try {
    answer = await tiktokPost({
      deps: input.deps,
      destination: input.destination,
      operation: TIKTOK_OPERATIONS.status,
      path: "/v2/post/publish/status/fetch/",
      body: { publish_id: input.publishId },
      idempotent: true,
    });
  } catch (error) {
    if (error instanceof ProviderError && error.kind === "rejected")
      throw new ProviderError(
        "outcome_unknown",
        `${error.message}; Herald cannot tell whether TikTok post ${input.publishId} went out and will not post it again`,
        error,
      );
    throw error;
  }
  const { data } = answer;
  const uploaded = typeof data.uploaded_bytes === "number" ? data.uploaded_bytes : Number.NaN;
  return {
    status: typeof data.status === "string" ? data.status : "",
    failReason: typeof data.fail_reason === "string" && data.fail_reason !== "" ? data.fail_reason : null,
    uploadedBytes: Number.isFinite(uploaded) && uploaded >= 0 ? uploaded : null,
    postIds: publicPostIds(answer.text),
    answer,
  };
}

/**
 * The token endpoint (code exchange and refresh): form-encoded, answering the token fields at the top
 * level. An OAuth error (`invalid_grant`, `invalid_request`, `invalid_client`…) means the code or the
 * refresh token is dead: `auth_revoked`; `temporarily_unavailable`/`server_error` are `transient`.
 */
export async function tiktokToken(input: {
  deps: ProviderDeps;
  tokenBase: string;
  form: Record<string, string>;
  idempotent: boolean;
}): Promise<Record<string, any>> {
  const operation = TIKTOK_OPERATIONS.token;
  const response = await providerFetch({
    deps: input.deps,
    operation,
    url: `${tiktokBase(input.tokenBase)}/v2/oauth/token/`,
    init: {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(input.form),
    },
    idempotent: input.idempotent,
    retryAt: tiktokRetryAt(input.deps.clock),
  });
  const body = parseObject(await response.text());
  const logId = logIdOf(body, response.headers);
  const details = { operation, statusCode: response.status, requestId: logId };
  if (typeof body?.error === "string" && body.error !== "") {
    const description = typeof body.error_description === "string" ? `: ${body.error_description}` : "";
    const kind = /^(temporarily_unavailable|server_error)$/.test(body.error) ? "transient" : "auth_revoked";
    throw new ProviderError(kind, `${operation}: ${body.error}${description}`, {
      ...details,
      errorCode: body.error,
    });
  }
  if (isObject(body?.error) && body.error.code !== "ok") {
    const error = tiktokError({
      operation,
      status: response.status,
      body,
      logId,
      clock: input.deps.clock,
      idempotent: true,
    });
    throw error.kind === "transient" ? error : new ProviderError("auth_revoked", error.message, error);
  }
  if (!response.ok || typeof body?.access_token !== "string" || body.access_token === "")
    throw new ProviderError(
      response.ok ? "transient" : "auth_revoked",
      `${operation}: TikTok's answer (${response.status}) has no access token`,
      details,
    );
  return body;
}

/**
 * The ids in `publicaly_available_post_id` (TikTok's spelling) as decimal strings. They are int64
 * JSON numbers, larger than a JS number holds exactly, so they are read from the raw answer text.
 */
export function publicPostIds(text: string): string[] {
  const list = /"publicaly_available_post_id"\s*:\s*\[([^\]]*)\]/.exec(text)?.[1];
  if (!list) return [];
  return [...list.matchAll(/"?(\d+)"?/g)].map((m) => m[1]!);
}

function parseObject(text: string): Record<string, any> | null {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

function isObject(value: unknown): value is Record<string, any> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function logIdOf(body: Record<string, any> | null, headers: Headers): string | null {
  const logId = body?.error?.log_id ?? body?.log_id;
  if (typeof logId === "string" && logId !== "") return logId;
  return headers.get("x-tt-logid") ?? requestIdOf(headers);
}
