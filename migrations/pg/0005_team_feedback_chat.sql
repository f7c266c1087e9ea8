CREATE TABLE "chat_notification_settings" (
	"workspace_id" text PRIMARY KEY NOT NULL,
	"chat_channel_id" text,
	"enabled" boolean NOT NULL,
	"event_types" text NOT NULL,
	"enabled_at" bigint,
	"last_error" text,
	"last_error_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chat_notifications" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"channel_id" text NOT NULL,
	"text" text NOT NULL,
	"status" text NOT NULL,
	"attempts" bigint NOT NULL,
	"next_attempt_at" bigint NOT NULL,
	"last_error" text,
	"created_at" bigint NOT NULL,
	"sent_at" bigint
);
--> statement-breakpoint
CREATE TABLE "feedback" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"credential_id" text NOT NULL,
	"message" text NOT NULL,
	"status" text NOT NULL,
	"last_error" text,
	"created_at" bigint NOT NULL,
	"sent_at" bigint
);
--> statement-breakpoint
ALTER TABLE "events_outbox" ADD COLUMN "chat_dispatched_at" bigint;--> statement-breakpoint
ALTER TABLE "invitations" ADD COLUMN "role" text DEFAULT 'member' NOT NULL;--> statement-breakpoint
ALTER TABLE "invitations" ADD COLUMN "token_hash" text;--> statement-breakpoint
ALTER TABLE "invitations" ADD COLUMN "accepted_at" bigint;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "name" text;--> statement-breakpoint
ALTER TABLE "chat_notification_settings" ADD CONSTRAINT "chat_notification_settings_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "feedback" ADD CONSTRAINT "feedback_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "chat_notifications_due" ON "chat_notifications" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE UNIQUE INDEX "chat_notifications_event" ON "chat_notifications" USING btree ("event_id","workspace_id");--> statement-breakpoint
CREATE INDEX "feedback_account" ON "feedback" USING btree ("account_id","id");--> statement-breakpoint
CREATE INDEX "events_outbox_chat_undispatched" ON "events_outbox" USING btree ("id") WHERE "events_outbox"."chat_dispatched_at" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "invitations_token" ON "invitations" USING btree ("token_hash");