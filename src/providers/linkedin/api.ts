// How Herald talks to LinkedIn's API: the versioned REST headers, one call helper that types every
// failure, and the "little text" escaping the Posts API wants for commentary.
import { providerFetch, readJson, responseDetails } from "../http.ts";
import type { NetworkApiVersion } from "../registry.ts";
import { ProviderError, type AdapterDeps, type DestinationRef, type ProviderDeps } from "../types.ts";

/**
 * The `LinkedIn-Version` Herald sends on every versioned call unless HERALD_LINKEDIN_API_VERSION says
 * otherwise: LinkedIn releases one a month (YYYYMM, revisions YYYYMM.RR) and supports each for at least
 * a year, then answers 426 NONEXISTENT_VERSION. docs/decisions.md "Issue 27: LinkedIn-Version" says why
 * this month.
 */
export const LINKEDIN_DEFAULT_VERSION = "202610";

/** The setting that chooses the version, named in every message about it. */
export const LINKEDIN_VERSION_SETTING = "HERALD_LINKEDIN_API_VERSION";

/** What the registry checks HERALD_LINKEDIN_API_VERSION against at start. */
export const LINKEDIN_API_VERSION: NetworkApiVersion = {
  default: LINKEDIN_DEFAULT_VERSION,
  pattern: /^20\d\d(0[1-9]|1[0-2])(\.\d{2})?$/,
  format: `a LinkedIn API version YYYYMM or YYYYMM.RR (like ${LINKEDIN_DEFAULT_VERSION})`,
};

/**
 * What the LinkedIn adapter hands its calls: the registry's deps, and where a 426 is noted so the
 * destinations can show it (`configurationProblem`). Calls typed with plain ProviderDeps (media,
 * metrics) get this same object.
 */
export interface LinkedInDeps extends AdapterDeps {
  /** The version LinkedIn answered 426 to since the start, or null. */
  refused: { version: string | null };
}

/** The version this Herald sends: the operator's setting, else the default. */
export function linkedinVersion(deps: ProviderDeps): string {
  return (deps as Partial<LinkedInDeps>).apps?.linkedin?.apiVersion ?? LINKEDIN_DEFAULT_VERSION;
}

/** Service error codes LinkedIn puts in 401 bodies: revoked grants are not worth a refresh. */
const REVOKED_SERVICE_CODE = 65601;

/** The operation name of the token endpoint (code exchange and refresh). */
export const TOKEN_OPERATION = "POST /oauth/v2/accessToken";

/** The headers every versioned REST call carries. */
export function restHeaders(deps: ProviderDeps, accessToken: string): Record<string, string> {
  return {
    authorization: `Bearer ${accessToken}`,
    "linkedin-version": linkedinVersion(deps),
    "x-restli-protocol-version": "2.0.0",
  };
}

/** The access token of a destination (every LinkedIn destination stores its own copy). */
export function accessTokenOf(destination: DestinationRef): string {
  return String(destination.credentials.accessToken ?? "");
}

/**
 * LinkedIn's quotas are daily and reset at midnight UTC, and a 429 carries no reset header: retry at
 * the next midnight UTC after `now`.
 */
export function nextMidnightUtc(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
}

/** One LinkedIn call through providerFetch; a 4xx becomes a typed ProviderError (see `linkedinError`). */
export async function linkedinCall(input: {
  deps: ProviderDeps;
  operation: string;
  url: string;
  init?: RequestInit;
  idempotent: boolean;
  /** Statuses the caller handles itself (e.g. 404 on a media status read). */
  allow?: number[];
  /** An upload body: sent on a connection of its own (see `providerFetch`). */
  freshConnection?: boolean;
}): Promise<Response> {
  const { deps, allow = [] } = input;
  const response = await providerFetch({
    deps,
    operation: input.operation,
    url: input.url,
    init: input.init,
    idempotent: input.idempotent,
    freshConnection: input.freshConnection,
    retryAt: () => nextMidnightUtc(deps.clock.now()),
  });
  if (response.ok || allow.includes(response.status)) return response;
  const version = linkedinVersion(deps);
  const error = await linkedinError({ operation: input.operation, response, version });
  const refused = (deps as Partial<LinkedInDeps>).refused;
  if (error.kind === "misconfigured" && refused) refused.version = version;
  throw error;
}

/**
 * Maps a LinkedIn 4xx: 401 is an expired or invalid token (refresh, then retry) unless LinkedIn says
 * the member revoked it (65601, REVOKED_ACCESS_TOKEN); 403 is a missing permission (a scope the
 * grant lacks, a page the member no longer administers), fixed only by connecting again; an OAuth
 * error on the token endpoint means the code or refresh token is dead; 426 (NONEXISTENT_VERSION) is
 * a `LinkedIn-Version` LinkedIn retired or never released, fixed only by the operator's setting; the
 * rest is refused content (422 DUPLICATE_POST, too long, media not ready).
 */
export async function linkedinError(input: {
  operation: string;
  response: Response;
  /** The `LinkedIn-Version` the call carried, named in a 426's message. */
  version: string;
}): Promise<ProviderError> {
  const { operation, response } = input;
  const body = await readJson(response);
  const serviceCode = typeof body?.serviceErrorCode === "number" ? body.serviceErrorCode : null;
  const inputCode = body?.errorDetails?.inputErrors?.[0]?.code;
  const code =
    [body?.code, inputCode, body?.error].find((v): v is string => typeof v === "string" && v !== "") ?? null;
  const message =
    [body?.message, body?.error_description].find((v): v is string => typeof v === "string" && v !== "") ??
    `${operation} failed with HTTP ${response.status}`;
  const details = responseDetails({
    operation,
    response,
    errorCode: code,
    subcode: serviceCode === null ? null : String(serviceCode),
  });
  if (response.status === 401) {
    const revoked = serviceCode === REVOKED_SERVICE_CODE || code === "REVOKED_ACCESS_TOKEN";
    return new ProviderError(revoked ? "auth_revoked" : "auth_expired", message, details);
  }
  if (response.status === 403) return new ProviderError("auth_revoked", message, details);
  if (response.status === 426)
    return new ProviderError(
      "misconfigured",
      `LinkedIn no longer accepts API version ${input.version} (${code ?? "HTTP 426"}: ${message}); ` +
        `set ${LINKEDIN_VERSION_SETTING} to a version LinkedIn supports and restart Herald`,
      details,
    );
  if (operation === TOKEN_OPERATION) return new ProviderError("auth_revoked", message, details);
  return new ProviderError("rejected", message, details);
}

/** Characters the "little text" format reserves; each is sent backslash-escaped to stay plain text. */
const LITTLE_RESERVED = /[\\|{}@[\]()<>#*_~]/g;

/**
 * Commentary as the Posts API's "little text" wants it: every reserved character escaped with a
 * backslash (unescaped, LinkedIn truncates or refuses the text), except the `#` that starts a
 * hashtag, so hashtags stay hashtags. Mentions are not generated: `@` is always plain text.
 */
export function escapeLittleText(text: string): string {
  return text.replace(LITTLE_RESERVED, (char, offset: number) =>
    char === "#" && startsHashtag(text, offset) ? char : `\\${char}`,
  );
}

/** A `#` right before a letter or digit, at the start or after a character that is not one. */
function startsHashtag(text: string, offset: number): boolean {
  const next = text.slice(offset + 1, offset + 3);
  const previous = offset === 0 ? "" : text.slice(Math.max(0, offset - 2), offset);
  return /^[\p{L}\p{N}]/u.test(next) && !/[\p{L}\p{N}_]$/u.test(previous);
}
