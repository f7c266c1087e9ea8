CREATE TABLE `cli_authorizations` (
	`id` text PRIMARY KEY NOT NULL,
	`device_secret_hash` text NOT NULL,
	`user_code_hash` text NOT NULL,
	`device_name` text NOT NULL,
	`cli_version` text,
	`status` text NOT NULL,
	`interval_seconds` integer NOT NULL,
	`last_polled_at` integer,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`decided_at` integer,
	`account_id` text,
	`user_id` text,
	`workspace_id` text,
	`credential_id` text,
	`exchanged_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `cli_authorizations_secret` ON `cli_authorizations` (`device_secret_hash`);--> statement-breakpoint
CREATE INDEX `cli_authorizations_user_code` ON `cli_authorizations` (`user_code_hash`);--> statement-breakpoint
CREATE INDEX `cli_authorizations_expiry` ON `cli_authorizations` (`expires_at`);--> statement-breakpoint
CREATE TABLE `email_confirmations` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`account_id` text NOT NULL,
	`email` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`confirmed_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `email_confirmations_token` ON `email_confirmations` (`token_hash`);--> statement-breakpoint
CREATE INDEX `email_confirmations_account` ON `email_confirmations` (`account_id`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`user_id` text NOT NULL,
	`account_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_token` ON `sessions` (`token_hash`);--> statement-breakpoint
CREATE INDEX `sessions_user` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `signup_intents` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`email` text NOT NULL,
	`workspace_name` text NOT NULL,
	`cli_authorization_id` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`completed_at` integer,
	`account_id` text,
	FOREIGN KEY (`cli_authorization_id`) REFERENCES `cli_authorizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `signup_intents_token` ON `signup_intents` (`token_hash`);--> statement-breakpoint
CREATE INDEX `signup_intents_expiry` ON `signup_intents` (`expires_at`);