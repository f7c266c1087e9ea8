import { iso } from "../../lib/clock.ts";
import type { Db } from "../../db/open.ts";
import { type DeliveryAttemptRow, type DeliveryRow, type EndpointRow, findDelivery } from "./repo.ts";

/** The contract's four event types: what a new endpoint in the dashboard starts with checked. */
export const CONTRACT_EVENT_TYPES = [
  "post.published",
  "post.failed",
  "post.awaiting-provider",
  "post.needs-attention",
] as const;

/**
 * Every value `event_types` takes: the contract's four and the approval events (issue 30), which an
 * endpoint receives only when it lists them (endpoints that existed before do not).
 */
export const WEBHOOK_EVENT_TYPES = [
  ...CONTRACT_EVENT_TYPES,
  "post.approval-requested",
  "post.approved",
  "post.changes-requested",
] as const;

/** One of the event types. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The type of the event `POST …/test` sends (DESIGN.md). */
export const TEST_EVENT_TYPE = "webhook.test";

/** The outbox event written when Herald disables a failing endpoint (for chat notifications). */
export const ENDPOINT_DISABLED_EVENT_TYPE = "webhook_endpoint.disabled";

/**
 * The webhook endpoint resource (never its secret; `previous_secret_expires_at` only while the overlap
 * lasts).
 */
export function presentEndpoint(row: EndpointRow, now: number) {
  const overlap = row.previousSecretExpiresAt !== null && row.previousSecretExpiresAt > now;
  return {
    id: row.id,
    object: "webhook_endpoint" as const,
    name: row.name,
    url: row.url,
    enabled: row.enabled,
    event_types: row.eventTypes,
    destination_filter_mode: row.destinationFilterMode,
    destination_ids: row.destinationIds,
    content_mode: row.contentMode,
    secret_last_four: row.secretLastFour,
    previous_secret_expires_at: overlap ? iso(row.previousSecretExpiresAt) : null,
    config_version: row.configVersion,
    disabled_reason: row.disabledReason,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** The delivery resource of the delivery log, with every attempt. */
export function presentDelivery(row: DeliveryRow, attempts: DeliveryAttemptRow[]) {
  return {
    id: row.id,
    object: "webhook_delivery" as const,
    endpoint_id: row.endpointId,
    event_id: row.eventId,
    event_type: row.eventType,
    status: row.status,
    attempt_count: row.attemptCount,
    next_attempt_at: row.status === "pending" ? iso(row.nextAttemptAt) : null,
    last_attempt_at: iso(row.lastAttemptAt),
    last_response_status: row.lastResponseStatus,
    last_error: row.lastError,
    last_duration_ms: row.lastDurationMs,
    delivered_at: iso(row.deliveredAt),
    failed_at: iso(row.failedAt),
    redelivery_of: row.redeliveryOf,
    created_at: iso(row.createdAt),
    attempts: attempts.map((a) => ({
      number: a.number,
      started_at: iso(a.startedAt),
      duration_ms: a.durationMs,
      response_status: a.responseStatus,
      error: a.error,
    })),
  };
}

/**
 * The exact body of a delivery: the contract's event. `data.object` is the stored summary, without
 * `content` unless the endpoint is in `full` mode at the time of sending.
 */
export function renderEventBody(row: DeliveryRow, contentMode: EndpointRow["contentMode"]): string {
  const object: Record<string, unknown> = { ...row.payload };
  if (contentMode !== "full") delete object.content;
  return JSON.stringify({
    id: row.eventId,
    object: "event",
    api_version: "v1",
    type: row.eventType,
    workspace_id: row.workspaceId,
    created_at: iso(row.eventCreatedAt),
    data: { object },
  });
}

/**
 * The body one delivery of an endpoint sends, byte for byte, or null when the endpoint has no such
 * delivery. The contract's delivery log carries no bodies; the dashboard shows them from here.
 */
export async function deliveryBodyOf(
  db: Db,
  endpointId: string,
  deliveryId: string,
  contentMode: EndpointRow["contentMode"],
): Promise<string | null> {
  const row = await findDelivery(db, endpointId, deliveryId);
  return row ? renderEventBody(row, contentMode) : null;
}
