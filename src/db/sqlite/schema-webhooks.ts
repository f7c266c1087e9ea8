// Tables of the webhooks capability (endpoints, deliveries, delivery attempts).
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { workspaces } from "./schema.ts";

/** Registered receivers of signed events. */
export const webhookEndpoints = sqliteTable(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    name: text("name").notNull(),
    url: text("url").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    /** JSON array of event types. */
    eventTypes: text("event_types", { mode: "json" }).$type<string[]>().notNull(),
    destinationFilterMode: text("destination_filter_mode", { enum: ["all", "selected"] }).notNull(),
    /** JSON array of destination ids (used with `selected`). */
    destinationIds: text("destination_ids", { mode: "json" }).$type<string[]>().notNull(),
    contentMode: text("content_mode", { enum: ["metadata", "full"] }).notNull(),
    /** The signing secret, sealed with SecretBox (AES-256-GCM). */
    secretSealed: text("secret_sealed").notNull(),
    secretLastFour: text("secret_last_four").notNull(),
    /** The secret before the last rotation, still signing until `previousSecretExpiresAt`. */
    previousSecretSealed: text("previous_secret_sealed"),
    previousSecretExpiresAt: integer("previous_secret_expires_at"),
    configVersion: integer("config_version").notNull(),
    /** Why the endpoint is disabled, when Herald disabled it (`delivery_failures`); null otherwise. */
    disabledReason: text("disabled_reason"),
    /** First failed attempt since the last success; null while deliveries succeed. */
    failingSince: integer("failing_since"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("webhook_endpoints_workspace").on(t.workspaceId, t.id)],
);

/** One event to one endpoint: retried until it succeeds or its three days are over. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id").notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    eventCreatedAt: integer("event_created_at").notNull(),
    /**
     * The event's `data.object` as written (post summaries with `content`; stripped when sent in metadata
     * mode).
     */
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    status: text("status", { enum: ["pending", "succeeded", "failed"] }).notNull(),
    attemptCount: integer("attempt_count").notNull().default(0),
    /** When the next attempt is due (while pending); a claimed delivery has it pushed out by the lease. */
    nextAttemptAt: integer("next_attempt_at"),
    lastAttemptAt: integer("last_attempt_at"),
    lastResponseStatus: integer("last_response_status"),
    lastError: text("last_error"),
    lastDurationMs: integer("last_duration_ms"),
    deliveredAt: integer("delivered_at"),
    failedAt: integer("failed_at"),
    /** The delivery this one sends again (POST …/redeliver). */
    redeliveryOf: text("redelivery_of"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    index("webhook_deliveries_due").on(t.status, t.nextAttemptAt),
    index("webhook_deliveries_endpoint").on(t.endpointId, t.id),
    // The dispatcher fans an event out to an endpoint once; redeliveries are extra rows.
    uniqueIndex("webhook_deliveries_once")
      .on(t.endpointId, t.eventId)
      .where(sql`redelivery_of IS NULL`),
  ],
);

/** Every attempt of a delivery, for the delivery log. */
export const webhookDeliveryAttempts = sqliteTable(
  "webhook_delivery_attempts",
  {
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    number: integer("number").notNull(),
    startedAt: integer("started_at").notNull(),
    durationMs: integer("duration_ms").notNull(),
    responseStatus: integer("response_status"),
    error: text("error"),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.number] })],
);
