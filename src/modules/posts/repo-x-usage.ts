// The monthly X usage rows (`x_usage`): reservations of scheduled posts and uses of published ones.
// The limit they are checked against is x-usage.ts's.
import { and, eq, sql } from "drizzle-orm";
import { decrementedToZero } from "../../db/dialect.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf } from "../../db/tables.ts";

/** A workspace's usage for a month. */
export async function findXUsage(
  db: Db,
  workspaceId: string,
  month: string,
): Promise<{ reserved: number; used: number }> {
  const { xUsage } = tablesOf(db);
  const [row] = await db
    .select({ reserved: xUsage.reserved, used: xUsage.used })
    .from(xUsage)
    .where(and(eq(xUsage.workspaceId, workspaceId), eq(xUsage.month, month)));
  return row ?? { reserved: 0, used: 0 };
}

/**
 * Adds `count` to a month's reservations (the row is made on the first) and answers the month's
 * usage with them. One statement that locks the month's row: concurrent reservations of a workspace
 * queue on it and each sees the others' committed counts, at any isolation level.
 */
export async function addXUsageReservations(
  db: Db,
  workspaceId: string,
  month: string,
  count: number,
): Promise<{ reserved: number; used: number }> {
  const { xUsage } = tablesOf(db);
  const [row] = await db
    .insert(xUsage)
    .values({ workspaceId, month, reserved: count, used: 0 })
    .onConflictDoUpdate({
      target: [xUsage.workspaceId, xUsage.month],
      set: { reserved: sql`${xUsage.reserved} + ${count}` },
    })
    .returning({ reserved: xUsage.reserved, used: xUsage.used });
  return row!;
}

/** Gives back a reservation (cancelled, failed, rescheduled away). */
export async function releaseXUsage(db: Db, workspaceId: string, month: string): Promise<void> {
  const { xUsage } = tablesOf(db);
  await db
    .update(xUsage)
    .set({ reserved: decrementedToZero(xUsage.reserved) })
    .where(and(eq(xUsage.workspaceId, workspaceId), eq(xUsage.month, month)));
}

/** Turns a reservation into a use when the post is published. */
export async function consumeXUsage(db: Db, workspaceId: string, month: string): Promise<void> {
  const { xUsage } = tablesOf(db);
  await db
    .update(xUsage)
    .set({ reserved: decrementedToZero(xUsage.reserved), used: sql`${xUsage.used} + 1` })
    .where(and(eq(xUsage.workspaceId, workspaceId), eq(xUsage.month, month)));
}
