CREATE TABLE `assets` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`type` text NOT NULL,
	`label` text NOT NULL,
	`content_type` text NOT NULL,
	`byte_size` integer NOT NULL,
	`width` integer,
	`height` integer,
	`duration_sec` integer,
	`status` text NOT NULL,
	`blob_key` text,
	`created_at` integer NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `assets_workspace` ON `assets` (`workspace_id`,`id`);--> statement-breakpoint
CREATE TABLE `attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`post_id` text NOT NULL,
	`number` integer NOT NULL,
	`trigger` text NOT NULL,
	`status` text NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`retry_safety` text NOT NULL,
	`error` text,
	`provider` text,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `attempts_post` ON `attempts` (`post_id`,`number`);--> statement-breakpoint
CREATE TABLE `destination_connections` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`provider` text NOT NULL,
	`status` text NOT NULL,
	`origin` text NOT NULL,
	`state` text,
	`secrets_sealed` text,
	`authorization_url` text,
	`destination_id` text,
	`error` text,
	`credential_id` text,
	`request_id` text,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `destination_connections_state` ON `destination_connections` (`state`);--> statement-breakpoint
CREATE TABLE `destinations` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`channel` text NOT NULL,
	`display_name` text NOT NULL,
	`handle` text NOT NULL,
	`external_id` text NOT NULL,
	`profile_image_url` text,
	`origin` text NOT NULL,
	`credentials_sealed` text NOT NULL,
	`limits` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`is_default` integer DEFAULT false NOT NULL,
	`unavailable_reason` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `destinations_workspace` ON `destinations` (`workspace_id`,`id`);--> statement-breakpoint
CREATE TABLE `events_outbox` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`type` text NOT NULL,
	`post_id` text,
	`destination_id` text,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_outbox_workspace` ON `events_outbox` (`workspace_id`,`id`);--> statement-breakpoint
CREATE TABLE `oauth_apps` (
	`provider` text NOT NULL,
	`origin` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`client_id` text NOT NULL,
	`client_secret_sealed` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`provider`, `origin`, `redirect_uri`)
);
--> statement-breakpoint
CREATE TABLE `posts` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`group_key` text NOT NULL,
	`channel` text NOT NULL,
	`destination_id` text,
	`state` text NOT NULL,
	`version` integer NOT NULL,
	`headline` text NOT NULL,
	`body` text NOT NULL,
	`destination_options` text NOT NULL,
	`asset_items` text NOT NULL,
	`schedule_mode` text NOT NULL,
	`scheduled_at` integer,
	`time_zone` text NOT NULL,
	`queue_local_date` text,
	`queue_window_id` text,
	`deferred_reason` text,
	`deferred_until` integer,
	`retry_safety` text NOT NULL,
	`last_error` text,
	`attempt_count` integer DEFAULT 0 NOT NULL,
	`next_trigger` text DEFAULT 'initial' NOT NULL,
	`auto_retries` integer DEFAULT 0 NOT NULL,
	`next_action_at` integer,
	`lease_owner` text,
	`lease_expires_at` integer,
	`published_at` integer,
	`cancelled_at` integer,
	`missed_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`destination_id`) REFERENCES `destinations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `posts_workspace` ON `posts` (`workspace_id`,`id`);--> statement-breakpoint
CREATE INDEX `posts_due` ON `posts` (`state`,`next_action_at`);--> statement-breakpoint
CREATE INDEX `posts_destination` ON `posts` (`destination_id`,`published_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `posts_one_draft_per_group_channel` ON `posts` (`workspace_id`,`group_key`,`channel`) WHERE state = 'draft';--> statement-breakpoint
CREATE TABLE `queue_windows` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`weekday` integer NOT NULL,
	`local_time` text NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `queue_windows_slot` ON `queue_windows` (`workspace_id`,`weekday`,`local_time`);--> statement-breakpoint
CREATE TABLE `receipts` (
	`id` text PRIMARY KEY NOT NULL,
	`post_id` text NOT NULL,
	`item_index` integer NOT NULL,
	`provider_object_id` text NOT NULL,
	`url` text NOT NULL,
	`extra` text NOT NULL,
	`state` text NOT NULL,
	`published_at` integer NOT NULL,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `receipts_post_item` ON `receipts` (`post_id`,`item_index`);--> statement-breakpoint
CREATE TABLE `x_usage` (
	`workspace_id` text NOT NULL,
	`month` text NOT NULL,
	`reserved` integer DEFAULT 0 NOT NULL,
	`used` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`workspace_id`, `month`)
);
