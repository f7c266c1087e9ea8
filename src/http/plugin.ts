import { Elysia } from "elysia";
import type { Herald } from "../herald.ts";
import { canUseWorkspace, type Actor } from "../core/actor.ts";
import { authenticate, requireScope } from "./auth.ts";
import { readJsonBody } from "./body-limit.ts";
import { isMcpDispatch } from "./mcp-dispatch.ts";
import { notFound, ProblemError } from "../core/problem.ts";
import { FailedAuthLimiter, RateLimiter } from "./rate-limit.ts";
import type { RouteScope } from "../core/scopes.ts";
import type { WorkspaceRow } from "../modules/workspaces/repo.ts";
import { BILLING_WARNING_HEADER, checkEntitlement } from "../modules/billing/entitlement.ts";
import {
  refusedWhileUnconfirmed,
  requireConfirmedAccount,
  unconfirmedProblem,
} from "../modules/signup/unconfirmed.ts";

// Per-request values set in early hooks and read by later ones (the Request object is the key).
const requestIds = new WeakMap<Request, string>();
const clientRequestIds = new WeakMap<Request, string>();
const actors = new WeakMap<Request, Actor>();
const workspaces = new WeakMap<Request, WorkspaceRow>();
const routes = new WeakMap<Request, string>();
// Requests the dashboard builds in-process for a signed-in person (never reachable from the network:
// only a Request object created here can be a key).
const internalActors = new WeakMap<Request, Actor>();

/**
 * Marks an in-process request as sent by `actor` (a dashboard session): the rails take it instead of
 * an API key and apply the same scope, workspace and rate-limit rules.
 */
export function actAs(request: Request, actor: Actor): Request {
  internalActors.set(request, actor);
  return request;
}

/** Herald's own id of a request, assigned in onRequest (audit records and logs name it). */
export function requestIdOf(request: Request): string {
  return requestIds.get(request) ?? "req_unknown";
}

/** The caller's valid `Service-Request-Id`, or null when it sent none (never trusted as Herald's own). */
export function clientRequestIdOf(request: Request): string | null {
  return clientRequestIds.get(request) ?? null;
}

/**
 * The id a response carries in `Service-Request-Id` and a problem's `request_id`: the caller's when
 * valid (the contract echoes it), else Herald's own.
 */
export function answeredRequestIdOf(request: Request): string {
  return clientRequestIds.get(request) ?? requestIdOf(request);
}

/**
 * Records a request's ids (done once, in onRequest). An in-process request of the dashboard keeps the
 * ids of the page request it serves.
 */
export function setRequestIds(request: Request, ids: { own: string; client: string | null }): void {
  const internal = internalActors.get(request);
  requestIds.set(request, internal?.requestId ?? ids.own);
  const client = internal ? (internal.clientRequestId ?? null) : ids.client;
  if (client !== null) clientRequestIds.set(request, client);
}

/** The credential that authenticated a request, once the scope macro has checked it. */
export function credentialIdOf(request: Request): string | null {
  return actors.get(request)?.credentialId ?? null;
}

/** Records the route pattern a request matched (for the access log). */
export function setRoute(request: Request, route: string): void {
  routes.set(request, route);
}

/** The route pattern a request matched, or null when none did. */
export function routeOf(request: Request): string | null {
  return routes.get(request) ?? null;
}

/** Where the rails get the address of the client that sent a request (the socket's peer). */
export type ClientAddress = (request: Request) => string;

/** Name of the JSON parser that enforces the 1 MiB limit; every route with a body uses it. */
export const JSON_PARSER = "heraldJson";

/**
 * The plugin every route module `use`s: the `scope` macro (authenticate, answering 429 instead of 401
 * once an address has used up its failed authentications, check scope, rate limit, the workspace, an
 * unconfirmed address's refusals (signup/unconfirmed.ts), the subscription's
 * entitlement, before body validation so an anonymous
 * caller gets 401, not 400) and the size-limited JSON
 * parser. The parser is registered again on the root app, where the compiled routes look it up
 * (a deduplicated plugin's parsers do not reach them); here it gives routes its type.
 */
export function heraldPlugin(
  h: Herald,
  limiter: RateLimiter,
  requireWorkspace: (actor: Actor, workspaceId: string) => Promise<WorkspaceRow>,
  failures: FailedAuthLimiter,
  clientAddress: ClientAddress,
) {
  return new Elysia({ name: "herald:rails" })
    .parser(JSON_PARSER, ({ request }) => readJsonBody(request))
    .macro({
      scope: (required: RouteScope) => ({
        async transform({ request, params, route, set }) {
          let actor: Actor;
          // A key's request reads the workspace it names with the key (one statement); null: not found.
          let keyWorkspace: WorkspaceRow | null = null;
          let keyUnconfirmed = false;
          const workspaceId = (params as Record<string, string> | undefined)?.workspace_id;
          const internal = internalActors.get(request);
          if (internal) {
            actor = {
              ...internal,
              requestId: requestIdOf(request),
              clientRequestId: clientRequestIdOf(request),
            };
            requireScope(actor, required);
          } else
            try {
              const authorization = request.headers.get("authorization");
              const found = await authenticate(h, {
                authorization,
                required,
                requestId: requestIdOf(request),
                workspaceId,
                // An OAuth access token's audience is the MCP resource: accepted on requests /mcp dispatched.
                mcpResource: isMcpDispatch(request),
              });
              actor = found.actor;
              keyWorkspace = found.workspace;
              keyUnconfirmed = found.unconfirmed;
              actor.clientRequestId = clientRequestIdOf(request);
            } catch (error) {
              // A valid key is never refused for its address's failures (a proxy's or an office's
              // address is shared); further failures are 429 once the address has used up its own.
              if (error instanceof ProblemError && error.status === 401) {
                const address = clientAddress(request);
                const now = h.clock.now();
                failures.check(address, now);
                failures.fail(address, now);
              }
              throw error;
            }
          limiter.hit(actor.credentialId, h.clock.now());
          // A workspace the key cannot use is 404 before anything about the body is said (no 400 leak).
          if (workspaceId !== undefined)
            workspaces.set(
              request,
              internal
                ? await requireWorkspace(actor, workspaceId)
                : usableWorkspace(actor, workspaceId, keyWorkspace),
            );
          // An account whose address is unconfirmed looks around but creates nothing (the table's writes).
          if (refusedWhileUnconfirmed(request.method, route)) {
            if (internal) await requireConfirmedAccount(h.db, actor);
            else if (keyUnconfirmed) throw unconfirmedProblem();
          }
          // The subscription's one rule (402 for work-creating writes while read-only; a warning header
          // in grace), after the workspace so a foreign workspace stays 404 (docs/billing.md).
          const warning = await checkEntitlement(h, {
            method: request.method,
            route,
            actor,
            workspaceId: workspaceId ?? null,
          });
          if (warning !== null) set.headers[BILLING_WARNING_HEADER] = warning;
          actors.set(request, actor);
        },
        resolve({ request }) {
          // `workspace` is set on routes under /workspaces/{workspace_id}, already checked for this key.
          return { actor: actors.get(request)!, workspace: workspaces.get(request) };
        },
      }),
    });
}

/**
 * The workspace a key's request names, read with the key: 404 when it does not exist, belongs to
 * another account or is outside the key's selection (the three alike, as `requireWorkspace` answers).
 */
function usableWorkspace(actor: Actor, workspaceId: string, found: WorkspaceRow | null): WorkspaceRow {
  if (!found || !canUseWorkspace(actor, workspaceId)) throw notFound("workspace");
  return found;
}
