import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { Deleted, Nullable, PageQuery } from "./common-schemas.ts";
import { WEBHOOK_EVENT_TYPES } from "../../modules/webhooks/present.ts";
import { MAX_WEBHOOK_URL_LENGTH } from "../../modules/webhooks/url-rules.ts";

const EventType = t.Union(WEBHOOK_EVENT_TYPES.map((type) => t.Literal(type)));
const FilterMode = t.Union([t.Literal("all"), t.Literal("selected")]);
const ContentMode = t.Union([t.Literal("metadata"), t.Literal("full")]);

const fields = {
  name: t.String({ minLength: 1, maxLength: 120 }),
  url: t.String({
    minLength: 1,
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    description:
      "https:// on port 443, a DNS host name that resolves to public addresses only, no credentials",
  }),
  event_types: t.Array(EventType, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length }),
  destination_filter_mode: FilterMode,
  destination_ids: t.Array(t.String({ minLength: 1, maxLength: 200 }), {
    maxItems: 100,
    description: "Used with destination_filter_mode `selected`: 1 to 100 destinations of the workspace",
  }),
  content_mode: t.Union([t.Literal("metadata"), t.Literal("full")], {
    description: "`full` adds post content to events and needs the posts:read scope",
  }),
  enabled: t.Boolean(),
};

/** Body of Create Webhook Endpoint. */
export const CreateEndpointBody = t.Object(
  {
    name: fields.name,
    url: fields.url,
    event_types: fields.event_types,
    destination_filter_mode: t.Optional(fields.destination_filter_mode),
    destination_ids: t.Optional(fields.destination_ids),
    content_mode: t.Optional(fields.content_mode),
    enabled: t.Optional(fields.enabled),
  },
  {
    title: "CreateWebhookEndpointRequest",
    additionalProperties: false,
    examples: [
      {
        name: "Publishing log",
        url: "https://hooks.example.com/herald",
        event_types: ["post.published", "post.failed"],
      },
    ],
  },
);

/** Body of Patch Webhook Endpoint: any of the endpoint's settings. */
export const PatchEndpointBody = t.Object(
  {
    enabled: t.Optional(fields.enabled),
    name: t.Optional(fields.name),
    url: t.Optional(fields.url),
    event_types: t.Optional(fields.event_types),
    destination_filter_mode: t.Optional(fields.destination_filter_mode),
    destination_ids: t.Optional(fields.destination_ids),
    content_mode: t.Optional(fields.content_mode),
  },
  {
    title: "UpdateWebhookEndpointRequest",
    additionalProperties: false,
    minProperties: 1,
    examples: [{ enabled: false }],
  },
);

/** Body of Rotate Secret. */
export const RotateSecretBody = t.Object(
  {
    previous_secret_expires_in: t.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 7 * 24 * 3600,
        description: "Seconds the replaced secret keeps signing (default 86400; 0 ends it now)",
      }),
    ),
  },
  {
    title: "RotateWebhookSecretRequest",
    additionalProperties: false,
    examples: [{ previous_secret_expires_in: 3600 }],
  },
);

const endpointFields = {
  id: t.String(),
  object: t.Literal("webhook_endpoint"),
  name: t.String(),
  url: t.String(),
  enabled: t.Boolean(),
  event_types: t.Array(t.String()),
  destination_filter_mode: FilterMode,
  destination_ids: t.Array(t.String()),
  content_mode: ContentMode,
  secret_last_four: t.String({ minLength: 4, maxLength: 4 }),
  previous_secret_expires_at: Nullable(Timestamp),
  config_version: Type.Integer({ minimum: 1 }),
  disabled_reason: Nullable(
    t.String({
      description:
        "`delivery_failures` when Herald disabled the endpoint after three days of failed deliveries",
    }),
  ),
  created_at: Timestamp,
  updated_at: Timestamp,
};

/** The webhook endpoint resource. */
export const WebhookEndpoint = t.Object(endpointFields, { title: "WebhookEndpoint" });

/** The endpoint with its signing secret: only in the create and rotate responses. */
export const WebhookEndpointWithSecret = t.Object(
  { ...endpointFields, secret: t.String({ description: "The signing secret, shown this once" }) },
  { title: "WebhookEndpointWithSecret" },
);

/** A delivery of the delivery log. */
export const WebhookDelivery = t.Object(
  {
    id: t.String(),
    object: t.Literal("webhook_delivery"),
    endpoint_id: t.String(),
    event_id: t.String(),
    event_type: t.String(),
    status: t.Union([t.Literal("pending"), t.Literal("succeeded"), t.Literal("failed")]),
    attempt_count: Type.Integer({ minimum: 0 }),
    next_attempt_at: Nullable(Timestamp),
    last_attempt_at: Nullable(Timestamp),
    last_response_status: Nullable(Type.Integer()),
    last_error: Nullable(t.String()),
    last_duration_ms: Nullable(Type.Integer()),
    delivered_at: Nullable(Timestamp),
    failed_at: Nullable(Timestamp),
    redelivery_of: Nullable(t.String()),
    created_at: Timestamp,
    attempts: t.Array(
      t.Object(
        {
          number: Type.Integer({ minimum: 1 }),
          started_at: Timestamp,
          duration_ms: Type.Integer(),
          response_status: Nullable(Type.Integer()),
          error: Nullable(t.String()),
        },
        { title: "WebhookDeliveryAttempt" },
      ),
    ),
  },
  { title: "WebhookDelivery" },
);

/** Query of the endpoint listing. */
export const ListQuery = PageQuery;

/** Query of the delivery log. */
export const ListDeliveriesQuery = t.Object({
  status: t.Optional(t.Union([t.Literal("pending"), t.Literal("succeeded"), t.Literal("failed")])),
  limit: t.Optional(t.String()),
  after: t.Optional(t.String()),
});

export const EndpointParams = t.Object({ workspace_id: t.String(), endpoint_id: t.String() });
export const DeliveryParams = t.Object({
  workspace_id: t.String(),
  endpoint_id: t.String(),
  delivery_id: t.String(),
});

/** The answer of DELETE one endpoint. */
export const DeletedEndpoint = Deleted("webhook_endpoint");
