CREATE TABLE `chat_notification_settings` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`chat_channel_id` text,
	`enabled` integer NOT NULL,
	`event_types` text NOT NULL,
	`enabled_at` integer,
	`last_error` text,
	`last_error_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `chat_notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`channel_id` text NOT NULL,
	`text` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`last_error` text,
	`created_at` integer NOT NULL,
	`sent_at` integer
);
--> statement-breakpoint
CREATE INDEX `chat_notifications_due` ON `chat_notifications` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `chat_notifications_event` ON `chat_notifications` (`event_id`,`workspace_id`);--> statement-breakpoint
CREATE TABLE `feedback` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`credential_id` text NOT NULL,
	`message` text NOT NULL,
	`status` text NOT NULL,
	`last_error` text,
	`created_at` integer NOT NULL,
	`sent_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `feedback_account` ON `feedback` (`account_id`,`id`);--> statement-breakpoint
ALTER TABLE `events_outbox` ADD `chat_dispatched_at` integer;--> statement-breakpoint
CREATE INDEX `events_outbox_chat_undispatched` ON `events_outbox` (`id`) WHERE "events_outbox"."chat_dispatched_at" IS NULL;--> statement-breakpoint
ALTER TABLE `invitations` ADD `role` text DEFAULT 'member' NOT NULL;--> statement-breakpoint
ALTER TABLE `invitations` ADD `token_hash` text;--> statement-breakpoint
ALTER TABLE `invitations` ADD `accepted_at` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `invitations_token` ON `invitations` (`token_hash`);--> statement-breakpoint
ALTER TABLE `users` ADD `name` text;