import { OauthError } from "./errors.ts";

/** What a client registers (RFC 7591), as Herald keeps it. */
export interface ClientMetadata {
  clientName: string;
  redirectUris: string[];
  grantTypes: string[];
  clientUri: string | null;
}

const GRANT_TYPES = ["authorization_code", "refresh_token"];
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;
const MAX_NAME_LENGTH = 100;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * Why a redirect URI cannot be registered, or null when it can: https anywhere; http only to the
 * loopback host (a native app's local listener, RFC 8252 §7.3); or a private-use scheme in reverse
 * domain form (`com.example.app:/callback`, RFC 8252 §7.1). Never a fragment, never credentials.
 */
export function redirectUriProblem(value: unknown): string | null {
  if (typeof value !== "string" || value.length === 0) return "must be a non-empty string";
  if (value.length > MAX_URI_LENGTH) return `must be at most ${MAX_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not an absolute URI";
  }
  if (url.hash || value.includes("#")) return "must not have a fragment";
  if (url.username || url.password) return "must not carry user credentials";
  const scheme = url.protocol.slice(0, -1);
  if (scheme === "https") return url.hostname ? null : "must name a host";
  if (scheme === "http")
    return LOOPBACK_HOSTS.has(url.hostname)
      ? null
      : "may use http only on a loopback host (127.0.0.1, [::1], localhost); use https";
  // Private-use schemes: reverse domain names of the app (at least one dot), never a web or script scheme.
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/.test(scheme)) return null;
  return "must be https, http on a loopback host, or a private-use scheme such as com.example.app:";
}

/**
 * Checks a registration request (RFC 7591 §2): the redirect URIs (`invalid_redirect_uri`), and the
 * rest of the metadata (`invalid_client_metadata`): a name, the code and refresh grants only, the
 * `code` response type, and no client authentication (public clients; PKCE protects the code).
 */
export function checkClientMetadata(body: unknown): ClientMetadata {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new OauthError("invalid_client_metadata", "The registration must be a JSON object.");
  const m = body as Record<string, unknown>;
  const uris = m.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0)
    throw new OauthError("invalid_redirect_uri", "redirect_uris must be a non-empty array of URIs.");
  if (uris.length > MAX_REDIRECT_URIS)
    throw new OauthError("invalid_redirect_uri", `redirect_uris may hold at most ${MAX_REDIRECT_URIS} URIs.`);
  uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OauthError("invalid_redirect_uri", `redirect_uris[${i}] ${problem}.`);
  });
  const invalid = (detail: string) => new OauthError("invalid_client_metadata", detail);
  const grantTypes = m.grant_types ?? ["authorization_code"];
  if (!Array.isArray(grantTypes) || grantTypes.length === 0 || grantTypes.some((g) => typeof g !== "string"))
    throw invalid("grant_types must be a non-empty array of strings.");
  const unsupported = grantTypes.filter((g) => !GRANT_TYPES.includes(g));
  if (unsupported.length > 0)
    throw invalid(
      `grant_types may hold authorization_code and refresh_token only, not ${unsupported.join(", ")}.`,
    );
  if (!grantTypes.includes("authorization_code"))
    throw invalid("grant_types must include authorization_code.");
  const responseTypes = m.response_types ?? ["code"];
  if (!Array.isArray(responseTypes) || responseTypes.length !== 1 || responseTypes[0] !== "code")
    throw invalid('response_types must be ["code"].');
  const auth = m.token_endpoint_auth_method ?? "none";
  if (auth !== "none")
    throw invalid(
      "token_endpoint_auth_method must be none: Herald registers public clients, which use PKCE.",
    );
  const name = m.client_name;
  if (name !== undefined && (typeof name !== "string" || name.trim().length === 0))
    throw invalid("client_name must be a non-empty string.");
  if (typeof name === "string" && name.trim().length > MAX_NAME_LENGTH)
    throw invalid(`client_name must be at most ${MAX_NAME_LENGTH} characters.`);
  const clientUri = m.client_uri;
  if (clientUri !== undefined && (typeof clientUri !== "string" || !isHttpsUrl(clientUri)))
    throw invalid("client_uri must be an https URL.");
  if (m.scope !== undefined && typeof m.scope !== "string") throw invalid("scope must be a string.");
  const redirectUris = [...new Set(uris as string[])];
  return {
    // A client that gives no name is named by where it sends people back.
    clientName: typeof name === "string" ? name.trim() : redirectHost(redirectUris[0]!),
    redirectUris,
    grantTypes: [...new Set(grantTypes as string[])],
    clientUri: (clientUri as string | undefined) ?? null,
  };
}

function isHttpsUrl(value: string): boolean {
  try {
    return new URL(value).protocol === "https:" && value.length <= MAX_URI_LENGTH;
  } catch {
    return false;
  }
}

/** Where a redirect URI sends the person: its host, or its scheme for a private-use scheme. */
export function redirectHost(uri: string): string {
  const url = new URL(uri);
  return url.host || `${url.protocol}`;
}

/** What a registered client's answer holds (RFC 7591 §3.2.1). */
export function clientInformation(client: {
  id: string;
  clientName: string;
  redirectUris: string[];
  grantTypes: string[];
  clientUri: string | null;
  createdAt: number;
}) {
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt / 1000),
    client_name: client.clientName,
    redirect_uris: client.redirectUris,
    grant_types: client.grantTypes,
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    ...(client.clientUri ? { client_uri: client.clientUri } : {}),
  };
}
