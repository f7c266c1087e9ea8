CREATE TABLE "comment_receipts" (
	"id" text PRIMARY KEY NOT NULL,
	"post_id" text NOT NULL,
	"state" text NOT NULL,
	"provider_object_id" text,
	"url" text,
	"error" text,
	"attempts" bigint DEFAULT 0 NOT NULL,
	"next_attempt_at" bigint,
	"call_started_at" bigint,
	"lease_owner" text,
	"lease_expires_at" bigint,
	"published_at" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "comment_receipts" ADD CONSTRAINT "comment_receipts_post_id_posts_id_fk" FOREIGN KEY ("post_id") REFERENCES "public"."posts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "comment_receipts_post" ON "comment_receipts" USING btree ("post_id");--> statement-breakpoint
CREATE INDEX "comment_receipts_due" ON "comment_receipts" USING btree ("state","next_attempt_at");