import type { Herald } from "../../herald.ts";
import { isScope, type Scope } from "../../core/scopes.ts";
import { newId } from "../../db/ids.ts";
import { inTransaction } from "../../db/transaction.ts";
import { redirectHost } from "./clients.ts";
import { resolveClient } from "./client-registry.ts";
import { issuerOf, mcpResourceUrl } from "./metadata.ts";
import { insertAuthorizationCode, type OauthClientRow } from "./repo.ts";
import { CODE_TTL_MS, newAuthorizationCode } from "./tokens.ts";

/** An authorization request that passed every check: what the consent page asks about. */
export interface AuthorizationRequest {
  client: OauthClientRow;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  resource: string | null;
  /** The scopes the client asked for (all known scopes); empty when it named none. */
  scopes: Scope[];
  /** The parameters as received, which the consent form posts back unchanged. */
  params: Record<string, string>;
}

/** What checking an authorization request came to. */
export type AuthorizationCheck =
  /** The client or redirect URI cannot be trusted: say so on a page, never redirect. */
  | { kind: "page"; heading: string; detail: string }
  /** The redirect URI is the client's: the error goes back to it (RFC 6749 §4.1.2.1). */
  | { kind: "redirect"; location: string }
  | { kind: "ok"; request: AuthorizationRequest };

const PARAMS = [
  "client_id",
  "redirect_uri",
  "response_type",
  "state",
  "code_challenge",
  "code_challenge_method",
  "resource",
  "scope",
] as const;
const CHALLENGE = /^[A-Za-z0-9_-]{43,128}$/;
const MAX_STATE = 1000;

/**
 * Checks the parameters of `/oauth/authorize` (the page and the consent form alike): first the client
 * and its exact redirect URI, whose failures are shown on a page; then the rest, whose failures go back
 * to the client's redirect URI as `error=`.
 */
export async function checkAuthorizationRequest(
  h: Herald,
  query: URLSearchParams,
): Promise<AuthorizationCheck> {
  const params: Record<string, string> = {};
  for (const name of PARAMS) {
    const values = query.getAll(name);
    if (values.length > 1)
      return { kind: "page", heading: "This sign-in link is not valid", detail: `It repeats ${name}.` };
    if (values.length === 1) params[name] = values[0]!;
  }
  const clientId = params.client_id;
  if (!clientId)
    return {
      kind: "page",
      heading: "This sign-in link is not valid",
      detail: "It names no client (client_id).",
    };
  const client = await resolveClient(h, clientId);
  if (!client)
    return {
      kind: "page",
      heading: "Unknown application",
      detail: "The application that sent you here is not registered with this Herald server.",
    };
  let redirectUri = params.redirect_uri;
  if (redirectUri === undefined && client.redirectUris.length === 1) redirectUri = client.redirectUris[0]!;
  if (redirectUri === undefined || !client.redirectUris.includes(redirectUri))
    return {
      kind: "page",
      heading: "This sign-in link is not valid",
      detail:
        redirectUri === undefined
          ? "It names no return address (redirect_uri)."
          : "Its return address (redirect_uri) is not one the application registered.",
    };
  const state = params.state ?? null;
  const back = (error: string, description: string): AuthorizationCheck => ({
    kind: "redirect",
    location: authorizationResponse(h, redirectUri, { error, error_description: description, state }),
  });
  if (state !== null && state.length > MAX_STATE)
    return back("invalid_request", `state must be at most ${MAX_STATE} characters`);
  if (params.response_type !== "code") return back("unsupported_response_type", "response_type must be code");
  if (!params.code_challenge) return back("invalid_request", "code_challenge is required (PKCE with S256)");
  if (params.code_challenge_method !== "S256")
    return back("invalid_request", "code_challenge_method must be S256");
  if (!CHALLENGE.test(params.code_challenge))
    return back("invalid_request", "code_challenge must be 43 to 128 base64url characters");
  const resource = params.resource ?? null;
  if (resource !== null && resource !== mcpResourceUrl(h))
    return back("invalid_target", `resource must be ${mcpResourceUrl(h)}`);
  const asked = (params.scope ?? "").split(" ").filter(Boolean);
  const unknown = asked.filter((s) => !isScope(s));
  if (unknown.length > 0) return back("invalid_scope", `unknown scopes: ${unknown.join(", ")}`);
  return {
    kind: "ok",
    request: {
      client,
      redirectUri,
      state,
      codeChallenge: params.code_challenge,
      resource,
      scopes: [...new Set(asked as Scope[])],
      params,
    },
  };
}

/** The client's redirect URI with the response's parameters and `iss` (RFC 9207). */
export function authorizationResponse(
  h: Herald,
  redirectUri: string,
  values: Record<string, string | null>,
): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(values)) if (value !== null) url.searchParams.set(name, value);
  url.searchParams.set("iss", issuerOf(h));
  return url.toString();
}

/** What the person chose on the consent page. */
export interface Consent {
  accountId: string;
  userId: string;
  scopes: Scope[];
  workspaceAccessMode: "all" | "selected";
  workspaceIds: string[];
}

/**
 * Issues a single-use authorization code for an approved request (stored hashed, `CODE_TTL_MS`) and
 * returns where the browser goes next: the redirect URI with the code, the state and `iss`.
 */
export async function approveAuthorization(h: Herald, request: AuthorizationRequest, consent: Consent) {
  const code = newAuthorizationCode();
  const now = h.clock.now();
  await inTransaction(h.db, (tx) =>
    insertAuthorizationCode(tx, {
      codeHash: code.hash,
      clientId: request.client.id,
      accountId: consent.accountId,
      userId: consent.userId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      scopes: consent.scopes,
      workspaceAccessMode: consent.workspaceAccessMode,
      workspaceIds: consent.workspaceAccessMode === "selected" ? consent.workspaceIds : [],
      resource: request.resource,
      createdAt: now,
      expiresAt: now + CODE_TTL_MS,
      usedAt: null,
      grantId: null,
    }),
  );
  return authorizationResponse(h, request.redirectUri, { code: code.token, state: request.state });
}

/** Where a denied request goes: `error=access_denied` at the client's redirect URI. */
export function denyAuthorization(h: Herald, request: AuthorizationRequest): string {
  return authorizationResponse(h, request.redirectUri, {
    error: "access_denied",
    error_description: "The person denied the request.",
    state: request.state,
  });
}

/**
 * The `form-action` source the consent page needs, so the browser may follow the answer's redirect to
 * the client: the redirect URI's origin, or its scheme for a private-use scheme.
 */
export function redirectSource(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.origin !== "null" ? url.origin : url.protocol;
}

export { redirectHost };
export const newGrantId = () => newId("grt");
