// Tables of issue 17's account surface: feedback and chat notifications. PostgreSQL twin of
// src/db/sqlite/schema-team.ts.
import { bigint, boolean, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts, jsonText, workspaces } from "./schema.ts";

/** A message sent through POST /feedback; kept whether or not its e-mail went out. */
export const feedback = pgTable(
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
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    sentAt: bigint("sent_at", { mode: "number" }),
  },
  (t) => [index("feedback_account").on(t.accountId, t.id)],
);

/** A workspace's chat notification settings; a workspace without a row has the defaults. */
export const chatNotificationSettings = pgTable("chat_notification_settings", {
  workspaceId: text("workspace_id")
    .primaryKey()
    .references(() => workspaces.id),
  chatChannelId: text("chat_channel_id"),
  enabled: boolean("enabled").notNull(),
  /** JSON array of the event types posted. */
  eventTypes: jsonText<string[]>("event_types").notNull(),
  /** When notifications were last switched on: events from before are not posted. */
  enabledAt: bigint("enabled_at", { mode: "number" }),
  /** The last message Slack refused for good, so the settings show why nothing arrives. */
  lastError: text("last_error"),
  lastErrorAt: bigint("last_error_at", { mode: "number" }),
  createdAt: bigint("created_at", { mode: "number" }).notNull(),
  updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
});

/** One Slack message to post, made from an outbox event; sent with retries by `chat-notifications`. */
export const chatNotifications = pgTable(
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
    attempts: bigint("attempts", { mode: "number" }).notNull(),
    /** Due time of the next attempt; a claim moves it out (a lease). */
    nextAttemptAt: bigint("next_attempt_at", { mode: "number" }).notNull(),
    lastError: text("last_error"),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    sentAt: bigint("sent_at", { mode: "number" }),
  },
  (t) => [
    index("chat_notifications_due").on(t.status, t.nextAttemptAt),
    uniqueIndex("chat_notifications_event").on(t.eventId, t.workspaceId),
  ],
);
