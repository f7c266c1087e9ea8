CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`endpoint_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`event_created_at` integer NOT NULL,
	`payload` text NOT NULL,
	`status` text NOT NULL,
	`attempt_count` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`last_attempt_at` integer,
	`last_response_status` integer,
	`last_error` text,
	`last_duration_ms` integer,
	`delivered_at` integer,
	`failed_at` integer,
	`redelivery_of` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`endpoint_id`) REFERENCES `webhook_endpoints`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_endpoint` ON `webhook_deliveries` (`endpoint_id`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_once` ON `webhook_deliveries` (`endpoint_id`,`event_id`) WHERE redelivery_of IS NULL;--> statement-breakpoint
CREATE TABLE `webhook_delivery_attempts` (
	`delivery_id` text NOT NULL,
	`number` integer NOT NULL,
	`started_at` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`response_status` integer,
	`error` text,
	PRIMARY KEY(`delivery_id`, `number`),
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `webhook_dispatch_cursor` (
	`name` text PRIMARY KEY NOT NULL,
	`last_rowid` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `webhook_endpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`url` text NOT NULL,
	`enabled` integer NOT NULL,
	`event_types` text NOT NULL,
	`destination_filter_mode` text NOT NULL,
	`destination_ids` text NOT NULL,
	`content_mode` text NOT NULL,
	`secret_sealed` text NOT NULL,
	`secret_last_four` text NOT NULL,
	`previous_secret_sealed` text,
	`previous_secret_expires_at` integer,
	`config_version` integer NOT NULL,
	`disabled_reason` text,
	`failing_since` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_endpoints_workspace` ON `webhook_endpoints` (`workspace_id`,`id`);