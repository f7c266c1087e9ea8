// Tables of posts: the posts, their receipts and attempts, the queue's windows, the events outbox
// and the monthly X usage.
import { sql } from "drizzle-orm";
import type { StoredProviderPending } from "../pending.ts";
import type { RecyclePlan } from "../recycle-plan.ts";
import type { TableBuilders } from "./builders.ts";
import type { AccountTables } from "./accounts.ts";
import type { DestinationTables } from "./destinations.ts";

// The live post states (they hold queue slots), as SQL for the partial unique index below.
const LIVE_POST_STATES = [
  "preparing",
  "scheduled",
  "ready",
  "processing",
  "awaiting-provider",
  "needs-attention",
  "missed",
]
  .map((s) => `'${s}'`)
  .join(", ");
const QUEUED = "queue_window_id IS NOT NULL AND queue_local_date IS NOT NULL";

/** The post tables. */
export function definePostTables(
  b: TableBuilders,
  { workspaces, destinations }: Pick<AccountTables, "workspaces"> & Pick<DestinationTables, "destinations">,
) {
  const posts = b.table(
    "posts",
    {
      id: b.text("id").primaryKey(),
      workspaceId: b
        .text("workspace_id")
        .notNull()
        .references(() => workspaces.id),
      groupKey: b.text("group_key").notNull(),
      channel: b.text("channel").notNull(),
      destinationId: b.text("destination_id").references(() => destinations.id),
      state: b.text("state").notNull(),
      version: b.integer("version").notNull(),
      headline: b.text("headline").notNull(),
      body: b.json("body").$type<string[]>().notNull(),
      destinationOptions: b
        .json("destination_options")
        .$type<Record<string, Record<string, unknown>>>()
        .notNull(),
      /** [{asset_id, item_index}] in order. */
      assetItems: b.json("asset_items").$type<{ asset_id: string; item_index: number }[]>().notNull(),
      scheduleMode: b.text("schedule_mode").notNull(),
      scheduledAt: b.integer("scheduled_at"),
      timeZone: b.text("time_zone").notNull(),
      queueLocalDate: b.text("queue_local_date"),
      queueWindowId: b.text("queue_window_id"),
      deferredReason: b.text("deferred_reason"),
      deferredUntil: b.integer("deferred_until"),
      retrySafety: b.text("retry_safety").notNull(),
      lastError: b.json("last_error").$type<Record<string, unknown> | null>(),
      /** Its URLs are published as tracked short links (decided at creation: workspace and post). */
      linkTracking: b.boolean("link_tracking").notNull().default(false),
      /** A body item the network accepted and is still processing (awaiting-provider). */
      providerPending: b.json("provider_pending").$type<StoredProviderPending | null>(),
      attemptCount: b.integer("attempt_count").notNull().default(0),
      /** What starts the next attempt: `initial`, `automatic_retry`, `manual_retry` or `recovery`. */
      nextTrigger: b.text("next_trigger").notNull().default("initial"),
      /** Automatic retries used since the last manual action. */
      autoRetries: b.integer("auto_retries").notNull().default(0),
      nextActionAt: b.integer("next_action_at"),
      leaseOwner: b.text("lease_owner"),
      leaseExpiresAt: b.integer("lease_expires_at"),
      publishedAt: b.integer("published_at"),
      cancelledAt: b.integer("cancelled_at"),
      missedAt: b.integer("missed_at"),
      /** The recycling plan of an original (copies follow its publications), or null. */
      recycle: b.json("recycle").$type<RecyclePlan | null>(),
      /** A recycled copy's original, and which copy of it this is (1, 2, …); null otherwise. */
      recycledFrom: b.text("recycled_from"),
      recycleNumber: b.integer("recycle_number"),
      createdAt: b.integer("created_at").notNull(),
      updatedAt: b.integer("updated_at").notNull(),
    },
    (t) => [
      b.index("posts_workspace").on(t.workspaceId, t.id),
      // The listing's filters, each in id order: a page of a rare state, channel, group or destination
      // among a million posts is read from its own range, never by walking the whole workspace.
      b
        .index("posts_workspace_state")
        .on(t.workspaceId, t.state, t.id),
      b.index("posts_workspace_channel").on(t.workspaceId, t.channel, t.id),
      b.index("posts_workspace_group").on(t.workspaceId, t.groupKey, t.id),
      b.index("posts_workspace_destination").on(t.workspaceId, t.destinationId, t.id),
      // The time filters' ranges, counted (at most a few hundred entries) before a page is read.
      b
        .index("posts_workspace_created")
        .on(t.workspaceId, t.createdAt, t.id),
      b.index("posts_workspace_scheduled").on(t.workspaceId, t.scheduledAt, t.id),
      b.index("posts_due").on(t.state, t.nextActionAt),
      b.index("posts_destination").on(t.destinationId, t.publishedAt),
      // The engine's claim: destinations with ready posts, each one's head in due order, and whether
      // one of its posts is processing, each a seek (src/modules/publishing/repo.ts readyHeadsQuery).
      b
        .index("posts_destination_queue")
        .on(t.state, t.destinationId, t.nextActionAt, t.id),
      // One draft per channel per group (the contract's group constraint), enforced by the database.
      b
        .uniqueIndex("posts_one_draft_per_group_channel")
        .on(t.workspaceId, t.groupKey, t.channel)
        .where(sql`state = 'draft'`),
      // One copy per number per original: a publication recorded twice cannot schedule two (NULLs of
      // posts that are no copies never collide).
      b
        .uniqueIndex("posts_one_copy_per_recycle_number")
        .on(t.recycledFrom, t.recycleNumber),
      // One live post per destination per queue window per local date (a window holds one post per
      // destination); a test keeps the states equal to LIVE_STATES of src/modules/posts/states.ts.
      b
        .uniqueIndex("posts_one_live_post_per_queue_slot")
        .on(t.destinationId, t.queueWindowId, t.queueLocalDate)
        .where(sql.raw(`state IN (${LIVE_POST_STATES}) AND ${QUEUED}`)),
    ],
  );

  const receipts = b.table(
    "receipts",
    {
      id: b.text("id").primaryKey(),
      postId: b
        .text("post_id")
        .notNull()
        .references(() => posts.id, { onDelete: "cascade" }),
      itemIndex: b.integer("item_index").notNull(),
      providerObjectId: b.text("provider_object_id").notNull(),
      url: b.text("url").notNull(),
      extra: b.json("extra").$type<Record<string, unknown>>().notNull(),
      state: b.text("state").notNull(),
      publishedAt: b.integer("published_at").notNull(),
    },
    (t) => [b.uniqueIndex("receipts_post_item").on(t.postId, t.itemIndex)],
  );

  /**
   * The receipt of a post's first comment (`kind: first_comment` in the post's receipts): sent by the
   * engine once the post is published, so it carries its own work state beside the receipt's fields
   * (an item's receipt is written only once the item is out; a comment's exists from the moment it is
   * due). `call_started_at`: a create call went out unanswered, so the comment is looked up before it is
   * sent again; `lease_*`: the process sending it now.
   */
  const commentReceipts = b.table(
    "comment_receipts",
    {
      id: b.text("id").primaryKey(),
      postId: b
        .text("post_id")
        .notNull()
        .references(() => posts.id, { onDelete: "cascade" }),
      /** `pending` (due or being sent), `published` or `failed`. */
      state: b.text("state").notNull(),
      providerObjectId: b.text("provider_object_id"),
      url: b.text("url"),
      /** `{code, message}` of the failure, when `failed`. */
      error: b.json("error").$type<{ code: string; message: string } | null>(),
      attempts: b.integer("attempts").notNull().default(0),
      nextAttemptAt: b.integer("next_attempt_at"),
      callStartedAt: b.integer("call_started_at"),
      leaseOwner: b.text("lease_owner"),
      leaseExpiresAt: b.integer("lease_expires_at"),
      publishedAt: b.integer("published_at"),
      createdAt: b.integer("created_at").notNull(),
    },
    (t) => [
      b.uniqueIndex("comment_receipts_post").on(t.postId),
      b.index("comment_receipts_due").on(t.state, t.nextAttemptAt),
    ],
  );

  const attempts = b.table(
    "attempts",
    {
      id: b.text("id").primaryKey(),
      postId: b
        .text("post_id")
        .notNull()
        .references(() => posts.id, { onDelete: "cascade" }),
      number: b.integer("number").notNull(),
      trigger: b.text("trigger").notNull(),
      status: b.text("status").notNull(),
      startedAt: b.integer("started_at").notNull(),
      finishedAt: b.integer("finished_at"),
      retrySafety: b.text("retry_safety").notNull(),
      error: b.json("error").$type<Record<string, unknown> | null>(),
      provider: b.json("provider").$type<Record<string, unknown> | null>(),
    },
    (t) => [b.index("attempts_post").on(t.postId, t.number)],
  );

  const queueWindows = b.table(
    "queue_windows",
    {
      id: b.text("id").primaryKey(),
      workspaceId: b
        .text("workspace_id")
        .notNull()
        .references(() => workspaces.id),
      weekday: b.integer("weekday").notNull(),
      localTime: b.text("local_time").notNull(),
    },
    (t) => [b.uniqueIndex("queue_windows_slot").on(t.workspaceId, t.weekday, t.localTime)],
  );

  /** Events waiting for delivery (webhooks, chat notifications); written with the state change. */
  const eventsOutbox = b.table(
    "events_outbox",
    {
      id: b.text("id").primaryKey(),
      workspaceId: b.text("workspace_id").notNull(),
      type: b.text("type").notNull(),
      postId: b.text("post_id"),
      destinationId: b.text("destination_id"),
      /** The event body's `data.object` with `content` (stripped for metadata-mode endpoints). */
      payload: b.json("payload").$type<Record<string, unknown>>().notNull(),
      createdAt: b.integer("created_at").notNull(),
      /**
       * When the dispatcher fanned the event out into deliveries; null until then. A per-row mark, not
       * a high-water mark: an event whose transaction commits late is still found.
       */
      dispatchedAt: b.integer("dispatched_at"),
      /** When the chat fan-out looked at the event (its own mark, independent of the webhooks'). */
      chatDispatchedAt: b.integer("chat_dispatched_at"),
    },
    (t) => [
      b.index("events_outbox_workspace").on(t.workspaceId, t.id),
      b.index("events_outbox_undispatched").on(t.id).where(sql`${t.dispatchedAt} IS NULL`),
      b.index("events_outbox_chat_undispatched").on(t.id).where(sql`${t.chatDispatchedAt} IS NULL`),
      // Retention takes the oldest fanned-out events by this (src/jobs/retention.ts).
      b
        .index("events_outbox_dispatched")
        .on(t.dispatchedAt),
    ],
  );

  /** X posts per workspace per calendar month (UTC): `reserved` scheduled, `used` published. */
  const xUsage = b.table(
    "x_usage",
    {
      workspaceId: b.text("workspace_id").notNull(),
      month: b.text("month").notNull(),
      reserved: b.integer("reserved").notNull().default(0),
      used: b.integer("used").notNull().default(0),
    },
    (t) => [b.primaryKey({ columns: [t.workspaceId, t.month] })],
  );
  return { posts, receipts, commentReceipts, attempts, queueWindows, eventsOutbox, xUsage };
}

/** The post tables of one dialect. */
export type PostTables = ReturnType<typeof definePostTables>;
