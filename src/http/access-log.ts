import type { Logger } from "../lib/logger.ts";
import { clientRequestIdOf, credentialIdOf, requestIdOf, routeOf } from "./plugin.ts";

/**
 * Writes the access-log line of one request: method, the route pattern it matched (never the raw
 * path or query, which can carry signatures), status, time to the response in ms, request id and
 * the authenticated credential's id.
 */
export function logAccess(logger: Logger, request: Request, status: number, startedAt: number): void {
  logger.info("request", {
    method: request.method,
    route: routeOf(request),
    status,
    duration_ms: Math.round((performance.now() - startedAt) * 100) / 100,
    request_id: requestIdOf(request),
    client_request_id: clientRequestIdOf(request),
    credential_id: credentialIdOf(request),
  });
}
