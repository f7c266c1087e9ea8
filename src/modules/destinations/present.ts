import { iso } from "../../lib/clock.ts";
import type { Herald } from "../../herald.ts";
import type { ChannelLimits, Credentials, DestinationRef } from "../../providers/types.ts";
import type { ConnectionRow, DestinationRow } from "./repo.ts";

/**
 * Why a destination cannot publish now: its own stored reason, `app_not_configured` when its
 * network needs Herald's app credentials (HERALD_<CH>_CLIENT_ID/_SECRET) and they are not set, or a
 * setting the network refused since the start (`api_version_retired`).
 */
export function unavailableReason(h: Herald, row: DestinationRow): string | null {
  if (row.unavailableReason) return row.unavailableReason;
  const adapter = h.providers.adapter(row.channel);
  const refused = adapter?.configurationProblem?.() ?? null;
  if (refused) return refused;
  const flow = adapter?.connection;
  const app = h.providers.app(row.channel);
  const fixedApp = flow?.kind === "oauth" && flow.registration === "fixed-app";
  return fixedApp && (!app?.clientId || !app.clientSecret) ? "app_not_configured" : null;
}

/** `ready`, `unavailable` (with a reason) or `disabled`. */
export function destinationStatus(h: Herald, row: DestinationRow): "ready" | "unavailable" | "disabled" {
  if (unavailableReason(h, row)) return "unavailable";
  return row.enabled ? "ready" : "disabled";
}

/** The destination resource (`unavailable_reason` present only when unavailable). */
export function presentDestination(h: Herald, row: DestinationRow) {
  const status = destinationStatus(h, row);
  return {
    id: row.id,
    object: "destination" as const,
    channel: row.channel,
    display_name: row.displayName,
    status,
    ...(status === "unavailable" ? { unavailable_reason: unavailableReason(h, row)! } : {}),
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
