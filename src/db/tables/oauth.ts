// Herald as an OAuth 2.1 authorization server for its MCP endpoint (issue 29): the clients that
// registered (or whose metadata document was read), the authorization codes waiting to be exchanged
// and the refresh tokens of grants. A grant itself is a row of `api_keys` (kind `oauth_grant`), so a
// request's access token is found by the one credential statement keys use.
import type { AccountTables } from "./accounts.ts";
import type { TableBuilders } from "./builders.ts";

/** The OAuth tables. */
export function defineOauthTables(b: TableBuilders, { apiKeys }: Pick<AccountTables, "apiKeys">) {
  const oauthClients = b.table("oauth_clients", {
    /** `hoc_…` for a registered client; the document's https URL for a client ID metadata document. */
    id: b.text("id").primaryKey(),
    clientName: b.text("client_name").notNull(),
    /** JSON array of the exact redirect URIs an authorization may return to. */
    redirectUris: b.json("redirect_uris").$type<string[]>().notNull(),
    grantTypes: b.json("grant_types").$type<string[]>().notNull(),
    clientUri: b.text("client_uri"),
    /** `registered` (RFC 7591) or `metadata_document` (read from the client id's URL). */
    source: b.text("source", { enum: ["registered", "metadata_document"] }).notNull(),
    createdAt: b.integer("created_at").notNull(),
    /** When a metadata document was last read (it is read again once stale). */
    fetchedAt: b.integer("fetched_at"),
  });

  const oauthAuthorizationCodes = b.table(
    "oauth_authorization_codes",
    {
      /** SHA-256 of the code; the code itself is never stored. */
      codeHash: b.text("code_hash").primaryKey(),
      clientId: b.text("client_id").notNull(),
      accountId: b.text("account_id").notNull(),
      userId: b.text("user_id").notNull(),
      redirectUri: b.text("redirect_uri").notNull(),
      codeChallenge: b.text("code_challenge").notNull(),
      scopes: b.json("scopes").$type<string[]>().notNull(),
      workspaceAccessMode: b.text("workspace_access_mode", { enum: ["all", "selected"] }).notNull(),
      workspaceIds: b.json("workspace_ids").$type<string[]>().notNull(),
      /** The `resource` the client named (always the MCP endpoint), or null when it named none. */
      resource: b.text("resource"),
      createdAt: b.integer("created_at").notNull(),
      expiresAt: b.integer("expires_at").notNull(),
      /** Set by the one exchange that used the code; a second use revokes the grant it made. */
      usedAt: b.integer("used_at"),
      grantId: b.text("grant_id"),
    },
    (t) => [b.index("oauth_authorization_codes_expiry").on(t.expiresAt)],
  );

  const oauthRefreshTokens = b.table(
    "oauth_refresh_tokens",
    {
      tokenHash: b.text("token_hash").primaryKey(),
      grantId: b
        .text("grant_id")
        .notNull()
        .references(() => apiKeys.id, { onDelete: "cascade" }),
      createdAt: b.integer("created_at").notNull(),
      /** Set when the token was exchanged for the next one; using it again revokes the grant. */
      rotatedAt: b.integer("rotated_at"),
    },
    (t) => [
      b.index("oauth_refresh_tokens_grant").on(t.grantId),
      // Retention takes rotated tokens oldest first (jobs/retention.ts).
      b
        .index("oauth_refresh_tokens_rotated")
        .on(t.rotatedAt),
    ],
  );

  return { oauthClients, oauthAuthorizationCodes, oauthRefreshTokens };
}
