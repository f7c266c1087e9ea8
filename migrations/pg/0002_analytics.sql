CREATE TABLE "analytics_refreshes" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"group_key" text NOT NULL,
	"requested_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "analytics_snapshots" (
	"id" text PRIMARY KEY NOT NULL,
	"post_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"fetched_at" bigint NOT NULL,
	"provider_as_of" bigint,
	"metrics" text NOT NULL,
	"offered" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "post_analytics" (
	"post_id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"group_key" text NOT NULL,
	"channel" text NOT NULL,
	"destination_id" text,
	"published_at" bigint NOT NULL,
	"state" text NOT NULL,
	"metrics" text NOT NULL,
	"offered" text NOT NULL,
	"fetched_at" bigint,
	"provider_as_of" bigint,
	"next_refresh_at" bigint,
	"last_error" text,
	"lease_owner" text,
	"lease_expires_at" bigint
);
--> statement-breakpoint
ALTER TABLE "analytics_snapshots" ADD CONSTRAINT "analytics_snapshots_post_id_posts_id_fk" FOREIGN KEY ("post_id") REFERENCES "public"."posts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "post_analytics" ADD CONSTRAINT "post_analytics_post_id_posts_id_fk" FOREIGN KEY ("post_id") REFERENCES "public"."posts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "analytics_refreshes_workspace" ON "analytics_refreshes" USING btree ("workspace_id","requested_at");--> statement-breakpoint
CREATE INDEX "analytics_snapshots_post" ON "analytics_snapshots" USING btree ("post_id","fetched_at");--> statement-breakpoint
CREATE INDEX "post_analytics_due" ON "post_analytics" USING btree ("next_refresh_at");--> statement-breakpoint
CREATE INDEX "post_analytics_group" ON "post_analytics" USING btree ("workspace_id","group_key");--> statement-breakpoint
CREATE INDEX "post_analytics_published" ON "post_analytics" USING btree ("workspace_id","published_at");--> statement-breakpoint
INSERT INTO "post_analytics" ("post_id", "workspace_id", "group_key", "channel", "destination_id", "published_at", "state", "metrics", "offered", "next_refresh_at") SELECT "id", "workspace_id", "group_key", "channel", "destination_id", "published_at", 'pending', '{"views":0,"impressions":0,"comments":0,"reactions":0,"shares":0,"saves":0,"link_clicks":0}', '[]', "published_at" + 600000 FROM "posts" WHERE "state" = 'published' AND "published_at" IS NOT NULL;
