import { iso } from "../../lib/clock.ts";
import type { Herald } from "../../herald.ts";
import type { ChannelLimits, Credentials, DestinationRef } from "../../providers/types.ts";
import type { ConnectionRow, DestinationRow } from "./repo.ts";

/** `ready`, `unavailable` (with a reason) or `disabled`. */
export function destinationStatus(row: DestinationRow): "ready" | "unavailable" | "disabled" {
  if (row.unavailableReason) return "unavailable";
  return row.enabled ? "ready" : "disabled";
}

/** The destination resource (`unavailable_reason` present only when unavailable). */
export function presentDestination(row: DestinationRow) {
  const status = destinationStatus(row);
  return {
    id: row.id,
    object: "destination" as const,
    channel: row.channel,
    display_name: row.displayName,
    status,
    ...(status === "unavailable" ? { unavailable_reason: row.unavailableReason! } : {}),
    is_default: row.isDefault,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/** The connection session resource. */
export function presentConnection(row: ConnectionRow) {
  return {
    object: "destination_connection" as const,
    id: row.id,
    provider: row.provider,
    status: row.status,
    authorization_url: row.status === "pending" ? row.authorizationUrl : null,
    destination_id: row.destinationId,
    error: row.error,
    expires_at: iso(row.expiresAt),
  };
}

/** What an adapter needs of a destination, with its credentials decrypted. */
export function destinationRef(h: Herald, row: DestinationRow): DestinationRef {
  return {
    origin: row.origin,
    externalId: row.externalId,
    handle: row.handle,
    credentials: JSON.parse(h.secrets.decrypt(row.credentialsSealed)) as Credentials,
    limits: row.limits as unknown as ChannelLimits,
  };
}
