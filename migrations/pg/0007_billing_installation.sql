CREATE TABLE "billing_installation" (
	"id" text PRIMARY KEY NOT NULL,
	"processor_since" bigint NOT NULL
);
