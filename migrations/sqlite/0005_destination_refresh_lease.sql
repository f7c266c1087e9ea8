ALTER TABLE `destinations` ADD `refresh_lease_owner` text;--> statement-breakpoint
ALTER TABLE `destinations` ADD `refresh_lease_expires_at` integer;