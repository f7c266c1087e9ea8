import { inTransaction } from "../db/transaction.ts";
import { cleanupAssets } from "../modules/assets/cleanup.ts";
import { deliverDueMail } from "../modules/mail/outbox.ts";
import { expireConnections } from "../modules/destinations/repo.ts";
import type { PublishingEngine } from "../modules/publishing/engine.ts";
import { renewExpiringCredentials } from "../modules/publishing/refresh.ts";
import { refreshDueAnalytics } from "../modules/analytics/refresh.ts";
import { webhookJobs } from "../modules/webhooks/jobs.ts";
import { chatJobs } from "../modules/chat/jobs.ts";
import { raiseDueQuantities } from "../modules/billing/quantity.ts";
import { deleteUnconfirmedAccounts } from "../modules/signup/cleanup.ts";
import { retentionJobs } from "./retention.ts";
import type { Job } from "./scheduler.ts";

/** Every recurring job of the server; `engine` is this process's publishing engine. */
export function serverJobs(engine: PublishingEngine): Job[] {
  return [
    // Every second, and between ticks at the time a post comes due: it starts within milliseconds.
    {
      id: "publishing-engine",
      pattern: "* * * * * *",
      run: async () => {
        await engine.tick();
        await engine.wakeUntilNextTick(1000);
      },
    },
    { id: "mail-outbox", pattern: "*/5 * * * * *", run: (h) => deliverDueMail(h) },
    // Writes go through a transaction: outside one the handle is read-only on SQLite.
    {
      id: "connection-expiry",
      pattern: "30 * * * * *",
      run: (h) => inTransaction(h.db, (tx) => expireConnections(tx, h.clock.now())),
    },
    { id: "assets-cleanup", pattern: "0 23 * * * *", run: (h) => cleanupAssets(h) },
    // Accounts whose address stayed unconfirmed for 7 days go, with everything of them (docs/signup.md).
    { id: "unconfirmed-accounts", pattern: "0 41 * * * *", run: (h) => deleteUnconfirmedAccounts(h) },
    // Published posts' numbers, as their cadence comes due (and within seconds of an on-demand refresh).
    {
      id: "analytics-refresh",
      pattern: "*/15 * * * * *",
      run: (h) => refreshDueAnalytics(h, engine.owner),
    },
    // Tokens that die unused (Threads, LinkedIn) are renewed days ahead; every 15 minutes is plenty.
    {
      id: "credentials-renewal",
      pattern: "0 7,22,37,52 * * * *",
      run: (h) => renewExpiringCredentials(h, engine.owner),
    },
    // A workspace created after checkout joins the subscription within half a minute (docs/billing.md).
    { id: "billing-quantity", pattern: "15,45 * * * * *", run: (h) => raiseDueQuantities(h) },
    ...webhookJobs(),
    ...chatJobs(),
    // Tables that grow with every action keep what their retention says (docs/operations.md#retention).
    ...retentionJobs(),
  ];
}
