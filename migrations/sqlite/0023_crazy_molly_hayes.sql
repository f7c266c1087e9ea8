ALTER TABLE `posts` ADD `recycle` text;--> statement-breakpoint
ALTER TABLE `posts` ADD `recycled_from` text;--> statement-breakpoint
ALTER TABLE `posts` ADD `recycle_number` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `posts_one_copy_per_recycle_number` ON `posts` (`recycled_from`,`recycle_number`);