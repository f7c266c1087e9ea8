import { and, desc, eq, inArray, isNotNull, isNull } from "drizzle-orm";
import { firstRow } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import { countAll } from "../../db/dialect.ts";

/** An account's stored subscription. */
export type SubscriptionRow = Tables["billingSubscriptions"]["$inferSelect"];
/** A workspace taken out of its account's subscription. */
export type CancellationRow = Tables["billingWorkspaceCancellations"]["$inferSelect"];
/** What Stripe reports of a subscription, in the row's terms. */
export type SubscriptionFields = Pick<
  SubscriptionRow,
  | "status"
  | "interval"
  | "currency"
  | "workspaceQuantity"
  | "trialEndsAt"
  | "currentPeriodEndsAt"
  | "cancelAt"
  | "cancelAtPeriodEnd"
>;

/** The one row of `billing_installation`. */
const INSTALLATION = "installation";

/**
 * When the account's trial starts — its creation, or the installation's first start in a processor
 * mode when that came later — and its subscription row (absent before the first checkout).
 */
export async function findBillingState(
  db: Db,
  accountId: string,
): Promise<{ trialStartsAt: number; row: SubscriptionRow | null } | undefined> {
  const { accounts, billingInstallation, billingSubscriptions } = tablesOf(db);
  const found = await db
    .select({
      accountCreatedAt: accounts.createdAt,
      processorSince: billingInstallation.processorSince,
      row: billingSubscriptions,
    })
    .from(accounts)
    .leftJoin(billingSubscriptions, eq(billingSubscriptions.accountId, accounts.id))
    .leftJoin(billingInstallation, eq(billingInstallation.id, INSTALLATION))
    .where(eq(accounts.id, accountId))
    .then(firstRow);
  return (
    found && {
      trialStartsAt: Math.max(found.accountCreatedAt, found.processorSince ?? 0),
      row: found.row ?? null,
    }
  );
}

/**
 * Records the installation's first start in a processor mode (`at`); a later start changes nothing.
 * An installation that billed before this was recorded (it has subscription rows) keeps counting
 * trials from the accounts' creation: 0.
 */
export async function markProcessorSince(db: Db, at: number): Promise<void> {
  const { billingInstallation, billingSubscriptions } = tablesOf(db);
  const known = await db.select({ id: billingInstallation.id }).from(billingInstallation).then(firstRow);
  if (known) return;
  const billedBefore = await db
    .select({ accountId: billingSubscriptions.accountId })
    .from(billingSubscriptions)
    .limit(1)
    .then(firstRow);
  await db
    .insert(billingInstallation)
    .values({ id: INSTALLATION, processorSince: billedBefore ? 0 : at })
    .onConflictDoNothing();
}

/** The subscription row of the account that owns a Stripe customer. */
export async function findSubscriptionByCustomer(
  db: Db,
  customerId: string,
): Promise<SubscriptionRow | undefined> {
  const { billingSubscriptions } = tablesOf(db);
  return db
    .select()
    .from(billingSubscriptions)
    .where(eq(billingSubscriptions.stripeCustomerId, customerId))
    .then(firstRow);
}

/** Creates an account's row when it has none (at its first checkout or first Stripe event). */
export async function ensureSubscriptionRow(
  db: Db,
  accountId: string,
  now: number,
): Promise<SubscriptionRow> {
  const { billingSubscriptions } = tablesOf(db);
  await db
    .insert(billingSubscriptions)
    .values({
      accountId,
      status: "pending_checkout",
      workspaceQuantity: 0,
      cancelAtPeriodEnd: false,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing();
  return (await db
    .select()
    .from(billingSubscriptions)
    .where(eq(billingSubscriptions.accountId, accountId))
    .then(firstRow))!;
}

/** Changes an account's row. */
export async function updateSubscriptionRow(
  db: Db,
  accountId: string,
  changes: Partial<Omit<SubscriptionRow, "accountId" | "createdAt">>,
): Promise<void> {
  const { billingSubscriptions } = tablesOf(db);
  await db.update(billingSubscriptions).set(changes).where(eq(billingSubscriptions.accountId, accountId));
}

/** Whether a Stripe event id was received before. */
export async function stripeEventSeen(db: Db, id: string): Promise<boolean> {
  const { billingStripeEvents } = tablesOf(db);
  const row = await db
    .select({ id: billingStripeEvents.id })
    .from(billingStripeEvents)
    .where(eq(billingStripeEvents.id, id))
    .then(firstRow);
  return row !== undefined;
}

/** Records a received Stripe event and what became of it. */
export async function insertStripeEvent(
  db: Db,
  row: Tables["billingStripeEvents"]["$inferInsert"],
): Promise<void> {
  const { billingStripeEvents } = tablesOf(db);
  await db.insert(billingStripeEvents).values(row);
}

/** Whether an account exists. */
export async function accountExists(db: Db, accountId: string): Promise<boolean> {
  const { accounts } = tablesOf(db);
  const row = await db
    .select({ id: accounts.id })
    .from(accounts)
    .where(eq(accounts.id, accountId))
    .then(firstRow);
  return row !== undefined;
}

/** A workspace's cancellation, if its share of the subscription was cancelled. */
export async function findCancellation(db: Db, workspaceId: string): Promise<CancellationRow | undefined> {
  const { billingWorkspaceCancellations } = tablesOf(db);
  return db
    .select()
    .from(billingWorkspaceCancellations)
    .where(eq(billingWorkspaceCancellations.workspaceId, workspaceId))
    .then(firstRow);
}

/** The account's cancelled workspaces, newest cancellation first. */
export async function listCancellations(db: Db, accountId: string): Promise<CancellationRow[]> {
  const { billingWorkspaceCancellations } = tablesOf(db);
  return db
    .select()
    .from(billingWorkspaceCancellations)
    .where(eq(billingWorkspaceCancellations.accountId, accountId))
    .orderBy(desc(billingWorkspaceCancellations.canceledAt), desc(billingWorkspaceCancellations.workspaceId));
}

/** Takes a workspace out of the subscription. */
export async function insertCancellation(db: Db, row: CancellationRow): Promise<void> {
  const { billingWorkspaceCancellations } = tablesOf(db);
  await db.insert(billingWorkspaceCancellations).values(row);
}

/** Puts workspaces back into the subscription. */
export async function deleteCancellations(db: Db, workspaceIds: string[]): Promise<void> {
  const { billingWorkspaceCancellations } = tablesOf(db);
  if (workspaceIds.length === 0) return;
  await db
    .delete(billingWorkspaceCancellations)
    .where(inArray(billingWorkspaceCancellations.workspaceId, workspaceIds));
}

/** How many workspaces an account has. */
export async function countWorkspaces(db: Db, accountId: string): Promise<number> {
  const { workspaces } = tablesOf(db);
  const row = await db
    .select({ n: countAll() })
    .from(workspaces)
    .where(eq(workspaces.accountId, accountId))
    .then(firstRow);
  return row?.n ?? 0;
}

/** The account's workspaces (limited to `onlyIds` when given), oldest first, with a month's X usage. */
export async function listWorkspaceUsage(
  db: Db,
  accountId: string,
  onlyIds: string[] | null,
  month: string,
): Promise<{ workspaceId: string; used: number | null; reserved: number | null }[]> {
  const { workspaces, xUsage } = tablesOf(db);
  const conditions = [eq(workspaces.accountId, accountId)];
  if (onlyIds) conditions.push(inArray(workspaces.id, onlyIds.length > 0 ? onlyIds : [""]));
  return db
    .select({ workspaceId: workspaces.id, used: xUsage.used, reserved: xUsage.reserved })
    .from(workspaces)
    .leftJoin(xUsage, and(eq(xUsage.workspaceId, workspaces.id), eq(xUsage.month, month)))
    .where(and(...conditions))
    .orderBy(workspaces.id);
}

/**
 * Subscriptions that run at Stripe and are not set to end (trialing, active or past due): the ones
 * whose workspace quantity follows the account's workspaces.
 */
export async function listRunningSubscriptions(db: Db): Promise<SubscriptionRow[]> {
  const { billingSubscriptions } = tablesOf(db);
  return db
    .select()
    .from(billingSubscriptions)
    .where(
      and(
        inArray(billingSubscriptions.status, ["trialing", "active", "past_due"]),
        isNotNull(billingSubscriptions.stripeSubscriptionId),
        eq(billingSubscriptions.cancelAtPeriodEnd, false),
        isNull(billingSubscriptions.cancelAt),
      ),
    )
    .orderBy(billingSubscriptions.accountId);
}
