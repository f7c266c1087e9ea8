// How Herald talks to X's API v2: one call helper (bearer token, X's rate-limit headers) and the
// mapping of X's answers (problem JSON, OAuth errors) to failure kinds.
import { expectJson, providerFetch, readJson, responseDetails } from "../http.ts";
import { ProviderError, type DestinationRef, type ProviderDeps } from "../types.ts";

/** The paths of the X calls Herald makes, as operation names in errors and attempt logs. */
export const X_OPERATIONS = {
  token: "POST /2/oauth2/token",
  me: "GET /2/users/me",
  tweet: "POST /2/tweets",
  upload: "POST /2/media/upload",
  initialize: "POST /2/media/upload/initialize",
  append: "POST /2/media/upload/{id}/append",
  finalize: "POST /2/media/upload/{id}/finalize",
  status: "GET /2/media/upload?command=STATUS",
  metadata: "POST /2/media/metadata",
  lookup: "GET /2/tweets",
  timeline: "GET /2/users/{id}/tweets",
} as const;

/**
 * When an X rate limit resets, epoch ms: the latest of the exhausted windows (`x-rate-limit-*`,
 * and on POST /2/tweets `x-user-limit-24hour-*` / `x-app-limit-24hour-*`), resets in unix seconds;
 * when none says it is exhausted, `x-rate-limit-reset`.
 */
export function xRetryAt(headers: Headers): number | null {
  const resets: number[] = [];
  for (const prefix of ["x-rate-limit", "x-user-limit-24hour", "x-app-limit-24hour"]) {
    const reset = seconds(headers.get(`${prefix}-reset`));
    if (reset !== null && headers.get(`${prefix}-remaining`) === "0") resets.push(reset);
  }
  if (resets.length > 0) return Math.max(...resets) * 1000;
  const fallback = seconds(headers.get("x-rate-limit-reset"));
  return fallback === null ? null : fallback * 1000;
}

function seconds(raw: string | null): number | null {
  return raw && /^\d+$/.test(raw) ? Number(raw) : null;
}

/**
 * One X API call: answers the 2xx Response, throws a typed ProviderError for anything else. A 429
 * keeps the shared classification (`transient`, `retryAt` from X's headers) and gains X's problem
 * JSON as message and error code (`rate-limit-exceeded`, `usage-capped`).
 */
export async function xCall(input: {
  deps: ProviderDeps;
  operation: string;
  url: string;
  init?: RequestInit;
  idempotent: boolean;
  /** An upload body: sent on a connection of its own (see `providerFetch`). */
  freshConnection?: boolean;
}): Promise<Response> {
  const response = await providerFetch({
    ...input,
    limitError: async (limited) => {
      const mapped = await xError({ operation: input.operation, response: limited });
      return new ProviderError("transient", `${input.operation}: rate limited (429): ${mapped.message}`, {
        ...responseDetails({ operation: input.operation, response: limited, errorCode: mapped.errorCode }),
        retryAt: xRetryAt(limited.headers),
      });
    },
  });
  if (!response.ok) throw await xError({ operation: input.operation, response });
  return response;
}

/** An X API call answering JSON (`{ data: … }`). */
export async function xJson(input: Parameters<typeof xCall>[0]): Promise<Record<string, any>> {
  const response = await xCall(input);
  return expectJson({ operation: input.operation, response });
}

/** The bearer header of a destination's access token. */
export function xBearer(destination: DestinationRef): Record<string, string> {
  return { authorization: `Bearer ${String(destination.credentials.accessToken ?? "")}` };
}

/** An origin without its trailing slashes. */
export function xBase(origin: string): string {
  return origin.replace(/\/+$/, "");
}

/**
 * Maps an X 4xx to a kind. X's problem JSON (`title`, `detail`, `type`) gives the message and the
 * error code (the problem type's last segment, e.g. `usage-capped`, else the title):
 * - 401 → `auth_expired` (two-hour tokens: refresh, then retry);
 * - the token endpoint's 400 `invalid_request`/`invalid_grant` (a used or revoked refresh token, a
 *   bad code) and 401 `invalid_client` → `auth_revoked`;
 * - 403 "Unsupported Authentication" → `auth_revoked`;
 * - `usage-capped` → `transient` with the reset time when X gives one;
 * - everything else (duplicate content, invalid media, a deleted parent) → `rejected`.
 */
export async function xError(input: { operation: string; response: Response }): Promise<ProviderError> {
  const { operation, response } = input;
  const body = await readJson(response);
  const problemType = typeof body?.type === "string" ? body.type : null;
  const slug = problemType && /\/problems\/([a-z-]+)$/.exec(problemType)?.[1];
  const title = typeof body?.title === "string" ? body.title : null;
  const oauthError = typeof body?.error === "string" ? body.error : null;
  const errorCode = slug || oauthError || title;
  // An invalid-request problem's `detail` is generic; its `errors[0].message` says what was wrong.
  const message =
    firstText(
      Array.isArray(body?.errors) ? body.errors[0]?.message : null,
      body?.detail,
      body?.error_description,
      title,
      oauthError,
    ) ?? `${operation} failed with HTTP ${response.status}`;
  const details = responseDetails({ operation, response, errorCode });
  if (slug === "usage-capped")
    return new ProviderError("transient", message, { ...details, retryAt: xRetryAt(response.headers) });
  if (operation === X_OPERATIONS.token) {
    const revoked =
      oauthError === "invalid_grant" ||
      oauthError === "invalid_request" ||
      oauthError === "invalid_client" ||
      oauthError === "unauthorized_client" ||
      response.status === 401;
    return new ProviderError(revoked ? "auth_revoked" : "rejected", message, details);
  }
  if (response.status === 401) return new ProviderError("auth_expired", message, details);
  if (response.status === 403 && /unsupported authentication/i.test(`${title} ${message}`))
    return new ProviderError("auth_revoked", message, details);
  return new ProviderError("rejected", message, details);
}

function firstText(...values: unknown[]): string | null {
  for (const value of values) if (typeof value === "string" && value.trim() !== "") return value;
  return null;
}
