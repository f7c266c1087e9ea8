// Tables of destinations: connected accounts on the networks, connections in progress, and the
// OAuth apps registered with per-instance networks.
import type { TableBuilders } from "./builders.ts";
import type { AccountTables } from "./accounts.ts";

/** The destination tables. */
export function defineDestinationTables(b: TableBuilders, { workspaces }: Pick<AccountTables, "workspaces">) {
  const destinations = b.table(
    "destinations",
    {
      id: b.text("id").primaryKey(),
      workspaceId: b
        .text("workspace_id")
        .notNull()
        .references(() => workspaces.id),
      channel: b.text("channel").notNull(),
      displayName: b.text("display_name").notNull(),
      handle: b.text("handle").notNull(),
      externalId: b.text("external_id").notNull(),
      profileImageUrl: b.text("profile_image_url"),
      /** Origin of the instance / PDS the adapter talks to. */
      origin: b.text("origin").notNull(),
      /** AES-GCM sealed JSON of the adapter's credentials (SecretBox.encrypt). */
      credentialsSealed: b.text("credentials_sealed").notNull(),
      limits: b.json("limits").$type<Record<string, number>>().notNull(),
      enabled: b.boolean("enabled").notNull().default(true),
      isDefault: b.boolean("is_default").notNull().default(false),
      /** Set when the account must be connected again (`reauthorization_required`, …). */
      unavailableReason: b.text("unavailable_reason"),
      /** The process refreshing the token now, and until when (one refresh across processes). */
      refreshLeaseOwner: b.text("refresh_lease_owner"),
      refreshLeaseExpiresAt: b.integer("refresh_lease_expires_at"),
      createdAt: b.integer("created_at").notNull(),
      updatedAt: b.integer("updated_at").notNull(),
      deletedAt: b.integer("deleted_at"),
    },
    (t) => [b.index("destinations_workspace").on(t.workspaceId, t.id)],
  );

  const destinationConnections = b.table(
    "destination_connections",
    {
      id: b.text("id").primaryKey(),
      workspaceId: b
        .text("workspace_id")
        .notNull()
        .references(() => workspaces.id),
      provider: b.text("provider").notNull(),
      status: b.text("status", { enum: ["pending", "completed", "failed", "expired"] }).notNull(),
      origin: b.text("origin").notNull(),
      /** Random OAuth `state`, unique; the callback finds the connection by it. */
      state: b.text("state"),
      /** Sealed PKCE verifier and OAuth client of a pending connection. */
      secretsSealed: b.text("secrets_sealed"),
      authorizationUrl: b.text("authorization_url"),
      destinationId: b.text("destination_id"),
      error: b.text("error"),
      credentialId: b.text("credential_id"),
      requestId: b.text("request_id"),
      expiresAt: b.integer("expires_at").notNull(),
      createdAt: b.integer("created_at").notNull(),
    },
    (t) => [b.uniqueIndex("destination_connections_state").on(t.state)],
  );

  const oauthApps = b.table(
    "oauth_apps",
    {
      provider: b.text("provider").notNull(),
      origin: b.text("origin").notNull(),
      redirectUri: b.text("redirect_uri").notNull(),
      clientId: b.text("client_id").notNull(),
      clientSecretSealed: b.text("client_secret_sealed").notNull(),
      createdAt: b.integer("created_at").notNull(),
    },
    (t) => [b.primaryKey({ columns: [t.provider, t.origin, t.redirectUri] })],
  );

  return { destinations, destinationConnections, oauthApps };
}

/** The destination tables of one dialect. */
export type DestinationTables = ReturnType<typeof defineDestinationTables>;
