// Bluesky's XRPC conventions: one call helper (JSON answers, RateLimit-Reset), how a 4xx maps to a
// failure kind, and the session's bearer header.
import { expectJson, providerFetch, readJson, responseDetails } from "../http.ts";
import { ProviderError, type DestinationRef, type ProviderDeps } from "../types.ts";

/** One XRPC call on a PDS: its JSON answer, or the ProviderError its failure is. */
export function xrpcCaller(deps: ProviderDeps) {
  return async (input: {
    origin: string;
    nsid: string;
    init?: RequestInit;
    query?: Record<string, string>;
    idempotent: boolean;
  }): Promise<Record<string, any>> => {
    const query = input.query ? `?${new URLSearchParams(input.query)}` : "";
    const operation = input.nsid;
    const response = await providerFetch({
      deps,
      operation,
      url: `${base(input.origin)}/xrpc/${input.nsid}${query}`,
      init: input.init,
      idempotent: input.idempotent,
      retryAt: blueskyRetryAt,
    });
    if (!response.ok) throw await xrpcError({ operation, response });
    return expectJson({ operation, response });
  };
}

/** RateLimit-Reset is unix seconds. */
export function blueskyRetryAt(headers: Headers): number | null {
  const raw = headers.get("ratelimit-reset");
  return raw && /^\d+$/.test(raw) ? Number(raw) * 1000 : null;
}

/**
 * Maps an XRPC 4xx: 401 and 400 ExpiredToken/InvalidToken mean "refresh, then retry"; a takedown is
 * revoked; the rest is refused content.
 */
export async function xrpcError(input: { operation: string; response: Response }): Promise<ProviderError> {
  const { operation, response } = input;
  const body = await readJson(response);
  const code = typeof body?.error === "string" ? body.error : null;
  const message =
    (typeof body?.message === "string" && body.message) ||
    code ||
    `${operation} failed with HTTP ${response.status}`;
  const details = responseDetails({ operation, response, errorCode: code });
  if (code === "AccountTakedown" || code === "AccountDeactivated")
    return new ProviderError("auth_revoked", message, details);
  if (
    response.status === 401 ||
    (response.status === 400 && (code === "ExpiredToken" || code === "InvalidToken"))
  )
    return new ProviderError("auth_expired", message, details);
  return new ProviderError("rejected", message, details);
}

/** The session's access token as a bearer header. */
export function bearer(destination: DestinationRef): Record<string, string> {
  return { authorization: `Bearer ${String(destination.credentials.accessJwt ?? "")}` };
}

export function base(origin: string): string {
  return origin.replace(/\/+$/, "");
}
