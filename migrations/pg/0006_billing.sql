CREATE TABLE "billing_stripe_events" (
	"id" text PRIMARY KEY NOT NULL,
	"type" text NOT NULL,
	"account_id" text,
	"created_at" bigint NOT NULL,
	"received_at" bigint NOT NULL,
	"outcome" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "billing_subscriptions" (
	"account_id" text PRIMARY KEY NOT NULL,
	"stripe_customer_id" text,
	"stripe_subscription_id" text,
	"status" text NOT NULL,
	"interval" text,
	"currency" text,
	"workspace_quantity" bigint NOT NULL,
	"trial_ends_at" bigint,
	"current_period_ends_at" bigint,
	"cancel_at" bigint,
	"cancel_at_period_end" boolean NOT NULL,
	"past_due_since" bigint,
	"last_event_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "billing_workspace_cancellations" (
	"workspace_id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"canceled_at" bigint NOT NULL,
	"ends_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "billing_subscriptions" ADD CONSTRAINT "billing_subscriptions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "billing_workspace_cancellations" ADD CONSTRAINT "billing_workspace_cancellations_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "billing_stripe_events_received" ON "billing_stripe_events" USING btree ("received_at");--> statement-breakpoint
CREATE UNIQUE INDEX "billing_subscriptions_customer" ON "billing_subscriptions" USING btree ("stripe_customer_id");--> statement-breakpoint
CREATE INDEX "billing_workspace_cancellations_account" ON "billing_workspace_cancellations" USING btree ("account_id","canceled_at");