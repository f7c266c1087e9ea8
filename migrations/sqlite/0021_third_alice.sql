CREATE TABLE `post_approval_steps` (
	`id` text PRIMARY KEY NOT NULL,
	`post_id` text NOT NULL,
	`status` text NOT NULL,
	`by` text NOT NULL,
	`at` integer NOT NULL,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `post_approval_steps_post` ON `post_approval_steps` (`post_id`,`id`);--> statement-breakpoint
CREATE TABLE `post_approvals` (
	`post_id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`status` text NOT NULL,
	`requested_when` text NOT NULL,
	`requested_at` integer NOT NULL,
	`requested_by` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `post_approvals_workspace_status` ON `post_approvals` (`workspace_id`,`status`,`post_id`);--> statement-breakpoint
CREATE TABLE `post_comments` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`post_id` text NOT NULL,
	`author_kind` text NOT NULL,
	`author_name` text NOT NULL,
	`author_id` text,
	`body` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`post_id`) REFERENCES `posts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `post_comments_post` ON `post_comments` (`post_id`,`id`);--> statement-breakpoint
CREATE TABLE `review_links` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`group_key` text NOT NULL,
	`token_hash` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `review_links_token_hash` ON `review_links` (`token_hash`);--> statement-breakpoint
CREATE INDEX `review_links_workspace` ON `review_links` (`workspace_id`,`id`);--> statement-breakpoint
ALTER TABLE `workspaces` ADD `approval_required` integer DEFAULT false NOT NULL;