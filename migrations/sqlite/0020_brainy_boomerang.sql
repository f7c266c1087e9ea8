CREATE TABLE `oauth_authorization_codes` (
	`code_hash` text PRIMARY KEY NOT NULL,
	`client_id` text NOT NULL,
	`account_id` text NOT NULL,
	`user_id` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`code_challenge` text NOT NULL,
	`scopes` text NOT NULL,
	`workspace_access_mode` text NOT NULL,
	`workspace_ids` text NOT NULL,
	`resource` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`grant_id` text
);
--> statement-breakpoint
CREATE INDEX `oauth_authorization_codes_expiry` ON `oauth_authorization_codes` (`expires_at`);--> statement-breakpoint
CREATE TABLE `oauth_clients` (
	`id` text PRIMARY KEY NOT NULL,
	`client_name` text NOT NULL,
	`redirect_uris` text NOT NULL,
	`grant_types` text NOT NULL,
	`client_uri` text,
	`source` text NOT NULL,
	`created_at` integer NOT NULL,
	`fetched_at` integer
);
--> statement-breakpoint
CREATE TABLE `oauth_refresh_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`grant_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`rotated_at` integer,
	FOREIGN KEY (`grant_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `oauth_refresh_tokens_grant` ON `oauth_refresh_tokens` (`grant_id`);--> statement-breakpoint
CREATE INDEX `oauth_refresh_tokens_rotated` ON `oauth_refresh_tokens` (`rotated_at`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `kind` text DEFAULT 'api_key' NOT NULL;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `oauth_client_id` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `access_expires_at` integer;