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
import {
  completeOAuthCallback,
  confirmOAuthConnection,
  startedInDashboard,
} from "../../modules/destinations/oauth.ts";
import { iso } from "../../lib/clock.ts";
import { oauthConfirmPage, oauthOutcomePage, otherBrowserPage } from "../pages/oauth-return.ts";
import {
  browserOf,
  csrfOf,
  formFromThisBrowser,
  pageResponse,
  readForm,
  redirect,
} from "../pages/respond.ts";
import {
  disconnectDestination,
  patchDestination,
  requireConnection,
  requireDestination,
  startConnection,
} from "../../modules/destinations/service.ts";
import { WorkspaceParams } from "./common-schemas.ts";
import type { PublicRouteContext, RouteContext } from "./context.ts";
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
import { withNotice } from "../dashboard/notices.ts";

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
    operationId: "listDestinations",
    summary: "List destinations (whole, not paged)",
    description:
      "Every destination of the workspace in one answer: `has_more` is always false and " +
      "`next_cursor` null (`limit` and `after` are accepted and ignored).",
    tag,
    errors: [404],
  }),
  get: operation({
    scope: "destinations:read",
    operationId: "getDestination",
    summary: "Get a destination",
    description:
      "One connected account: its channel, display name, status (with `unavailable_reason` when " +
      "it needs attention, such as a new authorization) and whether it is its channel's " +
      "default.",
    tag,
    errors: [404],
  }),
  patch: operation({
    scope: "destinations:write",
    operationId: "updateDestination",
    summary: "Enable, disable or make default",
    description:
      "`enabled: false` disables the destination and `true` enables it again; `is_default: " +
      "true` makes it the default of its channel (the channel's previous default stops being " +
      "one).",
    tag,
    errors: [404],
  }),
  delete: operation({
    scope: "destinations:write",
    operationId: "deleteDestination",
    summary: "Disconnect a destination",
    description:
      "Removes the destination. Refused with 409 while posts waiting to publish use it: cancel " +
      "or reschedule them first.",
    tag,
    errors: [404, 409],
  }),
  connect: operation({
    scope: "destinations:write",
    operationId: "createDestinationConnection",
    summary: "Connect an account: Bluesky at once (handle + app password), the other networks through OAuth",
    description:
      "Starts a connection session. Bluesky connects at once with `handle` and `app_password`; " +
      "the other networks answer an `authorization_url` to open in a browser, and the session " +
      "completes when the network sends the person back. Mastodon needs `instance_origin`.",
    tag,
    // 503: the instance's host does not resolve now (DNS may answer later).
    errors: [404, 422, 502, 503],
    idempotency: "optional",
  }),
  getConnection: operation({
    scope: "destinations:read",
    operationId: "getDestinationConnection",
    summary: "Get a connection session",
    description:
      "A connection session's status (pending, completed, failed or expired), its error if it " +
      "failed, and the new destination's id once completed.",
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
 * The OAuth return page `<origin>/oauth/callback/{provider}` (no bearer: the `state` identifies the
 * session, and the browser's session or the person's confirmation binds it; see `completeOAuthCallback`),
 * and the confirmation form of a connection started with an API key (POST, CSRF-checked).
 */
export function oauthCallbackRoutes(h: Herald) {
  return new Elysia()
    .get("/oauth/callback/:provider", publicHandler(h, oauthCallback), { detail: { hide: true } })
    .post("/oauth/callback/:provider", publicHandler(h, oauthConfirmation), {
      parse: "none",
      detail: { hide: true },
    });
}

/** The return page's frame: no header account (the page is reached from another site). */
const FRAME = (title: string) => ({ title });

async function oauthCallback(
  h: Herald,
  {
    request,
    params,
    query,
  }: PublicRouteContext<unknown, Record<string, string | undefined>, { provider: string }>,
) {
  const browser = await browserOf(h, request);
  const result = await completeOAuthCallback({
    h,
    channel: params.provider,
    query: query as Record<string, string>,
    browserSessionId: browser.session?.id ?? null,
  });
  if (result.kind === "other_browser")
    return pageResponse(h, browser, otherBrowserPage(FRAME("Started in another browser")), { status: 403 });
  if (result.kind === "confirm") {
    const { question } = result;
    const body = oauthConfirmPage(FRAME("Confirm the connection"), {
      action: `/oauth/callback/${encodeURIComponent(params.provider)}`,
      csrf: csrfOf(h, browser),
      confirmation: result.confirmation,
      ...question,
      expiresAt: iso(question.expiresAt),
    });
    return pageResponse(h, browser, body);
  }
  // A connection started from the dashboard goes back there (the page says how it went); one started
  // with an API key keeps this page.
  if (result.connection && startedInDashboard(result.connection.credentialId))
    return redirect(h, browser, dashboardReturn(result.connection, result.ok));
  const title = result.ok ? "Connected" : "Not connected";
  return pageResponse(h, browser, oauthOutcomePage(FRAME(title), result), { status: result.ok ? 200 : 400 });
}

/** Where a dashboard-started connection lands: its workspace's destinations, saying how it went. */
function dashboardReturn(connection: { id: string; workspaceId: string }, ok: boolean): string {
  const page = `/dashboard/workspaces/${connection.workspaceId}/destinations`;
  return withNotice(page, "destinations", ok ? "connected" : "not_connected", { connection: connection.id });
}

/** The answer of the confirmation page: attach the accounts, or cancel. */
async function oauthConfirmation(
  h: Herald,
  { request, params }: PublicRouteContext<unknown, unknown, { provider: string }>,
) {
  const browser = await browserOf(h, request);
  const form = await readForm(request);
  if (!formFromThisBrowser(h, browser, form))
    return pageResponse(
      h,
      browser,
      oauthOutcomePage(FRAME("Not connected"), {
        ok: false,
        message: "This form did not come from this browser's confirmation page. Nothing was connected.",
      }),
      { status: 403 },
    );
  const outcome = await confirmOAuthConnection({
    h,
    channel: params.provider,
    confirmation: form.get("confirmation") ?? "",
    decision: form.get("decision") === "attach" ? "attach" : "cancel",
  });
  const title = outcome.ok ? "Connected" : "Not connected";
  return pageResponse(h, browser, oauthOutcomePage(FRAME(title), outcome), {
    status: outcome.ok ? 200 : 400,
  });
}
