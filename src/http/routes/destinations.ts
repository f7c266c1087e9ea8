import { Elysia, t } from "elysia";
import type { Herald } from "../../herald.ts";
import { sha256Hex } from "../../lib/crypto.ts";
import { listingSchema, operation, Timestamp } from "../docs.ts";
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

const Destination = t.Object(
  {
    id: t.String(),
    object: t.Literal("destination"),
    channel: t.String(),
    display_name: t.String(),
    status: t.Union([t.Literal("ready"), t.Literal("unavailable"), t.Literal("disabled")]),
    unavailable_reason: t.Optional(t.String()),
    is_default: t.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "Destination" },
);
const Connection = t.Object(
  {
    object: t.Literal("destination_connection"),
    id: t.String(),
    provider: t.String(),
    status: t.Union([
      t.Literal("pending"),
      t.Literal("completed"),
      t.Literal("failed"),
      t.Literal("expired"),
    ]),
    authorization_url: t.Union([t.String(), t.Null()]),
    destination_id: t.Union([t.String(), t.Null()]),
    error: t.Union([t.String(), t.Null()]),
    expires_at: Timestamp,
  },
  { title: "DestinationConnection" },
);
const WorkspaceParams = t.Object({ workspace_id: t.String() });
const DestinationParams = t.Object({ workspace_id: t.String(), destination_id: t.String() });
const tag = "Destinations";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Destinations (connected accounts) and connection sessions. */
export function destinationRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id" })
    .use(rails)
    .get(
      "/destinations",
      async ({ params }) => {
        const rows = await listDestinations(h.db, params.workspace_id);
        return wholeListing(rows.map((row) => presentDestination(h, row)));
      },
      {
        ...operation({
          scope: "destinations:read",
          summary: "List destinations (whole, not paged)",
          tag,
          errors: [404],
        }),
        params: WorkspaceParams,
        // Generic paginators send these; the listing is always whole (has_more false), so they change
        // nothing.
        query: t.Object({
          limit: t.Optional(t.String({ description: "accepted and ignored: the listing is whole" })),
          after: t.Optional(t.String({ description: "accepted and ignored" })),
        }),
        response: { 200: listingSchema(Destination) },
      },
    )
    .get(
      "/destinations/:destination_id",
      async ({ params }) => {
        const row = await requireDestination(h, params.workspace_id, params.destination_id);
        return resourceResponse(presentDestination(h, row));
      },
      {
        ...operation({ scope: "destinations:read", summary: "Get a destination", tag, errors: [404] }),
        params: DestinationParams,
        response: { 200: Destination },
      },
    )
    .patch(
      "/destinations/:destination_id",
      async ({ actor, params, body }) => {
        const row = await patchDestination({
          h,
          actor,
          workspaceId: params.workspace_id,
          id: params.destination_id,
          input: body,
        });
        return resourceResponse(presentDestination(h, row));
      },
      {
        ...operation({
          scope: "destinations:write",
          summary: "Enable, disable or make default",
          tag,
          errors: [404],
        }),
        parse: JSON_PARSER,
        params: DestinationParams,
        body: t.Object(
          { enabled: t.Optional(t.Boolean()), is_default: t.Optional(t.Boolean()) },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Destination },
      },
    )
    .delete(
      "/destinations/:destination_id",
      async ({ actor, params }) => {
        const row = await disconnectDestination({
          h,
          actor,
          workspaceId: params.workspace_id,
          id: params.destination_id,
        });
        return { id: row.id, object: "destination" as const, deleted: true as const };
      },
      {
        ...operation({
          scope: "destinations:write",
          summary: "Disconnect a destination",
          tag,
          errors: [404, 409],
        }),
        params: DestinationParams,
        response: {
          200: t.Object({ id: t.String(), object: t.Literal("destination"), deleted: t.Literal(true) }),
        },
      },
    )
    .post(
      "/destination-connections",
      async ({ actor, request, params, body }) => {
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
                await startConnection({ h, actor, workspaceId: params.workspace_id, input: body }),
              ),
              201,
            ),
        );
      },
      {
        ...operation({
          scope: "destinations:write",
          summary:
            "Connect an account: Bluesky at once (handle + app password), the other networks through OAuth",
          tag,
          // 503: the instance's host does not resolve now (DNS may answer later).
          errors: [404, 422, 502, 503],
          idempotency: "optional",
        }),
        parse: JSON_PARSER,
        params: WorkspaceParams,
        body: t.Object(
          {
            // The networks of the registry Herald was built with: the contract's nine, in its order.
            provider: t.Union(h.providers.adapters.map((a) => t.Literal(a.channel))),
            instance_origin: t.Optional(t.String({ minLength: 1, maxLength: 2048 })),
            handle: t.Optional(t.String({ minLength: 1, maxLength: 253 })),
            app_password: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Connection },
      },
    )
    .get(
      "/destination-connections/:connection_id",
      async ({ params }) => {
        const row = await requireConnection(h, params.workspace_id, params.connection_id);
        return resourceResponse(presentConnection(row));
      },
      {
        ...operation({ scope: "destinations:read", summary: "Get a connection session", tag, errors: [404] }),
        params: t.Object({ workspace_id: t.String(), connection_id: t.String() }),
        response: { 200: Connection },
      },
    );
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
  return new Elysia().get(
    "/oauth/callback/:provider",
    async ({ params, query }) => {
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
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Herald: ${title}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem}</style></head>
<body><h1>${title}</h1><p>${escapeHtml(result.message)}</p></body></html>`,
        {
          status: result.ok ? 200 : 400,
          headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
        },
      );
    },
    { detail: { hide: true } },
  );
}
