ALTER TABLE `api_keys` ADD `created_by_user_id` text REFERENCES users(id);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `creation_form_key` text;--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_creation_form_key` ON `api_keys` (`account_id`,`creation_form_key`);