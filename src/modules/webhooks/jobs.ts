import { inTransaction } from "../../db/transaction.ts";
import type { Job } from "../../jobs/scheduler.ts";
import { dispatchWebhookEvents } from "./dispatcher.ts";
import { deleteDispatchedEvents, deleteFinishedDeliveries } from "./repo.ts";
import { sendDueDeliveries } from "./sender.ts";
import { wakeWebhooks } from "./wake.ts";

/** How long the delivery log keeps finished deliveries. */
export const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * The webhook jobs: every second `webhook-dispatch` fans new outbox events out into deliveries and
 * `webhook-deliveries` sends what is due (fanning out as well, so a new event rarely waits a second
 * tick; a wake from this process starts it at once, see wake.ts); hourly `webhook-log-cleanup` drops
 * finished deliveries older than 30 days, and daily `events-outbox-cleanup` drops fanned-out events
 * older than 30 days.
 */
export function webhookJobs(): Job[] {
  return [
    // Deliveries it fans out wake the sender, which may be running already and not see them otherwise.
    {
      id: "webhook-dispatch",
      pattern: "* * * * * *",
      run: (h) => dispatchWebhookEvents(h, () => wakeWebhooks(h.db)),
    },
    {
      id: "webhook-deliveries",
      pattern: "* * * * * *",
      run: (h, stopping) => sendDueDeliveries(h, stopping),
    },
    {
      id: "webhook-log-cleanup",
      pattern: "0 23 * * * *",
      run: (h) =>
        inTransaction(h.db, (tx) => deleteFinishedDeliveries(tx, h.clock.now() - DELIVERY_LOG_RETENTION_MS)),
    },
    // Events stay 30 days after they were fanned out (deliveries carry their own copy of the body).
    {
      id: "events-outbox-cleanup",
      pattern: "0 41 3 * * *",
      run: (h) =>
        inTransaction(h.db, (tx) => deleteDispatchedEvents(tx, h.clock.now() - DELIVERY_LOG_RETENTION_MS)),
    },
  ];
}
