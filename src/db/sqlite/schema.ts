import { sql } from "drizzle-orm";
import type { StoredProviderPending } from "../pending.ts";
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
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    email: text("email").notNull(),
    /** What the person called themselves when joining by invitation (null: bootstrap, signup). */
    name: text("name"),
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
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
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
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
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
    /** The person who created the key in the dashboard (null: the admin CLI, signup, the CLI login). */
    createdByUserId: text("created_by_user_id").references(() => users.id),
    /** The dashboard form's one-time key: a resubmitted form finds this key instead of making another. */
    creationFormKey: text("creation_form_key"),
  },
  (t) => [
    uniqueIndex("api_keys_secret_hash").on(t.secretHash),
    uniqueIndex("api_keys_creation_form_key").on(t.accountId, t.creationFormKey),
  ],
);

export const apiKeyWorkspaces = sqliteTable(
  "api_key_workspaces",
  {
    keyId: text("key_id")
      .notNull()
      .references(() => apiKeys.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id, { onDelete: "cascade" }),
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
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    email: text("email").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    revokedAt: integer("revoked_at"),
    /** Latest outgoing mail for this invitation. */
    deliveryRequestedAt: integer("delivery_requested_at").notNull(),
    /** The role the person gets on accepting. */
    role: text("role", { enum: ["owner", "admin", "member"] })
      .notNull()
      .default("member"),
    /** SHA-256 of the e-mailed link's token; a resend replaces it (null: made before links existed). */
    tokenHash: text("token_hash"),
    acceptedAt: integer("accepted_at"),
  },
  (t) => [
    index("invitations_account").on(t.accountId, t.id),
    uniqueIndex("invitations_token").on(t.tokenHash),
  ],
);

export const mailOutbox = sqliteTable(
  "mail_outbox",
  {
    id: text("id").primaryKey(),
    toAddress: text("to_address").notNull(),
    subject: text("subject").notNull(),
    textBody: text("text_body").notNull(),
    /**
     * `pending` waits for a sender (or for SMTP to be configured), `sent`, or `failed` after the last
     * retry.
     */
    status: text("status", { enum: ["pending", "sent", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    lastError: text("last_error"),
    invitationId: integer("invitation_id").references(() => invitations.id),
    createdAt: integer("created_at").notNull(),
    sentAt: integer("sent_at"),
  },
  (t) => [
    index("mail_outbox_due").on(t.status, t.nextAttemptAt),
    index("mail_outbox_invitation").on(t.invitationId),
  ],
);

export const destinations = sqliteTable(
  "destinations",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    channel: text("channel").notNull(),
    displayName: text("display_name").notNull(),
    handle: text("handle").notNull(),
    externalId: text("external_id").notNull(),
    profileImageUrl: text("profile_image_url"),
    /** Origin of the instance / PDS the adapter talks to. */
    origin: text("origin").notNull(),
    /** AES-GCM sealed JSON of the adapter's credentials (SecretBox.encrypt). */
    credentialsSealed: text("credentials_sealed").notNull(),
    limits: text("limits", { mode: "json" }).$type<Record<string, number>>().notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    isDefault: integer("is_default", { mode: "boolean" }).notNull().default(false),
    /** Set when the account must be connected again (`reauthorization_required`, …). */
    unavailableReason: text("unavailable_reason"),
    /** The process refreshing the token now, and until when (one refresh across processes). */
    refreshLeaseOwner: text("refresh_lease_owner"),
    refreshLeaseExpiresAt: integer("refresh_lease_expires_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [index("destinations_workspace").on(t.workspaceId, t.id)],
);

export const destinationConnections = sqliteTable(
  "destination_connections",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    provider: text("provider").notNull(),
    status: text("status", { enum: ["pending", "completed", "failed", "expired"] }).notNull(),
    origin: text("origin").notNull(),
    /** Random OAuth `state`, unique; the callback finds the connection by it. */
    state: text("state"),
    /** Sealed PKCE verifier and OAuth client of a pending connection. */
    secretsSealed: text("secrets_sealed"),
    authorizationUrl: text("authorization_url"),
    destinationId: text("destination_id"),
    error: text("error"),
    credentialId: text("credential_id"),
    requestId: text("request_id"),
    expiresAt: integer("expires_at").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("destination_connections_state").on(t.state)],
);

export const oauthApps = sqliteTable(
  "oauth_apps",
  {
    provider: text("provider").notNull(),
    origin: text("origin").notNull(),
    redirectUri: text("redirect_uri").notNull(),
    clientId: text("client_id").notNull(),
    clientSecretSealed: text("client_secret_sealed").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.origin, t.redirectUri] })],
);

/** Media files; the upload flow (asset uploads, blobs) builds on this table. */
export const assets = sqliteTable(
  "assets",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    type: text("type", { enum: ["card", "video", "poster"] }).notNull(),
    label: text("label").notNull(),
    contentType: text("content_type").notNull(),
    byteSize: integer("byte_size").notNull(),
    width: integer("width"),
    height: integer("height"),
    durationSec: integer("duration_sec"),
    status: text("status", { enum: ["pending_upload", "ready"] }).notNull(),
    /** Key of the object in the blob store; null once a deleted asset's bytes are gone. */
    blobKey: text("blob_key"),
    /** Base64 CRC64NVME of the whole object (set when the upload completes). */
    checksum: text("checksum"),
    /** Layout name from the aspect ratio (`x-landscape`, `square`, …; docs/decisions.md). */
    format: text("format"),
    inspectedAt: integer("inspected_at"),
    createdAt: integer("created_at").notNull(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [index("assets_workspace").on(t.workspaceId, t.id), index("assets_blob_key").on(t.blobKey)],
);

// The live post states (they hold queue slots), as SQL for the partial unique index below.
const LIVE_POST_STATES = [
  "preparing",
  "scheduled",
  "ready",
  "processing",
  "awaiting-provider",
  "needs-attention",
  "missed",
]
  .map((s) => `'${s}'`)
  .join(", ");
const QUEUED = "queue_window_id IS NOT NULL AND queue_local_date IS NOT NULL";

export const posts = sqliteTable(
  "posts",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    groupKey: text("group_key").notNull(),
    channel: text("channel").notNull(),
    destinationId: text("destination_id").references(() => destinations.id),
    state: text("state").notNull(),
    version: integer("version").notNull(),
    headline: text("headline").notNull(),
    body: text("body", { mode: "json" }).$type<string[]>().notNull(),
    destinationOptions: text("destination_options", { mode: "json" })
      .$type<Record<string, Record<string, unknown>>>()
      .notNull(),
    /** [{asset_id, item_index}] in order. */
    assetItems: text("asset_items", { mode: "json" })
      .$type<{ asset_id: string; item_index: number }[]>()
      .notNull(),
    scheduleMode: text("schedule_mode").notNull(),
    scheduledAt: integer("scheduled_at"),
    timeZone: text("time_zone").notNull(),
    queueLocalDate: text("queue_local_date"),
    queueWindowId: text("queue_window_id"),
    deferredReason: text("deferred_reason"),
    deferredUntil: integer("deferred_until"),
    retrySafety: text("retry_safety").notNull(),
    lastError: text("last_error", { mode: "json" }).$type<Record<string, unknown> | null>(),
    /** A body item the network accepted and is still processing (awaiting-provider). */
    providerPending: text("provider_pending", { mode: "json" }).$type<StoredProviderPending | null>(),
    attemptCount: integer("attempt_count").notNull().default(0),
    /** What starts the next attempt: `initial`, `automatic_retry`, `manual_retry` or `recovery`. */
    nextTrigger: text("next_trigger").notNull().default("initial"),
    /** Automatic retries used since the last manual action. */
    autoRetries: integer("auto_retries").notNull().default(0),
    nextActionAt: integer("next_action_at"),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: integer("lease_expires_at"),
    publishedAt: integer("published_at"),
    cancelledAt: integer("cancelled_at"),
    missedAt: integer("missed_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("posts_workspace").on(t.workspaceId, t.id),
    index("posts_due").on(t.state, t.nextActionAt),
    index("posts_destination").on(t.destinationId, t.publishedAt),
    // One draft per channel per group (the contract's group constraint), enforced by the database.
    uniqueIndex("posts_one_draft_per_group_channel")
      .on(t.workspaceId, t.groupKey, t.channel)
      .where(sql`state = 'draft'`),
    // One live post per destination per queue window per local date (a window holds one post per
    // destination); a test keeps the states equal to LIVE_STATES of src/modules/posts/states.ts.
    uniqueIndex("posts_one_live_post_per_queue_slot")
      .on(t.destinationId, t.queueWindowId, t.queueLocalDate)
      .where(sql.raw(`state IN (${LIVE_POST_STATES}) AND ${QUEUED}`)),
  ],
);

export const receipts = sqliteTable(
  "receipts",
  {
    id: text("id").primaryKey(),
    postId: text("post_id")
      .notNull()
      .references(() => posts.id, { onDelete: "cascade" }),
    itemIndex: integer("item_index").notNull(),
    providerObjectId: text("provider_object_id").notNull(),
    url: text("url").notNull(),
    extra: text("extra", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    state: text("state").notNull(),
    publishedAt: integer("published_at").notNull(),
  },
  (t) => [uniqueIndex("receipts_post_item").on(t.postId, t.itemIndex)],
);

export const attempts = sqliteTable(
  "attempts",
  {
    id: text("id").primaryKey(),
    postId: text("post_id")
      .notNull()
      .references(() => posts.id, { onDelete: "cascade" }),
    number: integer("number").notNull(),
    trigger: text("trigger").notNull(),
    status: text("status").notNull(),
    startedAt: integer("started_at").notNull(),
    finishedAt: integer("finished_at"),
    retrySafety: text("retry_safety").notNull(),
    error: text("error", { mode: "json" }).$type<Record<string, unknown> | null>(),
    provider: text("provider", { mode: "json" }).$type<Record<string, unknown> | null>(),
  },
  (t) => [index("attempts_post").on(t.postId, t.number)],
);

export const queueWindows = sqliteTable(
  "queue_windows",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    weekday: integer("weekday").notNull(),
    localTime: text("local_time").notNull(),
  },
  (t) => [uniqueIndex("queue_windows_slot").on(t.workspaceId, t.weekday, t.localTime)],
);

/** Events waiting for delivery (webhooks, chat notifications); written with the state change. */
export const eventsOutbox = sqliteTable(
  "events_outbox",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    type: text("type").notNull(),
    postId: text("post_id"),
    destinationId: text("destination_id"),
    /** The event body's `data.object` with `content` (stripped for metadata-mode endpoints). */
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: integer("created_at").notNull(),
    /**
     * When the dispatcher fanned the event out into deliveries; null until then. A per-row mark, not
     * a high-water mark: an event whose transaction commits late is still found.
     */
    dispatchedAt: integer("dispatched_at"),
    /** When the chat fan-out looked at the event (its own mark, independent of the webhooks'). */
    chatDispatchedAt: integer("chat_dispatched_at"),
  },
  (t) => [
    index("events_outbox_workspace").on(t.workspaceId, t.id),
    index("events_outbox_undispatched").on(t.id).where(sql`${t.dispatchedAt} IS NULL`),
    index("events_outbox_chat_undispatched").on(t.id).where(sql`${t.chatDispatchedAt} IS NULL`),
  ],
);

/** X posts per workspace per calendar month (UTC): `reserved` scheduled, `used` published. */
export const xUsage = sqliteTable(
  "x_usage",
  {
    workspaceId: text("workspace_id").notNull(),
    month: text("month").notNull(),
    reserved: integer("reserved").notNull().default(0),
    used: integer("used").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.month] })],
);

export * from "./schema-webhooks.ts";
export * from "./schema-assets.ts";
export * from "./schema-analytics.ts";
export * from "./schema-signup.ts";
export * from "./schema-team.ts";
export * from "./schema-billing.ts";
