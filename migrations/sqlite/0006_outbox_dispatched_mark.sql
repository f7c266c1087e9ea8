ALTER TABLE `events_outbox` ADD `dispatched_at` integer;--> statement-breakpoint
-- Events the rowid cursor had passed are already fanned out; mark them so they are not sent twice.
UPDATE `events_outbox` SET `dispatched_at` = `created_at` WHERE rowid <= coalesce((SELECT `last_rowid` FROM `webhook_dispatch_cursor` WHERE `name` = 'webhooks'), 0);--> statement-breakpoint
DROP TABLE `webhook_dispatch_cursor`;--> statement-breakpoint
CREATE INDEX `events_outbox_undispatched` ON `events_outbox` (`id`) WHERE "events_outbox"."dispatched_at" IS NULL;
