-- Before the unique index: live posts that share a queue slot (taken by racing requests before
-- this version) keep their time, but only the oldest keeps the slot, so the index can be built.
UPDATE `posts` SET `queue_window_id` = NULL, `queue_local_date` = NULL
WHERE `state` IN ('preparing', 'scheduled', 'ready', 'processing', 'awaiting-provider', 'needs-attention', 'missed')
  AND `queue_window_id` IS NOT NULL AND `queue_local_date` IS NOT NULL
  AND EXISTS (
    SELECT 1 FROM `posts` AS `older`
    WHERE `older`.`destination_id` = `posts`.`destination_id`
      AND `older`.`queue_window_id` = `posts`.`queue_window_id`
      AND `older`.`queue_local_date` = `posts`.`queue_local_date`
      AND `older`.`state` IN ('preparing', 'scheduled', 'ready', 'processing', 'awaiting-provider', 'needs-attention', 'missed')
      AND `older`.`rowid` < `posts`.`rowid`
  );--> statement-breakpoint
CREATE UNIQUE INDEX `posts_one_live_post_per_queue_slot` ON `posts` (`destination_id`,`queue_window_id`,`queue_local_date`) WHERE state IN ('preparing', 'scheduled', 'ready', 'processing', 'awaiting-provider', 'needs-attention', 'missed') AND queue_window_id IS NOT NULL AND queue_local_date IS NOT NULL;