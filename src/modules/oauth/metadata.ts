import { ALL_SCOPES } from "../../core/scopes.ts";

/** What the metadata documents are built from: the server's public origin. */
type Origin = { config: { baseUrl: string } };

/** The protected resource OAuth access tokens are for: the MCP endpoint (their only audience). */
export function mcpResourceUrl(h: Origin): string {
  return `${h.config.baseUrl}/mcp`;
}

/**
 * Where a 401 of the MCP resource points for its protected-resource metadata (RFC 9728). The same
 * document is served at the path-suffixed `/.well-known/oauth-protected-resource/mcp` too.
 */
export function protectedResourceMetadataUrl(h: Origin): string {
  return `${h.config.baseUrl}/.well-known/oauth-protected-resource`;
}

/** Herald is its own authorization server: its issuer identifier is the origin. */
export function issuerOf(h: Origin): string {
  return h.config.baseUrl;
}

/** The protected-resource metadata of `<origin>/mcp` (RFC 9728). */
export function protectedResourceMetadata(h: Origin) {
  return {
    resource: mcpResourceUrl(h),
    authorization_servers: [issuerOf(h)],
    scopes_supported: [...ALL_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "Herald MCP",
    resource_documentation: `${h.config.baseUrl}/v1/docs`,
  };
}

/** The authorization server metadata (RFC 8414). */
export function authorizationServerMetadata(h: Origin) {
  const origin = h.config.baseUrl;
  return {
    issuer: issuerOf(h),
    authorization_endpoint: `${origin}/oauth/authorize`,
    token_endpoint: `${origin}/oauth/token`,
    registration_endpoint: `${origin}/oauth/register`,
    scopes_supported: [...ALL_SCOPES],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none"],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    service_documentation: `${origin}/v1/docs`,
  };
}
