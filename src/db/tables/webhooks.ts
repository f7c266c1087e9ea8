// Tables of the webhooks capability (endpoints, deliveries, delivery attempts).
import { sql } from "drizzle-orm";
import type { TableBuilders } from "./builders.ts";
import type { AccountTables } from "./accounts.ts";

/** The webhook tables. */
export function defineWebhookTables(b: TableBuilders, { workspaces }: Pick<AccountTables, "workspaces">) {
  /** Registered receivers of signed events. */
  const webhookEndpoints = b.table(
    "webhook_endpoints",
    {
      id: b.text("id").primaryKey(),
      workspaceId: b
        .text("workspace_id")
        .notNull()
        .references(() => workspaces.id),
      name: b.text("name").notNull(),
      url: b.text("url").notNull(),
      enabled: b.boolean("enabled").notNull(),
      /** JSON array of event types. */
      eventTypes: b.json("event_types").$type<string[]>().notNull(),
      destinationFilterMode: b.text("destination_filter_mode", { enum: ["all", "selected"] }).notNull(),
      /** JSON array of destination ids (used with `selected`). */
      destinationIds: b.json("destination_ids").$type<string[]>().notNull(),
      contentMode: b.text("content_mode", { enum: ["metadata", "full"] }).notNull(),
      /** The signing secret, sealed with SecretBox (AES-256-GCM). */
      secretSealed: b.text("secret_sealed").notNull(),
      secretLastFour: b.text("secret_last_four").notNull(),
      /** The secret before the last rotation, still signing until `previousSecretExpiresAt`. */
      previousSecretSealed: b.text("previous_secret_sealed"),
      previousSecretExpiresAt: b.integer("previous_secret_expires_at"),
      configVersion: b.integer("config_version").notNull(),
      /** Why the endpoint is disabled, when Herald disabled it (`delivery_failures`); null otherwise. */
      disabledReason: b.text("disabled_reason"),
      /** First failed attempt since the last success; null while deliveries succeed. */
      failingSince: b.integer("failing_since"),
      createdAt: b.integer("created_at").notNull(),
      updatedAt: b.integer("updated_at").notNull(),
    },
    (t) => [b.index("webhook_endpoints_workspace").on(t.workspaceId, t.id)],
  );

  /** One event to one endpoint: retried until it succeeds or its three days are over. */
  const webhookDeliveries = b.table(
    "webhook_deliveries",
    {
      id: b.text("id").primaryKey(),
      endpointId: b
        .text("endpoint_id")
        .notNull()
        .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
      workspaceId: b.text("workspace_id").notNull(),
      eventId: b.text("event_id").notNull(),
      eventType: b.text("event_type").notNull(),
      eventCreatedAt: b.integer("event_created_at").notNull(),
      /**
       * The event's `data.object` as written (post summaries with `content`; stripped when sent in metadata
       * mode).
       */
      payload: b.json("payload").$type<Record<string, unknown>>().notNull(),
      status: b.text("status", { enum: ["pending", "succeeded", "failed"] }).notNull(),
      attemptCount: b.integer("attempt_count").notNull().default(0),
      /** When the next attempt is due (while pending); a claimed delivery has it pushed out by the lease. */
      nextAttemptAt: b.integer("next_attempt_at"),
      lastAttemptAt: b.integer("last_attempt_at"),
      lastResponseStatus: b.integer("last_response_status"),
      lastError: b.text("last_error"),
      lastDurationMs: b.integer("last_duration_ms"),
      deliveredAt: b.integer("delivered_at"),
      failedAt: b.integer("failed_at"),
      /** The delivery this one sends again (POST …/redeliver). */
      redeliveryOf: b.text("redelivery_of"),
      createdAt: b.integer("created_at").notNull(),
    },
    (t) => [
      b.index("webhook_deliveries_due").on(t.status, t.nextAttemptAt),
      b.index("webhook_deliveries_endpoint").on(t.endpointId, t.id),
      // Retention takes the oldest finished deliveries by this (src/jobs/retention.ts).
      b
        .index("webhook_deliveries_created")
        .on(t.createdAt),
      // The dispatcher fans an event out to an endpoint once; redeliveries are extra rows.
      b
        .uniqueIndex("webhook_deliveries_once")
        .on(t.endpointId, t.eventId)
        .where(sql`redelivery_of IS NULL`),
    ],
  );

  /** Every attempt of a delivery, for the delivery log. */
  const webhookDeliveryAttempts = b.table(
    "webhook_delivery_attempts",
    {
      deliveryId: b
        .text("delivery_id")
        .notNull()
        .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
      number: b.integer("number").notNull(),
      startedAt: b.integer("started_at").notNull(),
      durationMs: b.integer("duration_ms").notNull(),
      responseStatus: b.integer("response_status"),
      error: b.text("error"),
    },
    (t) => [b.primaryKey({ columns: [t.deliveryId, t.number] })],
  );
  return { webhookEndpoints, webhookDeliveries, webhookDeliveryAttempts };
}
