// Tables of the webhooks capability (endpoints, deliveries, delivery attempts).
// PostgreSQL twin of src/db/sqlite/schema-webhooks.ts.
import { sql } from "drizzle-orm";
import { bigint, boolean, index, pgTable, primaryKey, text, uniqueIndex } from "drizzle-orm/pg-core";
import { jsonText, workspaces } from "./schema.ts";

/** Registered receivers of signed events. */
export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    name: text("name").notNull(),
    url: text("url").notNull(),
    enabled: boolean("enabled").notNull(),
    /** JSON array of event types. */
    eventTypes: jsonText<string[]>("event_types").notNull(),
    destinationFilterMode: text("destination_filter_mode", { enum: ["all", "selected"] }).notNull(),
    /** JSON array of destination ids (used with `selected`). */
    destinationIds: jsonText<string[]>("destination_ids").notNull(),
    contentMode: text("content_mode", { enum: ["metadata", "full"] }).notNull(),
    /** The signing secret, sealed with SecretBox (AES-256-GCM). */
    secretSealed: text("secret_sealed").notNull(),
    secretLastFour: text("secret_last_four").notNull(),
    /** The secret before the last rotation, still signing until `previousSecretExpiresAt`. */
    previousSecretSealed: text("previous_secret_sealed"),
    previousSecretExpiresAt: bigint("previous_secret_expires_at", { mode: "number" }),
    configVersion: bigint("config_version", { mode: "number" }).notNull(),
    /** Why the endpoint is disabled, when Herald disabled it (`delivery_failures`); null otherwise. */
    disabledReason: text("disabled_reason"),
    /** First failed attempt since the last success; null while deliveries succeed. */
    failingSince: bigint("failing_since", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [index("webhook_endpoints_workspace").on(t.workspaceId, t.id)],
);

/** One event to one endpoint: retried until it succeeds or its three days are over. */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    workspaceId: text("workspace_id").notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    eventCreatedAt: bigint("event_created_at", { mode: "number" }).notNull(),
    /**
     * The event's `data.object` as written (post summaries with `content`; stripped when sent in metadata
     * mode).
     */
    payload: jsonText<Record<string, unknown>>("payload").notNull(),
    status: text("status", { enum: ["pending", "succeeded", "failed"] }).notNull(),
    attemptCount: bigint("attempt_count", { mode: "number" }).notNull().default(0),
    /** When the next attempt is due (while pending); a claimed delivery has it pushed out by the lease. */
    nextAttemptAt: bigint("next_attempt_at", { mode: "number" }),
    lastAttemptAt: bigint("last_attempt_at", { mode: "number" }),
    lastResponseStatus: bigint("last_response_status", { mode: "number" }),
    lastError: text("last_error"),
    lastDurationMs: bigint("last_duration_ms", { mode: "number" }),
    deliveredAt: bigint("delivered_at", { mode: "number" }),
    failedAt: bigint("failed_at", { mode: "number" }),
    /** The delivery this one sends again (POST …/redeliver). */
    redeliveryOf: text("redelivery_of"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
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
export const webhookDeliveryAttempts = pgTable(
  "webhook_delivery_attempts",
  {
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    number: bigint("number", { mode: "number" }).notNull(),
    startedAt: bigint("started_at", { mode: "number" }).notNull(),
    durationMs: bigint("duration_ms", { mode: "number" }).notNull(),
    responseStatus: bigint("response_status", { mode: "number" }),
    error: text("error"),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.number] })],
);
