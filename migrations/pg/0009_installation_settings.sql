CREATE TABLE "installation_settings" (
	"id" text PRIMARY KEY NOT NULL,
	"signup_policy" text,
	"setup_token_hash" text,
	"setup_token_created_at" bigint,
	"updated_at" bigint NOT NULL
);
