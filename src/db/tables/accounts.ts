// Tables of accounts and their people, workspaces, API keys, idempotency keys, audit records,
// invitations and the mail outbox. Timestamps are integer milliseconds since the epoch (UTC);
// responses format them with `iso()`.
import type { LinkTrackingSettings } from "./links.ts";
import type { TableBuilders } from "./builders.ts";

/** The account tables. */
export function defineAccountTables(b: TableBuilders) {
  const accounts = b.table("accounts", {
    id: b.text("id").primaryKey(),
    name: b.text("name").notNull(),
    createdAt: b.integer("created_at").notNull(),
    updatedAt: b.integer("updated_at").notNull(),
  });

  const users = b.table(
    "users",
    {
      id: b.text("id").primaryKey(),
      accountId: b
        .text("account_id")
        .notNull()
        .references(() => accounts.id),
      email: b.text("email").notNull(),
      /** What the person called themselves when joining by invitation (null: bootstrap, signup). */
      name: b.text("name"),
      passwordHash: b.text("password_hash"),
      role: b.text("role", { enum: ["owner", "admin", "member"] }).notNull(),
      createdAt: b.integer("created_at").notNull(),
    },
    (t) => [b.uniqueIndex("users_email_unique").on(t.email)],
  );

  const workspaces = b.table(
    "workspaces",
    {
      id: b.text("id").primaryKey(),
      accountId: b
        .text("account_id")
        .notNull()
        .references(() => accounts.id),
      name: b.text("name").notNull(),
      timeZone: b.text("time_zone").notNull(),
      /** Posts that would publish or schedule wait for a holder of posts:approve (DESIGN.md). */
      approvalRequired: b.boolean("approval_required").notNull().default(false),
      /** Short links with UTM presets (null: never set, tracking off). */
      linkTracking: b.json("link_tracking").$type<LinkTrackingSettings | null>(),
      createdAt: b.integer("created_at").notNull(),
      updatedAt: b.integer("updated_at").notNull(),
    },
    (t) => [b.index("workspaces_account").on(t.accountId, t.id)],
  );

  const apiKeys = b.table(
    "api_keys",
    {
      id: b.text("id").primaryKey(),
      accountId: b
        .text("account_id")
        .notNull()
        .references(() => accounts.id),
      name: b.text("name").notNull(),
      prefix: b.text("prefix").notNull(),
      secretHash: b.text("secret_hash").notNull(),
      environment: b.text("environment", { enum: ["live", "test"] }).notNull(),
      /** JSON array of scope names. */
      scopes: b.json("scopes").$type<string[]>().notNull(),
      workspaceAccessMode: b.text("workspace_access_mode", { enum: ["all", "selected"] }).notNull(),
      expiresAt: b.integer("expires_at"),
      revokedAt: b.integer("revoked_at"),
      lastUsedAt: b.integer("last_used_at"),
      createdAt: b.integer("created_at").notNull(),
      /** The person who created the key in the dashboard (null: the admin CLI, signup, the CLI login). */
      createdByUserId: b.text("created_by_user_id").references(() => users.id),
      /** The dashboard form's one-time key: a resubmitted form finds this key instead of making another. */
      creationFormKey: b.text("creation_form_key"),
      /**
       * `oauth_grant`: a person's consent to an OAuth client (issue 29). The row is the grant:
       * `secret_hash` is its current access token's, `expires_at` the grant's end, `access_expires_at`
       * the access token's; the client is `oauth_client_id` (tables/oauth.ts).
       */
      kind: b
        .text("kind", { enum: ["api_key", "oauth_grant"] })
        .notNull()
        .default("api_key"),
      oauthClientId: b.text("oauth_client_id"),
      /** When the current secret stops working (an OAuth access token); null for keys. */
      accessExpiresAt: b.integer("access_expires_at"),
    },
    (t) => [
      b.uniqueIndex("api_keys_secret_hash").on(t.secretHash),
      b.uniqueIndex("api_keys_creation_form_key").on(t.accountId, t.creationFormKey),
    ],
  );

  const apiKeyWorkspaces = b.table(
    "api_key_workspaces",
    {
      keyId: b
        .text("key_id")
        .notNull()
        .references(() => apiKeys.id, { onDelete: "cascade" }),
      workspaceId: b
        .text("workspace_id")
        .notNull()
        .references(() => workspaces.id, { onDelete: "cascade" }),
    },
    (t) => [b.primaryKey({ columns: [t.keyId, t.workspaceId] })],
  );

  const idempotencyKeys = b.table(
    "idempotency_keys",
    {
      accountId: b.text("account_id").notNull(),
      key: b.text("key").notNull(),
      requestHash: b.text("request_hash").notNull(),
      /** `in_flight` until the first request finishes; a row left in flight by a crash stays unknown. */
      state: b.text("state", { enum: ["in_flight", "completed"] }).notNull(),
      responseStatus: b.integer("response_status"),
      responseBody: b.text("response_body"),
      /** JSON object of replayed headers (ETag, Location, Retry-After). */
      responseHeaders: b.text("response_headers"),
      createdAt: b.integer("created_at").notNull(),
      expiresAt: b.integer("expires_at").notNull(),
    },
    (t) => [
      b.primaryKey({ columns: [t.accountId, t.key] }),
      b.index("idempotency_keys_expiry").on(t.expiresAt),
    ],
  );

  const auditRecords = b.table(
    "audit_records",
    {
      id: b.text("id").primaryKey(),
      accountId: b.text("account_id").notNull(),
      credentialId: b.text("credential_id"),
      action: b.text("action").notNull(),
      workspaceId: b.text("workspace_id"),
      targetType: b.text("target_type").notNull(),
      targetId: b.text("target_id").notNull(),
      /** Herald's own id of the request that made the change (`req_…`, never the caller's). */
      requestId: b.text("request_id"),
      /** The caller's `Service-Request-Id`, as sent (null when none): kept apart, as it is the caller's word. */
      clientRequestId: b.text("client_request_id"),
      createdAt: b.integer("created_at").notNull(),
    },
    (t) => [
      b.index("audit_records_account").on(t.accountId, t.id),
      // Retention takes the oldest records by this (src/jobs/retention.ts).
      b
        .index("audit_records_created")
        .on(t.createdAt),
    ],
  );

  const invitations = b.table(
    "invitations",
    {
      id: b.autoIncrementKey("id"),
      accountId: b
        .text("account_id")
        .notNull()
        .references(() => accounts.id),
      email: b.text("email").notNull(),
      createdAt: b.integer("created_at").notNull(),
      expiresAt: b.integer("expires_at").notNull(),
      revokedAt: b.integer("revoked_at"),
      /** Latest outgoing mail for this invitation. */
      deliveryRequestedAt: b.integer("delivery_requested_at").notNull(),
      /** The role the person gets on accepting. */
      role: b
        .text("role", { enum: ["owner", "admin", "member"] })
        .notNull()
        .default("member"),
      /** SHA-256 of the e-mailed link's token; a resend replaces it (null: made before links existed). */
      tokenHash: b.text("token_hash"),
      acceptedAt: b.integer("accepted_at"),
    },
    (t) => [
      b.index("invitations_account").on(t.accountId, t.id),
      b.uniqueIndex("invitations_token").on(t.tokenHash),
    ],
  );

  const mailOutbox = b.table(
    "mail_outbox",
    {
      id: b.text("id").primaryKey(),
      toAddress: b.text("to_address").notNull(),
      subject: b.text("subject").notNull(),
      /**
       * The text as kept: every link replaced by a marker, so no one-time token is ever readable here
       * (nor in backups and exports). Legacy rows are rewritten at start (`sealLegacyMail`).
       */
      textBody: b.text("text_body").notNull(),
      /**
       * The whole text, sealed with SecretBox (AES-256-GCM), while the message waits to be sent;
       * cleared once it is sent or given up.
       */
      sealedBody: b.text("sealed_body"),
      /**
       * `pending` waits for a sender (or for SMTP to be configured), `sent`, or `failed` after the last
       * retry.
       */
      status: b.text("status", { enum: ["pending", "sent", "failed"] }).notNull(),
      attempts: b.integer("attempts").notNull().default(0),
      nextAttemptAt: b.integer("next_attempt_at").notNull(),
      lastError: b.text("last_error"),
      invitationId: b.integer("invitation_id").references(() => invitations.id),
      createdAt: b.integer("created_at").notNull(),
      sentAt: b.integer("sent_at"),
    },
    (t) => [
      b.index("mail_outbox_due").on(t.status, t.nextAttemptAt),
      b.index("mail_outbox_invitation").on(t.invitationId),
    ],
  );
  return {
    accounts,
    users,
    workspaces,
    apiKeys,
    apiKeyWorkspaces,
    idempotencyKeys,
    auditRecords,
    invitations,
    mailOutbox,
  };
}

/** The account tables of one dialect. */
export type AccountTables = ReturnType<typeof defineAccountTables>;
