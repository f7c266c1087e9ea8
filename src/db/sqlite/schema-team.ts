// Tables of issue 17's account surface: feedback messages and per-workspace chat notifications (the
// settings and the Slack messages waiting to be posted). Members and invitations live in schema.ts.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, workspaces } from "./schema.ts";

/** A message sent through POST /feedback; kept whether or not its e-mail went out. */
export const feedback = sqliteTable(
  "feedback",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    credentialId: text("credential_id").notNull(),
    message: text("message").notNull(),
    /** `sent` once the operator's mailbox accepted it; `unsent` when no mail could be sent. */
    status: text("status", { enum: ["sent", "unsent"] }).notNull(),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    sentAt: integer("sent_at"),
  },
  (t) => [index("feedback_account").on(t.accountId, t.id)],
);

/** A workspace's chat notification settings; a workspace without a row has the defaults. */
export const chatNotificationSettings = sqliteTable("chat_notification_settings", {
  workspaceId: text("workspace_id")
    .primaryKey()
    .references(() => workspaces.id),
  chatChannelId: text("chat_channel_id"),
  enabled: integer("enabled", { mode: "boolean" }).notNull(),
  /** JSON array of the event types posted. */
  eventTypes: text("event_types", { mode: "json" }).$type<string[]>().notNull(),
  /** When notifications were last switched on: events from before are not posted. */
  enabledAt: integer("enabled_at"),
  /** The last message Slack refused for good, so the settings show why nothing arrives. */
  lastError: text("last_error"),
  lastErrorAt: integer("last_error_at"),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/** One Slack message to post, made from an outbox event; sent with retries by `chat-notifications`. */
export const chatNotifications = sqliteTable(
  "chat_notifications",
  {
    id: text("id").primaryKey(),
    workspaceId: text("workspace_id").notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    channelId: text("channel_id").notNull(),
    text: text("text").notNull(),
    /** `pending` until posted (`sent`) or refused for good / out of retries (`failed`). */
    status: text("status", { enum: ["pending", "sent", "failed"] }).notNull(),
    attempts: integer("attempts").notNull(),
    /** Due time of the next attempt; a claim moves it out (a lease). */
    nextAttemptAt: integer("next_attempt_at").notNull(),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    sentAt: integer("sent_at"),
  },
  (t) => [
    index("chat_notifications_due").on(t.status, t.nextAttemptAt),
    uniqueIndex("chat_notifications_event").on(t.eventId, t.workspaceId),
  ],
);
