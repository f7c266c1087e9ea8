import type { Job } from "../../jobs/scheduler.ts";
import { dispatchWebhookEvents } from "./dispatcher.ts";
import { sendDueDeliveries } from "./sender.ts";
import { wakeWebhooks } from "./wake.ts";

/**
 * The webhook jobs: every second `webhook-dispatch` fans new outbox events out into deliveries and
 * `webhook-deliveries` sends what is due (fanning out as well, so a new event rarely waits a second
 * tick; a wake from this process starts it at once, see wake.ts). The delivery log and the outbox
 * are pruned by the retention jobs (src/jobs/retention.ts).
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
  ];
}
