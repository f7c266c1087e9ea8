CREATE TABLE `analytics_refreshes` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`group_key` text NOT NULL,
	`requested_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `analytics_refreshes_workspace` ON `analytics_refreshes` (`workspace_id`,`requested_at`);--> statement-breakpoint
CREATE TABLE `analytics_snapshots` (
	`id` text PRIMARY KEY NOT NULL,
	`post_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`fetched_at` integer NOT NULL,
	`provider_as_of` integer,
	`metrics` text NOT NULL,
	`offered` text NOT NULL,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `analytics_snapshots_post` ON `analytics_snapshots` (`post_id`,`fetched_at`);--> statement-breakpoint
CREATE TABLE `post_analytics` (
	`post_id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`group_key` text NOT NULL,
	`channel` text NOT NULL,
	`destination_id` text,
	`published_at` integer NOT NULL,
	`state` text NOT NULL,
	`metrics` text NOT NULL,
	`offered` text NOT NULL,
	`fetched_at` integer,
	`provider_as_of` integer,
	`next_refresh_at` integer,
	`last_error` text,
	`lease_owner` text,
	`lease_expires_at` integer,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `post_analytics_due` ON `post_analytics` (`next_refresh_at`);--> statement-breakpoint
CREATE INDEX `post_analytics_group` ON `post_analytics` (`workspace_id`,`group_key`);--> statement-breakpoint
CREATE INDEX `post_analytics_published` ON `post_analytics` (`workspace_id`,`published_at`);--> statement-breakpoint
INSERT INTO `post_analytics` (`post_id`, `workspace_id`, `group_key`, `channel`, `destination_id`, `published_at`, `state`, `metrics`, `offered`, `next_refresh_at`) SELECT `id`, `workspace_id`, `group_key`, `channel`, `destination_id`, `published_at`, 'pending', '{"views":0,"impressions":0,"comments":0,"reactions":0,"shares":0,"saves":0,"link_clicks":0}', '[]', `published_at` + 600000 FROM `posts` WHERE `state` = 'published' AND `published_at` IS NOT NULL;
