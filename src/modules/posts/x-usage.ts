import type { Config } from "../../config.ts";
import type { Db } from "../../db/open.ts";
import { ProblemError, type FieldError } from "../../core/problem.ts";
import { NETWORK_RULES } from "../../providers/registry.ts";
import { addXUsageReservations } from "./repo-x-usage.ts";

/**
 * The network whose posts the contract counts per workspace and month (`x_usage`), and its limit:
 * read from the registry (the network whose rules carry a `monthlyPostLimit`), not named here.
 */
const METERED = NETWORK_RULES.find((n) => n.monthlyPostLimit !== null)!;

/** The contract's posts per workspace and calendar month on the metered network (`x_usage.limit`: 50). */
export const X_MONTHLY_LIMIT_DEFAULT = METERED.monthlyPostLimit!;

/** The setting by which the operator changes that limit (`HERALD_X_MONTHLY_POST_LIMIT`). */
export const X_MONTHLY_LIMIT_SETTING = `HERALD_${METERED.channel.toUpperCase()}_MONTHLY_POST_LIMIT`;

/**
 * Posts a workspace may publish per calendar month on the metered network on this server: the
 * operator's setting, else the contract's 50. Reported as `x_usage.limit` and enforced on reservation.
 */
export function xMonthlyLimit(config: Pick<Config, "engine">): number {
  return config.engine.monthlyPostLimitOverrides[METERED.channel] ?? X_MONTHLY_LIMIT_DEFAULT;
}

/** Whether posts on a channel count toward the monthly usage (`x_usage`). */
export function isMetered(channel: string): boolean {
  return channel === METERED.channel;
}

/** `YYYY-MM` (UTC) of an instant. */
export function usageMonth(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/**
 * Reserves `count` X posts for a month; 402 when that would pass `limit` (`xMonthlyLimit`). Call in the
 * write's transaction.
 */
export async function reserveXUsage(
  db: Db,
  reservation: { workspaceId: string; month: string; count: number; limit: number },
  errors: FieldError[],
): Promise<void> {
  const { workspaceId, month, count, limit } = reservation;
  // Reserved first, checked after: the row stays locked until the transaction ends, and a refusal
  // rolls the reservation back with it.
  const after = await addXUsageReservations(db, workspaceId, month, count);
  const current = { reserved: after.reserved - count, used: after.used };
  if (current.reserved + current.used + count > limit) {
    throw new ProblemError(
      "public_usage_limit_reached",
      `This would take the workspace past ${limit} ${METERED.displayName} posts in ${month} ` +
        `(${current.used} published, ${current.reserved} scheduled).`,
      { errors },
    );
  }
}
