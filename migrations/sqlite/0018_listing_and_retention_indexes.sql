CREATE INDEX `analytics_refreshes_requested` ON `analytics_refreshes` (`requested_at`);--> statement-breakpoint
CREATE INDEX `analytics_snapshots_fetched` ON `analytics_snapshots` (`fetched_at`);--> statement-breakpoint
CREATE INDEX `audit_records_created` ON `audit_records` (`created_at`);--> statement-breakpoint
CREATE INDEX `chat_notifications_created` ON `chat_notifications` (`created_at`);--> statement-breakpoint
CREATE INDEX `events_outbox_dispatched` ON `events_outbox` (`dispatched_at`);--> statement-breakpoint
CREATE INDEX `posts_workspace_state` ON `posts` (`workspace_id`,`state`,`id`);--> statement-breakpoint
CREATE INDEX `posts_workspace_channel` ON `posts` (`workspace_id`,`channel`,`id`);--> statement-breakpoint
CREATE INDEX `posts_workspace_group` ON `posts` (`workspace_id`,`group_key`,`id`);--> statement-breakpoint
CREATE INDEX `posts_workspace_destination` ON `posts` (`workspace_id`,`destination_id`,`id`);--> statement-breakpoint
CREATE INDEX `posts_workspace_created` ON `posts` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `posts_workspace_scheduled` ON `posts` (`workspace_id`,`scheduled_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_created` ON `webhook_deliveries` (`created_at`);