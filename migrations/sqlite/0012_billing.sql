CREATE TABLE `billing_stripe_events` (
	`id` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`account_id` text,
	`created_at` integer NOT NULL,
	`received_at` integer NOT NULL,
	`outcome` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `billing_stripe_events_received` ON `billing_stripe_events` (`received_at`);--> statement-breakpoint
CREATE TABLE `billing_subscriptions` (
	`account_id` text PRIMARY KEY NOT NULL,
	`stripe_customer_id` text,
	`stripe_subscription_id` text,
	`status` text NOT NULL,
	`interval` text,
	`currency` text,
	`workspace_quantity` integer NOT NULL,
	`trial_ends_at` integer,
	`current_period_ends_at` integer,
	`cancel_at` integer,
	`cancel_at_period_end` integer NOT NULL,
	`past_due_since` integer,
	`last_event_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `billing_subscriptions_customer` ON `billing_subscriptions` (`stripe_customer_id`);--> statement-breakpoint
CREATE TABLE `billing_workspace_cancellations` (
	`workspace_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`canceled_at` integer NOT NULL,
	`ends_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `billing_workspace_cancellations_account` ON `billing_workspace_cancellations` (`account_id`,`canceled_at`);