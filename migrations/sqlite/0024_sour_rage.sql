CREATE TABLE `comment_receipts` (
	`id` text PRIMARY KEY NOT NULL,
	`post_id` text NOT NULL,
	`state` text NOT NULL,
	`provider_object_id` text,
	`url` text,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`call_started_at` integer,
	`lease_owner` text,
	`lease_expires_at` integer,
	`published_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `comment_receipts_post` ON `comment_receipts` (`post_id`);--> statement-breakpoint
CREATE INDEX `comment_receipts_due` ON `comment_receipts` (`state`,`next_attempt_at`);