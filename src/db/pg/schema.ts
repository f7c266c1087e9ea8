// The PostgreSQL twin of src/db/sqlite/schema.ts: same tables, columns, keys and indexes, and identical
// TypeScript row types (test/db/schema-parity.test.ts), so repositories typed with the SQLite tables run
// on these. Change both files together, then `npm run db:generate`.
import { sql } from "drizzle-orm";
import type { StoredProviderPending } from "../pending.ts";
import {
  bigint,
  boolean,
  customType,
  index,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from "drizzle-orm/pg-core";

// Timestamps are bigint milliseconds since the epoch (UTC; int4 would overflow); responses format them
// with `iso()`. Every SQLite integer is a bigint here, read as a JS number.

/**
 * JSON stored as text, like SQLite's `text(..., { mode: "json" })`, so both engines hold the same
 * strings. A function declaration, hoisted, because schema-webhooks.ts and schema-assets.ts import it
 * while this module is still being evaluated (they are re-exported below).
 */
export function jsonText<T>(name: string) {
  return customType<{ data: T; driverData: string }>({
    dataType: () => "text",
    toDriver: (value) => JSON.stringify(value),
    fromDriver: (value) => JSON.parse(value) as T,
  })(name);
}

export const accounts = pgTable("accounts", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  createdAt: bigint("created_at", { mode: "number" }).notNull(),
  updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
});

export const users = pgTable(
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
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("users_email_unique").on(t.email)],
);

export const workspaces = pgTable(
  "workspaces",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    name: text("name").notNull(),
    timeZone: text("time_zone").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [index("workspaces_account").on(t.accountId, t.id)],
);

export const apiKeys = pgTable(
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
    scopes: jsonText<string[]>("scopes").notNull(),
    workspaceAccessMode: text("workspace_access_mode", { enum: ["all", "selected"] }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }),
    revokedAt: bigint("revoked_at", { mode: "number" }),
    lastUsedAt: bigint("last_used_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
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

export const apiKeyWorkspaces = pgTable(
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

export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    accountId: text("account_id").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    /** `in_flight` until the first request finishes; a row left in flight by a crash stays unknown. */
    state: text("state", { enum: ["in_flight", "completed"] }).notNull(),
    responseStatus: bigint("response_status", { mode: "number" }),
    responseBody: text("response_body"),
    /** JSON object of replayed headers (ETag, Location, Retry-After). */
    responseHeaders: text("response_headers"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.key] }), index("idempotency_keys_expiry").on(t.expiresAt)],
);

export const auditRecords = pgTable(
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
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [index("audit_records_account").on(t.accountId, t.id)],
);

export const invitations = pgTable(
  "invitations",
  {
    // SQLite's AUTOINCREMENT: an identity column that still accepts an explicit id.
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    email: text("email").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    revokedAt: bigint("revoked_at", { mode: "number" }),
    /** Latest outgoing mail for this invitation. */
    deliveryRequestedAt: bigint("delivery_requested_at", { mode: "number" }).notNull(),
    /** The role the person gets on accepting. */
    role: text("role", { enum: ["owner", "admin", "member"] })
      .notNull()
      .default("member"),
    /** SHA-256 of the e-mailed link's token; a resend replaces it (null: made before links existed). */
    tokenHash: text("token_hash"),
    acceptedAt: bigint("accepted_at", { mode: "number" }),
  },
  (t) => [
    index("invitations_account").on(t.accountId, t.id),
    uniqueIndex("invitations_token").on(t.tokenHash),
  ],
);

export const mailOutbox = pgTable(
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
    attempts: bigint("attempts", { mode: "number" }).notNull().default(0),
    nextAttemptAt: bigint("next_attempt_at", { mode: "number" }).notNull(),
    lastError: text("last_error"),
    invitationId: bigint("invitation_id", { mode: "number" }).references(() => invitations.id),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    sentAt: bigint("sent_at", { mode: "number" }),
  },
  (t) => [
    index("mail_outbox_due").on(t.status, t.nextAttemptAt),
    index("mail_outbox_invitation").on(t.invitationId),
  ],
);

export const destinations = pgTable(
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
    limits: jsonText<Record<string, number>>("limits").notNull(),
    enabled: boolean("enabled").notNull().default(true),
    isDefault: boolean("is_default").notNull().default(false),
    /** Set when the account must be connected again (`reauthorization_required`, …). */
    unavailableReason: text("unavailable_reason"),
    /** The process refreshing the token now, and until when (one refresh across processes). */
    refreshLeaseOwner: text("refresh_lease_owner"),
    refreshLeaseExpiresAt: bigint("refresh_lease_expires_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
    deletedAt: bigint("deleted_at", { mode: "number" }),
  },
  (t) => [index("destinations_workspace").on(t.workspaceId, t.id)],
);

export const destinationConnections = pgTable(
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
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("destination_connections_state").on(t.state)],
);

export const oauthApps = pgTable(
  "oauth_apps",
  {
    provider: text("provider").notNull(),
    origin: text("origin").notNull(),
    redirectUri: text("redirect_uri").notNull(),
    clientId: text("client_id").notNull(),
    clientSecretSealed: text("client_secret_sealed").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.origin, t.redirectUri] })],
);

/** Media files; the upload flow (asset uploads, blobs) builds on this table. */
export const assets = pgTable(
  "assets",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    type: text("type", { enum: ["card", "video", "poster"] }).notNull(),
    label: text("label").notNull(),
    contentType: text("content_type").notNull(),
    byteSize: bigint("byte_size", { mode: "number" }).notNull(),
    width: bigint("width", { mode: "number" }),
    height: bigint("height", { mode: "number" }),
    durationSec: bigint("duration_sec", { mode: "number" }),
    status: text("status", { enum: ["pending_upload", "ready"] }).notNull(),
    /** Key of the object in the blob store; null once a deleted asset's bytes are gone. */
    blobKey: text("blob_key"),
    /** Base64 CRC64NVME of the whole object (set when the upload completes). */
    checksum: text("checksum"),
    /** Layout name from the aspect ratio (`x-landscape`, `square`, …; docs/decisions.md). */
    format: text("format"),
    inspectedAt: bigint("inspected_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    deletedAt: bigint("deleted_at", { mode: "number" }),
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

export const posts = pgTable(
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
    version: bigint("version", { mode: "number" }).notNull(),
    headline: text("headline").notNull(),
    body: jsonText<string[]>("body").notNull(),
    destinationOptions: jsonText<Record<string, Record<string, unknown>>>("destination_options").notNull(),
    /** [{asset_id, item_index}] in order. */
    assetItems: jsonText<{ asset_id: string; item_index: number }[]>("asset_items").notNull(),
    scheduleMode: text("schedule_mode").notNull(),
    scheduledAt: bigint("scheduled_at", { mode: "number" }),
    timeZone: text("time_zone").notNull(),
    queueLocalDate: text("queue_local_date"),
    queueWindowId: text("queue_window_id"),
    deferredReason: text("deferred_reason"),
    deferredUntil: bigint("deferred_until", { mode: "number" }),
    retrySafety: text("retry_safety").notNull(),
    lastError: jsonText<Record<string, unknown> | null>("last_error"),
    /** A body item the network accepted and is still processing (awaiting-provider). */
    providerPending: jsonText<StoredProviderPending | null>("provider_pending"),
    attemptCount: bigint("attempt_count", { mode: "number" }).notNull().default(0),
    /** What starts the next attempt: `initial`, `automatic_retry`, `manual_retry` or `recovery`. */
    nextTrigger: text("next_trigger").notNull().default("initial"),
    /** Automatic retries used since the last manual action. */
    autoRetries: bigint("auto_retries", { mode: "number" }).notNull().default(0),
    nextActionAt: bigint("next_action_at", { mode: "number" }),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: bigint("lease_expires_at", { mode: "number" }),
    publishedAt: bigint("published_at", { mode: "number" }),
    cancelledAt: bigint("cancelled_at", { mode: "number" }),
    missedAt: bigint("missed_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
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

export const receipts = pgTable(
  "receipts",
  {
    id: text("id").primaryKey(),
    postId: text("post_id")
      .notNull()
      .references(() => posts.id, { onDelete: "cascade" }),
    itemIndex: bigint("item_index", { mode: "number" }).notNull(),
    providerObjectId: text("provider_object_id").notNull(),
    url: text("url").notNull(),
    extra: jsonText<Record<string, unknown>>("extra").notNull(),
    state: text("state").notNull(),
    publishedAt: bigint("published_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("receipts_post_item").on(t.postId, t.itemIndex)],
);

export const attempts = pgTable(
  "attempts",
  {
    id: text("id").primaryKey(),
    postId: text("post_id")
      .notNull()
      .references(() => posts.id, { onDelete: "cascade" }),
    number: bigint("number", { mode: "number" }).notNull(),
    trigger: text("trigger").notNull(),
    status: text("status").notNull(),
    startedAt: bigint("started_at", { mode: "number" }).notNull(),
    finishedAt: bigint("finished_at", { mode: "number" }),
    retrySafety: text("retry_safety").notNull(),
    error: jsonText<Record<string, unknown> | null>("error"),
    provider: jsonText<Record<string, unknown> | null>("provider"),
  },
  (t) => [index("attempts_post").on(t.postId, t.number)],
);

export const queueWindows = pgTable(
  "queue_windows",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    weekday: bigint("weekday", { mode: "number" }).notNull(),
    localTime: text("local_time").notNull(),
  },
  (t) => [uniqueIndex("queue_windows_slot").on(t.workspaceId, t.weekday, t.localTime)],
);

/** Events waiting for delivery (webhooks, chat notifications); written with the state change. */
export const eventsOutbox = pgTable(
  "events_outbox",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    type: text("type").notNull(),
    postId: text("post_id"),
    destinationId: text("destination_id"),
    /** The event body's `data.object` with `content` (stripped for metadata-mode endpoints). */
    payload: jsonText<Record<string, unknown>>("payload").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    /**
     * When the dispatcher fanned the event out into deliveries; null until then. A per-row mark, not
     * a high-water mark: an event whose transaction commits late is still found.
     */
    dispatchedAt: bigint("dispatched_at", { mode: "number" }),
    /** When the chat fan-out looked at the event (its own mark, independent of the webhooks'). */
    chatDispatchedAt: bigint("chat_dispatched_at", { mode: "number" }),
  },
  (t) => [
    index("events_outbox_workspace").on(t.workspaceId, t.id),
    index("events_outbox_undispatched").on(t.id).where(sql`${t.dispatchedAt} IS NULL`),
    index("events_outbox_chat_undispatched").on(t.id).where(sql`${t.chatDispatchedAt} IS NULL`),
  ],
);

/** X posts per workspace per calendar month (UTC): `reserved` scheduled, `used` published. */
export const xUsage = pgTable(
  "x_usage",
  {
    workspaceId: text("workspace_id").notNull(),
    month: text("month").notNull(),
    reserved: bigint("reserved", { mode: "number" }).notNull().default(0),
    used: bigint("used", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.month] })],
);

export * from "./schema-webhooks.ts";
export * from "./schema-assets.ts";
export * from "./schema-analytics.ts";
export * from "./schema-signup.ts";
export * from "./schema-team.ts";
export * from "./schema-billing.ts";
