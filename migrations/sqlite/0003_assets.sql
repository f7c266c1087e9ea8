CREATE TABLE `asset_uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`asset_id` text NOT NULL,
	`storage` text NOT NULL,
	`blob_key` text NOT NULL,
	`store_upload_id` text NOT NULL,
	`byte_size` integer NOT NULL,
	`part_size` integer NOT NULL,
	`part_checksums` text NOT NULL,
	`status` text NOT NULL,
	`lease_until` integer,
	`failure` text,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`completed_at` integer
);
--> statement-breakpoint
CREATE INDEX `asset_uploads_status` ON `asset_uploads` (`status`,`expires_at`);--> statement-breakpoint
CREATE INDEX `asset_uploads_asset` ON `asset_uploads` (`asset_id`);--> statement-breakpoint
ALTER TABLE `assets` ADD `checksum` text;--> statement-breakpoint
ALTER TABLE `assets` ADD `format` text;--> statement-breakpoint
ALTER TABLE `assets` ADD `inspected_at` integer;--> statement-breakpoint
CREATE INDEX `assets_blob_key` ON `assets` (`blob_key`);