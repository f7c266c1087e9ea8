import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { sha256Hex } from "../../lib/crypto.ts";
import { listingSchema, operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { wholeListing } from "../pagination.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { presentConnection, presentDestination } from "../../modules/destinations/present.ts";
import { listDestinations } from "../../modules/destinations/repo.ts";
import { completeOAuthCallback } from "../../modules/destinations/oauth.ts";
import {
  disconnectDestination,
  patchDestination,
  requireConnection,
  requireDestination,
  startConnection,
} from "../../modules/destinations/service.ts";
import { html } from "../pages/html.ts";
import { WorkspaceParams } from "./common-schemas.ts";
import type { RouteContext } from "./context.ts";
import {
  ConnectionParams,
  DeletedDestination,
  Destination,
  DestinationConnection,
  DestinationParams,
  ListDestinationsQuery,
  PatchDestinationBody,
  startConnectionBody,
  StartConnectionBody,
} from "./destinations-schemas.ts";
import { handler, publicHandler } from "./context.ts";

type DestinationContext<Body = unknown> = RouteContext<Body, unknown, Static<typeof DestinationParams>>;

async function listWorkspaceDestinations(h: Herald, { params }: RouteContext) {
  const rows = await listDestinations(h.db, params.workspace_id!);
  return wholeListing(rows.map((row) => presentDestination(h, row)));
}

async function getDestination(h: Herald, { params }: DestinationContext) {
  const row = await requireDestination(h, params.workspace_id, params.destination_id);
  return resourceResponse(presentDestination(h, row));
}

async function patchOneDestination(h: Herald, c: DestinationContext<Static<typeof PatchDestinationBody>>) {
  const { actor, params, body } = c;
  const row = await patchDestination({
    h,
    actor,
    workspaceId: params.workspace_id,
    id: params.destination_id,
    input: body,
  });
  return resourceResponse(presentDestination(h, row));
}

async function disconnect(h: Herald, { actor, params }: DestinationContext) {
  const row = await disconnectDestination({
    h,
    actor,
    workspaceId: params.workspace_id,
    id: params.destination_id,
  });
  return { id: row.id, object: "destination" as const, deleted: true as const };
}

/** POST /destination-connections: the idempotency fingerprint holds a hash of the app password, never it. */
function startDestinationConnection(h: Herald, c: RouteContext<Static<typeof StartConnectionBody>>) {
  const { actor, request, params, body } = c;
  return runIdempotent(
    h,
    {
      accountId: actor.accountId,
      request,
      body: { ...body, app_password: body.app_password ? sha256Hex(body.app_password) : undefined },
      required: false,
    },
    async () =>
      resourceResponse(
        presentConnection(
          await startConnection({ h, actor, workspaceId: params.workspace_id!, input: body }),
        ),
        201,
      ),
  );
}

async function getConnection(
  h: Herald,
  { params }: RouteContext<unknown, unknown, Static<typeof ConnectionParams>>,
) {
  const row = await requireConnection(h, params.workspace_id, params.connection_id);
  return resourceResponse(presentConnection(row));
}

const tag = "Destinations";
const doc = {
  list: operation({
    scope: "destinations:read",
    summary: "List destinations (whole, not paged)",
    tag,
    errors: [404],
  }),
  get: operation({ scope: "destinations:read", summary: "Get a destination", tag, errors: [404] }),
  patch: operation({
    scope: "destinations:write",
    summary: "Enable, disable or make default",
    tag,
    errors: [404],
  }),
  delete: operation({
    scope: "destinations:write",
    summary: "Disconnect a destination",
    tag,
    errors: [404, 409],
  }),
  connect: operation({
    scope: "destinations:write",
    summary: "Connect an account: Bluesky at once (handle + app password), the other networks through OAuth",
    tag,
    // 503: the instance's host does not resolve now (DNS may answer later).
    errors: [404, 422, 502, 503],
    idempotency: "optional",
  }),
  getConnection: operation({
    scope: "destinations:read",
    summary: "Get a connection session",
    tag,
    errors: [404],
  }),
};

/** Destinations (connected accounts) and connection sessions. */
export function destinationRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id" })
    .use(rails)
    .get("/destinations", handler(h, listWorkspaceDestinations), {
      ...doc.list,
      params: WorkspaceParams,
      query: ListDestinationsQuery,
      response: { 200: listingSchema(Destination) },
    })
    .get("/destinations/:destination_id", handler(h, getDestination), {
      ...doc.get,
      params: DestinationParams,
      response: { 200: Destination },
    })
    .patch("/destinations/:destination_id", handler(h, patchOneDestination), {
      ...doc.patch,
      parse: JSON_PARSER,
      params: DestinationParams,
      body: PatchDestinationBody,
      response: { 200: Destination },
    })
    .delete("/destinations/:destination_id", handler(h, disconnect), {
      ...doc.delete,
      params: DestinationParams,
      response: { 200: DeletedDestination },
    })
    .post("/destination-connections", handler(h, startDestinationConnection), {
      ...doc.connect,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      // The registry's networks: the contract's nine, in its order (the same schema as StartConnectionBody).
      body: startConnectionBody(h.providers.adapters.map((a) => a.channel)),
      response: { 201: DestinationConnection },
    })
    .get("/destination-connections/:connection_id", handler(h, getConnection), {
      ...doc.getConnection,
      params: ConnectionParams,
      response: { 200: DestinationConnection },
    });
}

/**
 * Whether a connection session was started by a person in the dashboard: their actor's credential is
 * their session (`sessionActor`, ids `ses_…`), an API key's is `key_…`.
 */
function startedInDashboard(credentialId: string | null): boolean {
  return credentialId?.startsWith("ses_") ?? false;
}

/**
 * The OAuth return page `<origin>/oauth/callback/{provider}` (no bearer: the `state` identifies the
 * session).
 */
export function oauthCallbackRoutes(h: Herald) {
  return new Elysia().get("/oauth/callback/:provider", publicHandler(h, oauthCallback), {
    detail: { hide: true },
  });
}

async function oauthCallback(
  h: Herald,
  { params, query }: { params: { provider: string }; query: Record<string, string | undefined> },
) {
  const result = await completeOAuthCallback({
    h,
    channel: params.provider,
    query: query as Record<string, string>,
  });
  // A connection started from the dashboard goes back there (the page says how it went); one started
  // with an API key keeps this page.
  if (result.connection && startedInDashboard(result.connection.credentialId)) {
    const { id, workspaceId } = result.connection;
    const notice = result.ok ? "connected" : "not_connected";
    return new Response(null, {
      status: 303,
      headers: {
        location: `/dashboard/workspaces/${workspaceId}/destinations?notice=${notice}&connection=${id}`,
        "cache-control": "no-store",
      },
    });
  }
  const title = result.ok ? "Connected" : "Not connected";
  return new Response(
    html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Herald: ${title}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style></head>
<body><h1>${title}</h1><p>${result.message}</p></body></html>`.text,
    {
      status: result.ok ? 200 : 400,
      headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
    },
  );
}
