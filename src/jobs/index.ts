import { deleteExpiredIdempotencyKeys } from "../modules/idempotency/repo.ts";
import { deliverDueMail } from "../modules/mail/outbox.ts";
import type { Job } from "./scheduler.ts";

/** Every recurring job of the server. */
export const jobs: Job[] = [
  { id: "mail-outbox", pattern: "*/5 * * * * *", run: (h) => deliverDueMail(h) },
  { id: "idempotency-cleanup", pattern: "0 17 * * * *", run: (h) => deleteExpiredIdempotencyKeys(h.db, h.clock.now()) },
];
