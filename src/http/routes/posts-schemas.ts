import { Type, type TRecord, type TString, type TUnknown } from "@sinclair/typebox";
import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { validationSchema } from "../../providers/options.ts";
import { NETWORK_RULES } from "../../providers/registry.ts";
import { CHANNELS } from "../../providers/types.ts";
import { POST_STATES } from "../../modules/posts/states.ts";

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()]);

/** A channel value. */
export const Channel = t.Union(CHANNELS.map((c) => t.Literal(c)));
const Group = t.String({ minLength: 1, maxLength: 200, pattern: "^[A-Za-z0-9_-]+$" });
const AssetItem = t.Object(
  {
    asset_id: t.String({ minLength: 1, maxLength: 200 }),
    item_index: Type.Integer({ minimum: 0, maximum: 99 }),
  },
  { additionalProperties: false },
);

/** `destination_options`: one optional object per network that has options (from the registry). */
const DestinationOptions = t.Object(
  Object.fromEntries(
    NETWORK_RULES.flatMap((n) =>
      n.optionsSchema ? [[n.channel, t.Optional(validationSchema(n.optionsSchema))]] : [],
    ),
  ),
  { additionalProperties: false },
  // Typed as what the domain reads (options by channel); validation and OpenAPI use the object above.
) as unknown as TRecord<TString, TRecord<TString, TUnknown>>;

/** One item of `posts` in Create Post. */
export const PostItemBody = t.Object(
  {
    destination_id: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    channel: t.Optional(Channel),
    body: t.Array(t.String({ maxLength: 100_000 }), { minItems: 1, maxItems: 100 }),
    media: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 200 }), { maxItems: 20 })),
    media_items: t.Optional(t.Array(AssetItem, { maxItems: 100 })),
    destination_options: t.Optional(DestinationOptions),
  },
  { additionalProperties: false },
);

/** The Create Post body (also the body of the dry run). */
export const CreatePostsBody = t.Object(
  {
    when: t.String({
      minLength: 1,
      maxLength: 64,
      description: '"now", "draft", "queue" or an ISO 8601 time with a UTC offset',
    }),
    confirmed: t.Optional(t.Boolean()),
    time_zone: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
    group: Group,
    posts: t.Array(PostItemBody, { minItems: 1, maxItems: 100 }),
  },
  { additionalProperties: false },
);

const PostErrorSchema = t.Object({
  code: t.String(),
  message: t.String(),
  retryable: t.Boolean(),
  retry_safety: t.String(),
  user_action: t.String(),
});

/** The post resource. */
export const Post = t.Object(
  {
    id: t.String(),
    object: t.Literal("post"),
    group: t.String(),
    channel: t.String(),
    state: t.Union(POST_STATES.map((s) => t.Literal(s))),
    editable: t.Boolean(),
    terminal: t.Boolean(),
    action_required: t.Boolean(),
    next_action_at: Nullable(Timestamp),
    retry_safety: t.String(),
    available_actions: t.Array(t.String()),
    version: Type.Integer(),
    payload: t.Object({
      headline: t.String(),
      body: t.Array(t.String()),
      destination_options: t.Record(t.String(), t.Any()),
    }),
    asset_ids: t.Array(t.String()),
    destination_id: Nullable(t.String()),
    scheduled_at: Nullable(Timestamp),
    time_zone: t.String(),
    schedule_mode: t.String(),
    queue_local_date: Nullable(t.String()),
    queue_window_id: Nullable(t.String()),
    attempt_count: Type.Integer(),
    deferred: Nullable(t.Object({ reason: t.String(), until: Timestamp })),
    last_error: Nullable(PostErrorSchema),
    created_at: Timestamp,
    updated_at: Timestamp,
    published_at: Nullable(Timestamp),
    cancelled_at: Nullable(Timestamp),
    missed_at: Nullable(Timestamp),
    receipts: t.Array(
      t.Object({
        id: t.String(),
        object: t.Literal("receipt"),
        item_index: Type.Integer(),
        provider_object_id: t.String(),
        url: t.String(),
        state: t.String(),
        published_at: Timestamp,
      }),
    ),
    destination: Nullable(
      t.Object({
        display_name: t.String(),
        external_id: t.String(),
        profile_image_url: Nullable(t.String()),
      }),
    ),
    assets: t.Array(
      t.Object({
        id: t.String(),
        type: t.String(),
        label: t.String(),
        content_type: t.String(),
        item_index: Type.Integer(),
      }),
    ),
    attempts: t.Optional(
      t.Array(
        t.Object({
          id: t.String(),
          object: t.Literal("publishing_attempt"),
          number: Type.Integer(),
          trigger: t.String(),
          status: t.String(),
          started_at: Timestamp,
          finished_at: Nullable(Timestamp),
          retry_safety: t.String(),
          error: Nullable(
            t.Object({
              code: t.String(),
              message: t.String(),
              retryable: t.Boolean(),
              user_action: t.String(),
            }),
          ),
          provider: Nullable(
            t.Object({
              operation: t.String(),
              request_id: Nullable(t.String()),
              status_code: Nullable(Type.Integer()),
              error_code: Nullable(t.String()),
              subcode: Nullable(t.String()),
            }),
          ),
        }),
      ),
    ),
  },
  { title: "Post" },
);

/** `{object: "post_set", group, posts}`. */
export const PostSet = t.Object(
  { object: t.Literal("post_set"), group: t.String(), posts: t.Array(Post) },
  { title: "PostSet" },
);

/** The queue windows resource. */
export const Queue = t.Object(
  {
    object: t.Literal("queue"),
    time_zone: t.String(),
    windows: t.Array(t.Object({ id: t.String(), weekday: Type.Integer(), local_time: t.String() })),
  },
  { title: "Queue" },
);

/** Query of the post listing. */
export const ListPostsQuery = t.Object({
  view: t.Optional(
    t.Union(["all", "drafts", "scheduled", "published", "attention", "failed"].map((v) => t.Literal(v))),
  ),
  channel: t.Optional(Channel),
  group: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  destination_id: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
  state: t.Optional(t.Union(POST_STATES.map((s) => t.Literal(s)))),
  created_after: t.Optional(t.String()),
  scheduled_before: t.Optional(t.String()),
  include: t.Optional(t.Literal("attempts")),
  limit: t.Optional(t.String()),
  after: t.Optional(t.String()),
});
