import { Type, type TRecord, type TString, type TUnknown } from "@sinclair/typebox";
import { Approval } from "./approvals-schemas.ts";
import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { Closed, Deleted, Nullable } from "./common-schemas.ts";
import { validationSchema } from "../../providers/options.ts";
import { NETWORK_RULES } from "../../providers/registry.ts";
import { CHANNELS } from "../../providers/types.ts";
import { POST_STATES } from "../../modules/posts/states.ts";

/** A channel value. */
export const Channel = t.Union(CHANNELS.map((c) => t.Literal(c)));
const Group = t.String({
  minLength: 1,
  maxLength: 200,
  pattern: "^[A-Za-z0-9_-]+$",
  examples: ["launch-2026-12"],
});
const AssetItem = t.Object(
  {
    asset_id: t.String({ minLength: 1, maxLength: 200 }),
    item_index: Type.Integer({ minimum: 0, maximum: 99 }),
  },
  { title: "PostAssetItem", additionalProperties: false },
);

/** `destination_options`: one optional object per network that has options (from the registry). */
const DestinationOptions = t.Object(
  Object.fromEntries(
    NETWORK_RULES.flatMap((n) =>
      n.optionsSchema ? [[n.channel, t.Optional(validationSchema(n.optionsSchema))]] : [],
    ),
  ),
  { title: "DestinationOptions", additionalProperties: false },
  // Typed as what the domain reads (options by channel); validation and OpenAPI use the object above.
) as unknown as TRecord<TString, TRecord<TString, TUnknown>>;

/** `recycle` of a Create Post item: copies of an evergreen post after it is published. */
export const RecyclePlanBody = t.Object(
  {
    every_days: Type.Integer({
      minimum: 1,
      maximum: 365,
      description: "Days between a publication and the next copy",
    }),
    count: Type.Integer({ minimum: 1, maximum: 52, description: "How many copies follow the original" }),
    variations: t.Optional(
      t.Array(t.Array(t.String({ maxLength: 100_000 }), { minItems: 1, maxItems: 100 }), {
        maxItems: 52,
        description:
          "Bodies for the copies in turn (copy n takes variations[(n-1) mod length]); none: the original body",
      }),
    ),
  },
  {
    title: "RecyclePlanRequest",
    additionalProperties: false,
    description: "Not on networks that flag repeats (x, tiktok, youtube)",
    examples: [
      {
        every_days: 30,
        count: 6,
        variations: [
          ["Still the fastest way to schedule a post: Herald."],
          ["Schedule from the command line."],
        ],
      },
    ],
  },
);

/** One item of `posts` in Create Post. */
export const PostItemBody = t.Object(
  {
    destination_id: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    channel: t.Optional(Channel),
    body: t.Array(t.String({ maxLength: 100_000 }), { minItems: 1, maxItems: 100 }),
    media: t.Optional(t.Array(t.String({ minLength: 1, maxLength: 200 }), { maxItems: 20 })),
    media_items: t.Optional(t.Array(AssetItem, { maxItems: 100 })),
    destination_options: t.Optional(DestinationOptions),
    link_tracking: t.Optional(
      t.Boolean({
        description:
          "false: publish this post's URLs as written, even when the workspace tracks links " +
          "(default true: tracked when the workspace's link_tracking is enabled)",
      }),
    ),

    recycle: t.Optional(RecyclePlanBody),
  },
  { title: "CreatePostItem", additionalProperties: false },
);

/** The Create Post body (also the body of the dry run). */
export const CreatePostsBody = t.Object(
  {
    when: t.String({
      minLength: 1,
      maxLength: 64,
      description: '"now", "draft", "queue" or an ISO 8601 time with a UTC offset',
      examples: ["draft", "2026-12-01T09:30:00+01:00"],
    }),
    confirmed: t.Optional(t.Boolean()),
    time_zone: t.Optional(t.String({ minLength: 1, maxLength: 64, examples: ["Europe/Berlin"] })),
    group: Group,
    posts: t.Array(PostItemBody, { minItems: 1, maxItems: 100 }),
  },
  {
    title: "CreatePostRequest",
    additionalProperties: false,
    // The request the API reference shows (a draft: it needs no time, queue or confirmation).
    examples: [
      {
        when: "draft",
        group: "launch-2026-12",
        posts: [
          {
            destination_id: "dest_01jdq3tz8w1e5r9y2u6i4o7p3q",
            body: ["Herald 2.0 is out: schedule posts from the command line."],
          },
        ],
      },
    ],
  },
);

const PostErrorSchema = t.Object(
  {
    code: t.String(),
    message: t.String(),
    retryable: t.Boolean(),
    retry_safety: t.String(),
    user_action: t.String(),
  },
  { title: "PostError" },
);

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
    payload: t.Object(
      {
        headline: t.String(),
        body: t.Array(t.String()),
        destination_options: t.Record(t.String(), t.Any()),
      },
      { title: "PostPayload" },
    ),
    asset_ids: t.Array(t.String()),
    link_tracking: t.Boolean({
      description:
        "Its URLs are published as tracked short links (<base>/l/{code}); decided when the post is " +
        "created: the workspace's link_tracking.enabled and the post's own link_tracking",
    }),
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
    approval: Nullable(Approval),
    recycle: Nullable(
      t.Object(
        {
          every_days: Type.Integer(),
          count: Type.Integer(),
          variations: t.Array(t.Array(t.String())),
          copies_published: Type.Integer(),
          next_copy_at: Nullable(Timestamp),
          next_copy_id: Nullable(t.String()),
        },
        { title: "PostRecycle", description: "An original's recycling plan and how far it has come" },
      ),
    ),
    recycled_from: Nullable(t.String({ description: "A recycled copy's original" })),
    recycle_number: Nullable(Type.Integer({ description: "Which copy of its original this is (1, 2, …)" })),
    // The items' receipts (`kind: post`), then the first comment's when the post has one.
    receipts: t.Array(
      t.Union([
        t.Object(
          {
            id: t.String(),
            object: t.Literal("receipt"),
            kind: t.Literal("post"),
            item_index: Type.Integer(),
            provider_object_id: t.String(),
            url: t.String(),
            state: t.String(),
            published_at: Timestamp,
          },
          { title: "Receipt" },
        ),
        t.Object(
          {
            id: t.String(),
            object: t.Literal("receipt"),
            kind: t.Literal("first_comment"),
            item_index: Type.Integer(),
            provider_object_id: Nullable(t.String()),
            url: Nullable(t.String()),
            state: t.Union([t.Literal("pending"), t.Literal("published"), t.Literal("failed")]),
            published_at: Nullable(Timestamp),
            error: Nullable(t.Object({ code: t.String(), message: t.String() })),
          },
          { title: "FirstCommentReceipt" },
        ),
      ]),
    ),
    destination: Nullable(
      t.Object(
        {
          display_name: t.String(),
          external_id: t.String(),
          profile_image_url: Nullable(t.String()),
        },
        { title: "PostDestination" },
      ),
    ),
    assets: t.Array(
      t.Object(
        {
          id: t.String(),
          type: t.String(),
          label: t.String(),
          content_type: t.String(),
          item_index: Type.Integer(),
        },
        { title: "PostAsset" },
      ),
    ),
    attempts: t.Optional(
      t.Array(
        t.Object(
          {
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
          },
          { title: "PublishingAttempt" },
        ),
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
    windows: t.Array(
      t.Object({ id: t.String(), weekday: Type.Integer(), local_time: t.String() }, { title: "QueueWindow" }),
    ),
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
  approval: t.Optional(
    t.Union([t.Literal("requested"), t.Literal("approved"), t.Literal("changes_requested")], {
      description: "Only posts whose approval.status is this (requested: awaiting approval)",
    }),
  ),
  limit: t.Optional(t.String()),
  after: t.Optional(t.String()),
});

export const PostParams = t.Object({ workspace_id: t.String(), post_id: t.String() });

/** Query of GET one post. */
export const GetPostQuery = t.Object({ include: t.Optional(t.Literal("attempts")) });

/** One finding of a validation: where, which problem code, what, and the post's channel. */
const ValidationFinding = t.Object(
  {
    pointer: t.String(),
    code: t.String(),
    detail: t.String(),
    channel: t.Union([t.String(), t.Null()]),
  },
  { title: "PostValidationFinding" },
);

/** One count of a body item's text, as `checkItem` counts it before publishing. */
const TextLength = t.Object(
  {
    pointer: t.String({ description: "The body item: /posts/{i}/body/{n}." }),
    channel: t.String(),
    destination_id: t.Union([t.String(), t.Null()], {
      description: "Null for a draft naming only a channel.",
    }),
    used: t.Integer({ minimum: 0 }),
    limit: t.Integer({ minimum: 0 }),
    unit: t.Union([t.Literal("characters"), t.Literal("bytes")], {
      description:
        "characters: as the network counts them (graphemes, code points, URLs as 23, X's weights, " +
        "UTF-16 units; see networks.md); bytes: UTF-8 bytes.",
    }),
  },
  { title: "PostValidationLength" },
);

/**
 * The answer of POST /posts/validate: `valid` and `errors` are about this request; `warnings` (an
 * addition) say what publishing drafts would refuse.
 */
export const PostValidation = t.Object(
  {
    object: t.Literal("post_validation"),
    valid: t.Boolean(),
    errors: t.Array(ValidationFinding),
    warnings: t.Array(ValidationFinding, {
      description:
        "For drafts: what publishing them would refuse (code public_unpublishable); empty otherwise.",
    }),
    lengths: t.Array(TextLength, {
      description:
        "An addition: each body item's text length by its network's own counts, against the " +
        "destination's limit (or the network's default for a draft naming only a channel), whatever " +
        "the request's other findings; one entry per count (Bluesky counts characters and bytes).",
    }),
  },
  { title: "PostValidation" },
);

/** Body of POST /posts/publish: the drafts (with their versions) and when they go out. */
export const PublishDraftsBody = Closed(
  {
    confirmed: t.Optional(t.Boolean()),
    when: t.String({ minLength: 1, maxLength: 64 }),
    time_zone: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
    posts: t.Array(
      Closed({
        id: t.String({ minLength: 1 }),
        version: Type.Integer({ minimum: 1 }),
        destination_id: t.String({ minLength: 1, maxLength: 200 }),
      }),
      { minItems: 1, maxItems: 100 },
    ),
  },
  {
    title: "PublishDraftsRequest",
    examples: [
      {
        confirmed: true,
        when: "now",
        posts: [
          {
            id: "send_01jdq3v9m2x7k4r8t6w5n0c1ab",
            version: 1,
            destination_id: "dest_01jdq3tz8w1e5r9y2u6i4o7p3q",
          },
        ],
      },
    ],
  },
);

/** Body of POST /posts/move: queued posts (as the caller last saw them) and the date to move them to. */
export const MovePostsBody = Closed(
  {
    confirmed: t.Optional(t.Boolean()),
    local_date: t.String({ minLength: 10, maxLength: 10 }),
    posts: t.Array(
      Closed({
        id: t.String({ minLength: 1 }),
        expected_scheduled_at: t.String({ minLength: 1, maxLength: 64 }),
      }),
      { minItems: 1, maxItems: 100 },
    ),
  },
  {
    title: "MovePostsRequest",
    examples: [
      {
        confirmed: true,
        local_date: "2026-12-01",
        posts: [{ id: "send_01jdq3v9m2x7k4r8t6w5n0c1ab", expected_scheduled_at: "2026-11-30T08:00:00.000Z" }],
      },
    ],
  },
);

/** Body of PATCH one draft: its body, its assets or both. */
export const PatchDraftBody = Closed(
  {
    body: t.Optional(t.Array(t.String({ maxLength: 100_000 }), { minItems: 1, maxItems: 100 })),
    asset_items: t.Optional(t.Array(AssetItem, { maxItems: 100 })),
  },
  {
    title: "UpdateDraftRequest",
    minProperties: 1,
    examples: [{ body: ["The corrected first post.", "And its reply."] }],
  },
);

/** The answer of DELETE one draft. */
export const DeletedPost = Deleted("post");

/** Body of cancel. */
export const CancelPostBody = Closed(
  { confirmed: t.Optional(t.Boolean()) },
  { title: "CancelPostRequest", examples: [{ confirmed: true }] },
);

/** Body of retry. */
export const RetryPostBody = Closed(
  { confirmed: t.Optional(t.Boolean()), acknowledge_duplicate_risk: t.Optional(t.Boolean()) },
  { title: "RetryPostRequest", examples: [{ confirmed: true }] },
);

/** Body of reschedule. */
export const ReschedulePostBody = Closed(
  {
    confirmed: t.Optional(t.Boolean()),
    scheduled_at: t.String({ minLength: 1, maxLength: 64 }),
    time_zone: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
    acknowledge_duplicate_risk: t.Optional(
      t.Boolean({
        description: "Needed when the post's last outcome is unknown (retry_safety unsafe), as for retry.",
      }),
    ),
  },
  {
    title: "ReschedulePostRequest",
    examples: [{ confirmed: true, scheduled_at: "2026-12-01T09:30:00+01:00" }],
  },
);

/** Body of PUT /queue: every posting window of the workspace. */
export const PutQueueBody = Closed(
  {
    windows: t.Array(
      Closed({
        weekday: Type.Integer({ minimum: 1, maximum: 7 }),
        local_time: t.String({ pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$" }),
      }),
      { maxItems: 500 },
    ),
  },
  {
    title: "ReplaceQueueRequest",
    examples: [
      {
        windows: [
          { weekday: 1, local_time: "09:00" },
          { weekday: 3, local_time: "12:30" },
        ],
      },
    ],
  },
);
