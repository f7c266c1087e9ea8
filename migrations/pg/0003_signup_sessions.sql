CREATE TABLE "cli_authorizations" (
	"id" text PRIMARY KEY NOT NULL,
	"device_secret_hash" text NOT NULL,
	"user_code_hash" text NOT NULL,
	"device_name" text NOT NULL,
	"cli_version" text,
	"status" text NOT NULL,
	"interval_seconds" bigint NOT NULL,
	"last_polled_at" bigint,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"decided_at" bigint,
	"account_id" text,
	"user_id" text,
	"workspace_id" text,
	"credential_id" text,
	"exchanged_at" bigint
);
--> statement-breakpoint
CREATE TABLE "email_confirmations" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"account_id" text NOT NULL,
	"email" text NOT NULL,
	"token_hash" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"confirmed_at" bigint
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"user_id" text NOT NULL,
	"account_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"revoked_at" bigint
);
--> statement-breakpoint
CREATE TABLE "signup_intents" (
	"id" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"email" text NOT NULL,
	"workspace_name" text NOT NULL,
	"cli_authorization_id" text,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"completed_at" bigint,
	"account_id" text
);
--> statement-breakpoint
ALTER TABLE "cli_authorizations" ADD CONSTRAINT "cli_authorizations_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "cli_authorizations" ADD CONSTRAINT "cli_authorizations_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "email_confirmations" ADD CONSTRAINT "email_confirmations_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "email_confirmations" ADD CONSTRAINT "email_confirmations_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signup_intents" ADD CONSTRAINT "signup_intents_cli_authorization_id_cli_authorizations_id_fk" FOREIGN KEY ("cli_authorization_id") REFERENCES "public"."cli_authorizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signup_intents" ADD CONSTRAINT "signup_intents_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "cli_authorizations_secret" ON "cli_authorizations" USING btree ("device_secret_hash");--> statement-breakpoint
CREATE INDEX "cli_authorizations_user_code" ON "cli_authorizations" USING btree ("user_code_hash");--> statement-breakpoint
CREATE INDEX "cli_authorizations_expiry" ON "cli_authorizations" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "email_confirmations_token" ON "email_confirmations" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "email_confirmations_account" ON "email_confirmations" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_token" ON "sessions" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "sessions_user" ON "sessions" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "signup_intents_token" ON "signup_intents" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "signup_intents_expiry" ON "signup_intents" USING btree ("expires_at");