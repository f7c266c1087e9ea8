import type { Static } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { Herald } from "../../herald.ts";
import { listingSchema, operation } from "../docs.ts";
import { etagOf } from "../../core/etag.ts";
import { resourceResponse } from "../etag.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { presentDelivery, presentEndpoint } from "../../modules/webhooks/present.ts";
import {
  listDeliveries,
  listDeliveryAttempts,
  listEndpoints,
  type DeliveryRow,
  type EndpointRow,
} from "../../modules/webhooks/repo.ts";
import { handler, workspaceOf, type RouteContext } from "./context.ts";
import { EmptyBody, WorkspaceParams } from "./common-schemas.ts";
import {
  CreateEndpointBody,
  DeletedEndpoint,
  DeliveryParams,
  EndpointParams,
  ListDeliveriesQuery,
  ListQuery,
  PatchEndpointBody,
  RotateSecretBody,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from "./webhooks-schemas.ts";
import {
  createWebhookEndpoint,
  DEFAULT_PREVIOUS_SECRET_TTL_SECONDS,
  deleteWebhookEndpoint,
  patchWebhookEndpoint,
  redeliverWebhook,
  requireEndpoint,
  rotateWebhookSecret,
  sendTestEvent,
} from "../../modules/webhooks/service.ts";

// A secret inside a stored idempotent response would sit in the database in clear text; it is
// stored sealed and opened on the way out (first response and replays alike).
const SEALED_MARK = "herald-sealed:";

function endpointResponse(h: Herald, row: EndpointRow, status = 200): Response {
  return resourceResponse(presentEndpoint(row, h.clock.now()), status);
}

/** The endpoint with its secret sealed, ETag of the endpoint as GET shows it. */
function sealedSecretResponse(h: Herald, row: EndpointRow, secret: string, status: number): Response {
  const resource = presentEndpoint(row, h.clock.now());
  return resourceResponse({ ...resource, secret: SEALED_MARK + h.secrets.encrypt(secret) }, status, {
    etag: etagOf(resource),
  });
}

async function unsealSecret(h: Herald, response: Response): Promise<Response> {
  const text = await response.text();
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  if (response.status >= 300) return new Response(text, { status: response.status, headers });
  const body = JSON.parse(text) as { secret?: unknown };
  if (typeof body.secret === "string" && body.secret.startsWith(SEALED_MARK))
    body.secret = h.secrets.decrypt(body.secret.slice(SEALED_MARK.length));
  return new Response(JSON.stringify(body), { status: response.status, headers });
}

async function deliveryResponse(h: Herald, row: DeliveryRow, status: number): Promise<Response> {
  // A queued delivery (202) goes out within about a second: the delivery log shows it then.
  const headers: Record<string, string> = status === 202 ? { "retry-after": "1" } : {};
  return resourceResponse(presentDelivery(row, await listDeliveryAttempts(h.db, [row.id])), status, headers);
}

type EndpointContext<Body = unknown, Query = unknown> = RouteContext<
  Body,
  Query,
  Static<typeof EndpointParams>
>;

/** POST: the key is required; the secret is answered once (sealed in the stored replay). */
async function createEndpoint(h: Herald, c: RouteContext<Static<typeof CreateEndpointBody>>) {
  const { actor, request, body } = c;
  const response = await runIdempotent(
    h,
    { accountId: actor.accountId, request, body, required: true },
    async () => {
      const { row, secret } = await createWebhookEndpoint({
        h,
        actor,
        workspace: workspaceOf(c),
        input: body,
      });
      return sealedSecretResponse(h, row, secret, 201);
    },
  );
  return unsealSecret(h, response);
}

async function listEndpointPage(h: Herald, c: RouteContext<unknown, Static<typeof ListQuery>>) {
  const { actor, request, query } = c;
  const workspace = workspaceOf(c);
  const scope = `webhook-endpoints:${workspace.id}:${actor.credentialId}`;
  const page = parsePageQuery(h, query, scope);
  const now = h.clock.now();
  return pageResponse(
    h,
    request,
    await listEndpoints(h.db, workspace.id, page.afterId, page.limit),
    page,
    scope,
    (row) => presentEndpoint(row, now),
  );
}

async function getEndpoint(h: Herald, { params }: EndpointContext) {
  return endpointResponse(h, await requireEndpoint(h.db, params.workspace_id, params.endpoint_id));
}

async function patchEndpoint(h: Herald, c: EndpointContext<Static<typeof PatchEndpointBody>>) {
  const { actor, params, body, request } = c;
  const row = await patchWebhookEndpoint({
    h,
    actor,
    workspaceId: params.workspace_id,
    endpointId: params.endpoint_id,
    input: body,
    ifMatch: request.headers.get("if-match"),
  });
  return endpointResponse(h, row);
}

function deleteEndpoint(h: Herald, { actor, params, request }: EndpointContext) {
  return runIdempotent(h, { accountId: actor.accountId, request, body: null, required: false }, async () => {
    const row = await deleteWebhookEndpoint({
      h,
      actor,
      workspaceId: params.workspace_id,
      endpointId: params.endpoint_id,
      ifMatch: request.headers.get("if-match"),
    });
    return new Response(JSON.stringify({ id: row.id, object: "webhook_endpoint", deleted: true }), {
      headers: { "content-type": "application/json" },
    });
  });
}

async function rotateSecret(h: Herald, c: EndpointContext<Static<typeof RotateSecretBody> | null>) {
  const { actor, params, body, request } = c;
  const response = await runIdempotent(
    h,
    { accountId: actor.accountId, request, body, required: false },
    async () => {
      const { row, secret } = await rotateWebhookSecret({
        h,
        actor,
        workspaceId: params.workspace_id,
        endpointId: params.endpoint_id,
        ttlSeconds: body?.previous_secret_expires_in ?? DEFAULT_PREVIOUS_SECRET_TTL_SECONDS,
      });
      return sealedSecretResponse(h, row, secret, 200);
    },
  );
  return unsealSecret(h, response);
}

function sendTest(
  h: Herald,
  { actor, params, body, request }: EndpointContext<Static<typeof EmptyBody> | null>,
) {
  return runIdempotent(
    h,
    { accountId: actor.accountId, request, body: body ?? {}, required: false },
    async () =>
      deliveryResponse(
        h,
        await sendTestEvent({ h, actor, workspaceId: params.workspace_id, endpointId: params.endpoint_id }),
        202,
      ),
  );
}

async function listDeliveryPage(h: Herald, c: EndpointContext<unknown, Static<typeof ListDeliveriesQuery>>) {
  const { actor, request, query, params } = c;
  const endpoint = await requireEndpoint(h.db, params.workspace_id, params.endpoint_id);
  const scope = `webhook-deliveries:${endpoint.id}:${actor.credentialId}:${query.status ?? ""}`;
  const page = parsePageQuery(h, query, scope);
  const rows = await listDeliveries(h.db, endpoint.id, query.status, page.afterId, page.limit);
  const attempts = Map.groupBy(
    await listDeliveryAttempts(
      h.db,
      rows.slice(0, page.limit).map((r) => r.id),
    ),
    (a) => a.deliveryId,
  );
  return pageResponse(h, request, rows, page, scope, (row) =>
    presentDelivery(row, attempts.get(row.id) ?? []),
  );
}

function redeliver(
  h: Herald,
  c: RouteContext<Static<typeof EmptyBody> | null, unknown, Static<typeof DeliveryParams>>,
) {
  const { actor, params, body, request } = c;
  return runIdempotent(
    h,
    { accountId: actor.accountId, request, body: body ?? {}, required: false },
    async () =>
      deliveryResponse(
        h,
        await redeliverWebhook({
          h,
          actor,
          workspaceId: params.workspace_id,
          endpointId: params.endpoint_id,
          deliveryId: params.delivery_id,
        }),
        202,
      ),
  );
}

const tag = "Webhooks";
const doc = {
  create: operation({
    scope: "webhooks:write",
    operationId: "createWebhookEndpoint",
    summary: "Register a webhook endpoint (the signing secret is returned once)",
    tag,
    // 503: the URL's host does not resolve now (DNS may answer later).
    errors: [404, 503],
    idempotency: "required",
    description:
      "`content_mode: full` also needs the posts:read scope. Every URL rule refused is a 400 pointing at /url.",
  }),
  list: operation({
    scope: "webhooks:read",
    operationId: "listWebhookEndpoints",
    summary: "List webhook endpoints (never with secrets)",
    description:
      "The workspace's webhook endpoints, newest first, paged with `limit` and `after`. Signing " +
      "secrets are never listed, only `secret_last_four`.",
    tag,
    errors: [404],
  }),
  get: operation({
    scope: "webhooks:read",
    operationId: "getWebhookEndpoint",
    summary: "Get a webhook endpoint",
    description:
      "One endpoint's settings, `secret_last_four` and `config_version`, and `disabled_reason` " +
      "when Herald disabled it after three days of failed deliveries.",
    tag,
    errors: [404],
  }),
  patch: operation({
    scope: "webhooks:write",
    operationId: "updateWebhookEndpoint",
    summary: "Change a webhook endpoint (enable, disable, URL, event types, filter, content mode)",
    tag,
    // 503: the URL's host does not resolve now (DNS may answer later).
    errors: [404, 503],
    ifMatch: "optional",
    description:
      "Any change bumps config_version. Disabling ends pending deliveries; enabling again does not " +
      "resend them (redeliver does).",
  }),
  delete: operation({
    scope: "webhooks:write",
    operationId: "deleteWebhookEndpoint",
    summary: "Delete a webhook endpoint and its delivery log",
    description: "Deletes the endpoint with its delivery log; nothing is sent to it afterwards.",
    tag,
    errors: [404],
    idempotency: "optional",
    ifMatch: "optional",
  }),
  rotateSecret: operation({
    scope: "webhooks:write",
    operationId: "rotateWebhookSecret",
    summary: "Rotate the signing secret (the new one is returned once)",
    tag,
    errors: [404],
    idempotency: "optional",
    description:
      "The replaced secret keeps signing, as a second v1 signature, until previous_secret_expires_at (24 h by default).",
  }),
  test: operation({
    scope: "webhooks:write",
    operationId: "testWebhookEndpoint",
    summary: "Send a webhook.test event to this endpoint",
    tag,
    errors: [404, 409],
    idempotency: "optional",
    description:
      "Queued at once and sent within about a second, whatever the endpoint's event_types. " +
      'data.object is {id, object: "webhook_endpoint"}.',
  }),
  deliveries: operation({
    scope: "webhooks:read",
    operationId: "listWebhookDeliveries",
    summary: "The delivery log of an endpoint: status, attempts, response codes, timing, next retry",
    description:
      "The endpoint's deliveries, newest first: status (pending, succeeded, failed), each " +
      "attempt's response status and duration, and the next retry. `status` narrows the log; " +
      "`limit` and `after` page it.",
    tag,
    errors: [404],
  }),
  redeliver: operation({
    scope: "webhooks:write",
    operationId: "redeliverWebhookDelivery",
    summary: "Send a delivery's event again, as a new delivery",
    description:
      "Queues the delivery's event again as a new delivery whose `redelivery_of` names this " +
      "one. Refused with 409 while the endpoint is disabled.",
    tag,
    errors: [404, 409],
    idempotency: "optional",
  }),
};

/**
 * Webhook endpoints: create, list, get, patch, delete, rotate the secret, send a test event, the delivery
 * log and redelivery.
 */
export function webhookRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id/webhook-endpoints" })
    .use(rails)
    .post("", handler(h, createEndpoint), {
      ...doc.create,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      body: CreateEndpointBody,
      response: { 201: WebhookEndpointWithSecret },
    })
    .get("", handler(h, listEndpointPage), {
      ...doc.list,
      params: WorkspaceParams,
      query: ListQuery,
      response: { 200: listingSchema(WebhookEndpoint) },
    })
    .get("/:endpoint_id", handler(h, getEndpoint), {
      ...doc.get,
      params: EndpointParams,
      response: { 200: WebhookEndpoint },
    })
    .patch("/:endpoint_id", handler(h, patchEndpoint), {
      ...doc.patch,
      parse: JSON_PARSER,
      params: EndpointParams,
      body: PatchEndpointBody,
      response: { 200: WebhookEndpoint },
    })
    .delete("/:endpoint_id", handler(h, deleteEndpoint), {
      ...doc.delete,
      params: EndpointParams,
      response: { 200: DeletedEndpoint },
    })
    .post("/:endpoint_id/rotate-secret", handler(h, rotateSecret), {
      ...doc.rotateSecret,
      parse: JSON_PARSER,
      params: EndpointParams,
      body: t.Optional(RotateSecretBody),
      response: { 200: WebhookEndpointWithSecret },
    })
    .post("/:endpoint_id/test", handler(h, sendTest), {
      ...doc.test,
      parse: JSON_PARSER,
      params: EndpointParams,
      body: EmptyBody,
      response: { 202: WebhookDelivery },
    })
    .get("/:endpoint_id/deliveries", handler(h, listDeliveryPage), {
      ...doc.deliveries,
      params: EndpointParams,
      query: ListDeliveriesQuery,
      response: { 200: listingSchema(WebhookDelivery) },
    })
    .post("/:endpoint_id/deliveries/:delivery_id/redeliver", handler(h, redeliver), {
      ...doc.redeliver,
      parse: JSON_PARSER,
      params: DeliveryParams,
      body: EmptyBody,
      response: { 202: WebhookDelivery },
    });
}
