ALTER TABLE "posts" ADD COLUMN "recycle" text;--> statement-breakpoint
ALTER TABLE "posts" ADD COLUMN "recycled_from" text;--> statement-breakpoint
ALTER TABLE "posts" ADD COLUMN "recycle_number" bigint;--> statement-breakpoint
CREATE UNIQUE INDEX "posts_one_copy_per_recycle_number" ON "posts" USING btree ("recycled_from","recycle_number");