import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Timestamps are integer milliseconds since the epoch (UTC); responses format them with `iso()`.

export const accounts = sqliteTable("accounts", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id),
    email: text("email").notNull(),
    passwordHash: text("password_hash"),
    role: text("role", { enum: ["owner", "admin", "member"] }).notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("users_email_unique").on(t.email)],
);

export const workspaces = sqliteTable(
  "workspaces",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id),
    name: text("name").notNull(),
    timeZone: text("time_zone").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("workspaces_account").on(t.accountId, t.id)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull().references(() => accounts.id),
    name: text("name").notNull(),
    prefix: text("prefix").notNull(),
    secretHash: text("secret_hash").notNull(),
    environment: text("environment", { enum: ["live", "test"] }).notNull(),
    /** JSON array of scope names. */
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    workspaceAccessMode: text("workspace_access_mode", { enum: ["all", "selected"] }).notNull(),
    expiresAt: integer("expires_at"),
    revokedAt: integer("revoked_at"),
    lastUsedAt: integer("last_used_at"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("api_keys_secret_hash").on(t.secretHash)],
);

export const apiKeyWorkspaces = sqliteTable(
  "api_key_workspaces",
  {
    keyId: text("key_id").notNull().references(() => apiKeys.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id").notNull().references(() => workspaces.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.workspaceId] })],
);

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    accountId: text("account_id").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    /** `in_flight` until the first request finishes; a row left in flight by a crash stays unknown. */
    state: text("state", { enum: ["in_flight", "completed"] }).notNull(),
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    /** JSON object of replayed headers (ETag, Location, Retry-After). */
    responseHeaders: text("response_headers"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index("idempotency_keys_expiry").on(t.expiresAt)],
);

export const auditRecords = sqliteTable(
  "audit_records",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    credentialId: text("credential_id"),
    action: text("action").notNull(),
    workspaceId: text("workspace_id"),
    targetType: text("target_type").notNull(),
    targetId: text("target_id").notNull(),
    requestId: text("request_id"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("audit_records_account").on(t.accountId, t.id)],
);

export const invitations = sqliteTable(
  "invitations",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    accountId: text("account_id").notNull().references(() => accounts.id),
    email: text("email").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    revokedAt: integer("revoked_at"),
    /** Latest outgoing mail for this invitation. */
    deliveryRequestedAt: integer("delivery_requested_at").notNull(),
  },
  (t) => [index("invitations_account").on(t.accountId, t.id)],
);

export const mailOutbox = sqliteTable(
  "mail_outbox",
  {
    id: text("id").primaryKey(),
    toAddress: text("to_address").notNull(),
    subject: text("subject").notNull(),
    textBody: text("text_body").notNull(),
    /** `pending` waits for a sender (or for SMTP to be configured), `sent`, or `failed` after the last retry. */
    status: text("status", { enum: ["pending", "sent", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    lastError: text("last_error"),
    invitationId: integer("invitation_id").references(() => invitations.id),
    createdAt: integer("created_at").notNull(),
    sentAt: integer("sent_at"),
  },
  (t) => [index("mail_outbox_due").on(t.status, t.nextAttemptAt), index("mail_outbox_invitation").on(t.invitationId)],
);
