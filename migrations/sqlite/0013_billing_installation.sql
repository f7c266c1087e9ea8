CREATE TABLE `billing_installation` (
	`id` text PRIMARY KEY NOT NULL,
	`processor_since` integer NOT NULL
);
