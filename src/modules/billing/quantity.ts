import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { recordAudit } from "../audit/repo.ts";
import {
  countWorkspaces,
  listCancellations,
  listRunningSubscriptions,
  type SubscriptionRow,
} from "./repo.ts";
import { callStripe } from "./stripe.ts";
import { isEnded, storeOwnChange, subscriptionFields } from "./subscription.ts";

/** The workspaces an account pays for: all of them but those cancelled out of the subscription. */
export async function workspacesInSubscription(db: Db, accountId: string): Promise<number> {
  return (await countWorkspaces(db, accountId)) - (await listCancellations(db, accountId)).length;
}

/**
 * Raises a running subscription's quantity at Stripe to the workspaces in it, with Stripe's proration
 * (the new workspace is charged for what is left of the period). Checkout bills one unit per
 * workspace; a workspace created later joins the subscription here. The quantity is only raised:
 * it goes down by cancelling a workspace (cancel.ts), so a quantity lowered in Stripe's portal below
 * the workspaces in use is raised back. Returns the quantity set, or null when nothing changed.
 */
export async function raiseWorkspaceQuantity(h: Herald, row: SubscriptionRow): Promise<number | null> {
  const subscriptionId = row.stripeSubscriptionId;
  if (!subscriptionId) return null;
  let wanted = await workspacesInSubscription(h.db, row.accountId);
  if (row.workspaceQuantity >= wanted) return null;
  const subscription = await callStripe(h, "read the subscription", (stripe) =>
    stripe.subscriptions.retrieve(subscriptionId),
  );
  const item = subscription.items.data[0];
  // Counted again after the read: a workspace cancelled meanwhile is not put back into the quantity.
  wanted = Math.min(wanted, await workspacesInSubscription(h.db, row.accountId));
  const fields = subscriptionFields(subscription);
  const settled = !item || isEnded(fields.status) || fields.cancelAtPeriodEnd || fields.cancelAt !== null;
  const from = item?.quantity ?? 0;
  const updated =
    settled || from >= wanted
      ? subscription
      : await callStripe(h, "raise the subscription's workspace quantity", (stripe) =>
          stripe.subscriptions.update(
            subscriptionId,
            { items: [{ id: item.id, quantity: wanted }], proration_behavior: "create_prorations" },
            // Processes running this job side by side (same 30-second slot) ask for the same change once;
            // the slot keeps the same numbers on another day (raise, cancel, raise) a new change.
            { idempotencyKey: `herald-quantity-${subscriptionId}-${from}-${wanted}-${quantitySlot(h)}` },
          ),
        );
  const now = h.clock.now();
  const raised = await inTransaction(h.db, async (tx) => {
    const before = await storeOwnChange(tx, row.accountId, updated, now);
    // Another process may have stored this raise already: it is recorded once.
    const raisedHere = before !== null && updated !== subscription && before.workspaceQuantity < wanted;
    if (raisedHere)
      await recordAudit(
        tx,
        { accountId: row.accountId, credentialId: null, requestId: null },
        { action: "billing.workspace_quantity_raised", targetType: "subscription", targetId: subscriptionId },
        now,
      );
    return raisedHere;
  });
  if (raised) h.logger.info("subscription quantity raised", { account_id: row.accountId, from, to: wanted });
  return raised ? wanted : null;
}

/** The job's 30-second slot (it runs at :15 and :45, mid-slot, so processes' clocks may differ a little). */
function quantitySlot(h: Herald): number {
  return Math.floor(h.clock.now() / 30_000);
}

/**
 * `billing-quantity`: every running subscription whose stored quantity is below its account's
 * workspaces is raised. One account's Stripe failure is logged and tried again on the next run.
 */
export async function raiseDueQuantities(h: Herald): Promise<void> {
  if (h.config.billingMode === "disabled") return;
  for (const row of await listRunningSubscriptions(h.db)) {
    try {
      await raiseWorkspaceQuantity(h, row);
    } catch (error) {
      h.logger.warn("subscription quantity not raised", {
        account_id: row.accountId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
