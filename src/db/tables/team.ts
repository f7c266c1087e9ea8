// Tables of issue 17's account surface: feedback messages and per-workspace chat notifications (the
// settings and the Slack messages waiting to be posted). Members and invitations live in accounts.ts.
import type { TableBuilders } from "./builders.ts";
import type { AccountTables } from "./accounts.ts";

/** The feedback and chat notification tables. */
export function defineTeamTables(
  b: TableBuilders,
  { accounts, workspaces }: Pick<AccountTables, "accounts" | "workspaces">,
) {
  /** A message sent through POST /feedback; kept whether or not its e-mail went out. */
  const feedback = b.table(
    "feedback",
    {
      id: b.text("id").primaryKey(),
      accountId: b
        .text("account_id")
        .notNull()
        .references(() => accounts.id),
      credentialId: b.text("credential_id").notNull(),
      message: b.text("message").notNull(),
      /** `sent` once the operator's mailbox accepted it; `unsent` when no mail could be sent. */
      status: b.text("status", { enum: ["sent", "unsent"] }).notNull(),
      lastError: b.text("last_error"),
      createdAt: b.integer("created_at").notNull(),
      sentAt: b.integer("sent_at"),
    },
    (t) => [b.index("feedback_account").on(t.accountId, t.id)],
  );

  /** A workspace's chat notification settings; a workspace without a row has the defaults. */
  const chatNotificationSettings = b.table("chat_notification_settings", {
    workspaceId: b
      .text("workspace_id")
      .primaryKey()
      .references(() => workspaces.id),
    chatChannelId: b.text("chat_channel_id"),
    enabled: b.boolean("enabled").notNull(),
    /** JSON array of the event types posted. */
    eventTypes: b.json("event_types").$type<string[]>().notNull(),
    /** When notifications were last switched on: events from before are not posted. */
    enabledAt: b.integer("enabled_at"),
    /** The last message Slack refused for good, so the settings show why nothing arrives. */
    lastError: b.text("last_error"),
    lastErrorAt: b.integer("last_error_at"),
    createdAt: b.integer("created_at").notNull(),
    updatedAt: b.integer("updated_at").notNull(),
  });

  /** One Slack message to post, made from an outbox event; sent with retries by `chat-notifications`. */
  const chatNotifications = b.table(
    "chat_notifications",
    {
      id: b.text("id").primaryKey(),
      workspaceId: b.text("workspace_id").notNull(),
      eventId: b.text("event_id").notNull(),
      eventType: b.text("event_type").notNull(),
      channelId: b.text("channel_id").notNull(),
      text: b.text("text").notNull(),
      /** `pending` until posted (`sent`) or refused for good / out of retries (`failed`). */
      status: b.text("status", { enum: ["pending", "sent", "failed"] }).notNull(),
      attempts: b.integer("attempts").notNull(),
      /** Due time of the next attempt; a claim moves it out (a lease). */
      nextAttemptAt: b.integer("next_attempt_at").notNull(),
      lastError: b.text("last_error"),
      createdAt: b.integer("created_at").notNull(),
      sentAt: b.integer("sent_at"),
    },
    (t) => [
      b.index("chat_notifications_due").on(t.status, t.nextAttemptAt),
      b.uniqueIndex("chat_notifications_event").on(t.eventId, t.workspaceId),
      // Retention takes the oldest finished messages by this (src/jobs/retention.ts).
      b
        .index("chat_notifications_created")
        .on(t.createdAt),
    ],
  );
  return { feedback, chatNotificationSettings, chatNotifications };
}
