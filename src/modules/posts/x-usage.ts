import type { Db } from "../../db/open.ts";
import { ProblemError, type FieldError } from "../../core/problem.ts";
import { NETWORK_RULES } from "../../providers/registry.ts";
import { addXUsageReservations, findXUsage } from "./repo-x-usage.ts";

/**
 * The network whose posts the contract counts per workspace and month (`x_usage`), and its limit:
 * read from the registry (the network whose rules carry a `monthlyPostLimit`), not named here.
 */
const METERED = NETWORK_RULES.find((n) => n.monthlyPostLimit !== null)!;

/** Posts a workspace may publish per calendar month on the metered network (`x_usage.limit`). */
export const X_MONTHLY_LIMIT = METERED.monthlyPostLimit!;

/** Whether posts on a channel count toward the monthly usage (`x_usage`). */
export function isMetered(channel: string): boolean {
  return channel === METERED.channel;
}

/** `YYYY-MM` (UTC) of an instant. */
export function usageMonth(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/**
 * Reserves `count` X posts for a month; 402 when that would pass the limit. Call in the write's
 * transaction.
 */
export async function reserveXUsage(
  db: Db,
  workspaceId: string,
  month: string,
  count: number,
  errors: FieldError[],
): Promise<void> {
  const current = await findXUsage(db, workspaceId, month);
  if (current.reserved + current.used + count > X_MONTHLY_LIMIT) {
    throw new ProblemError(
      "public_usage_limit_reached",
      `This would take the workspace past ${X_MONTHLY_LIMIT} ${METERED.displayName} posts in ${month} ` +
        `(${current.used} published, ${current.reserved} scheduled).`,
      { errors },
    );
  }
  await addXUsageReservations(db, workspaceId, month, count);
}
