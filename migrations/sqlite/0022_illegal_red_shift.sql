CREATE TABLE `tracked_link_clicks` (
	`link_id` text NOT NULL,
	`day` text NOT NULL,
	`clicks` integer NOT NULL,
	PRIMARY KEY(`link_id`, `day`),
	FOREIGN KEY (`link_id`) REFERENCES `tracked_links`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `tracked_links` (
	`id` text PRIMARY KEY NOT NULL,
	`code` text NOT NULL,
	`workspace_id` text NOT NULL,
	`post_id` text NOT NULL,
	`url` text NOT NULL,
	`target` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tracked_links_code` ON `tracked_links` (`code`);--> statement-breakpoint
CREATE UNIQUE INDEX `tracked_links_post_url` ON `tracked_links` (`post_id`,`url`);--> statement-breakpoint
ALTER TABLE `posts` ADD `link_tracking` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `link_tracking` text;