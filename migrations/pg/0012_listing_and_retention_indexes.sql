CREATE INDEX "analytics_refreshes_requested" ON "analytics_refreshes" USING btree ("requested_at");--> statement-breakpoint
CREATE INDEX "analytics_snapshots_fetched" ON "analytics_snapshots" USING btree ("fetched_at");--> statement-breakpoint
CREATE INDEX "audit_records_created" ON "audit_records" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "chat_notifications_created" ON "chat_notifications" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "events_outbox_dispatched" ON "events_outbox" USING btree ("dispatched_at");--> statement-breakpoint
CREATE INDEX "posts_workspace_state" ON "posts" USING btree ("workspace_id","state","id");--> statement-breakpoint
CREATE INDEX "posts_workspace_channel" ON "posts" USING btree ("workspace_id","channel","id");--> statement-breakpoint
CREATE INDEX "posts_workspace_group" ON "posts" USING btree ("workspace_id","group_key","id");--> statement-breakpoint
CREATE INDEX "posts_workspace_destination" ON "posts" USING btree ("workspace_id","destination_id","id");--> statement-breakpoint
CREATE INDEX "posts_workspace_created" ON "posts" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "posts_workspace_scheduled" ON "posts" USING btree ("workspace_id","scheduled_at","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_created" ON "webhook_deliveries" USING btree ("created_at");