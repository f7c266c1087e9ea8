import { auditActorOf, type Actor } from "../../core/actor.ts";
import { invalid, ProblemError } from "../../core/problem.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { iso } from "../../lib/clock.ts";
import { recordAudit } from "../audit/repo.ts";
import type { WorkspaceRow } from "../workspaces/repo.ts";
import { workspacesInSubscription } from "./quantity.ts";
import { findCancellation, insertCancellation } from "./repo.ts";
import { billingStateOf, getBilling, requireProcessor } from "./service.ts";
import { callStripe } from "./stripe.ts";
import { isEnded, storeOwnChange, subscriptionFields } from "./subscription.ts";

/**
 * POST /workspaces/{id}/subscription/cancel: takes one workspace out of the account's subscription.
 * The subscription is billed per workspace, so its quantity at Stripe goes down by one without
 * proration (the next invoice is smaller) and the workspace keeps working until the end of the period
 * already paid; after that it keeps its data and answers reads but creates no work (402). Cancelling
 * the last workspace still in the subscription cancels the subscription at the period's end instead.
 * Raising the quantity again (billing portal) puts the most recently cancelled workspaces back.
 */
export async function cancelWorkspaceSubscription(args: {
  h: Herald;
  actor: Actor;
  workspace: WorkspaceRow;
  confirmation: string;
}) {
  const { h, actor, workspace } = args;
  const expected = `CANCEL ${workspace.name}`;
  if (args.confirmation !== expected)
    throw invalid(
      "/confirmation",
      `must be exactly ${JSON.stringify(expected)} (the word CANCEL and the workspace name)`,
    );
  requireProcessor(h);
  const { row } = await billingStateOf(h, actor.accountId);
  if (!row?.stripeSubscriptionId || isEnded(row.status) || row.status === "pending_checkout")
    throw new ProblemError(
      "public_conflict",
      "The account has no running subscription to cancel a workspace from.",
    );
  if (row.cancelAtPeriodEnd || row.cancelAt !== null)
    throw new ProblemError(
      "public_conflict",
      `The whole subscription already ends at ${iso(row.cancelAt ?? row.currentPeriodEndsAt)}.`,
    );
  if (await findCancellation(h.db, workspace.id))
    throw new ProblemError("public_conflict", "This workspace's subscription is already cancelled.");
  const subscriptionId = row.stripeSubscriptionId;
  const subscription = await callStripe(h, "read the subscription", (stripe) =>
    stripe.subscriptions.retrieve(subscriptionId),
  );
  const item = subscription.items.data[0];
  if (!item)
    throw new ProblemError("public_provider_error", "The Stripe subscription has no item to change.");
  const inSubscription = await workspacesInSubscription(h.db, actor.accountId);
  const quantity = Math.min(item.quantity ?? 0, inSubscription) - 1;
  const updated = await callStripe(h, "lower the subscription's workspace quantity", (stripe) =>
    quantity >= 1
      ? stripe.subscriptions.update(subscriptionId, {
          items: [{ id: item.id, quantity }],
          proration_behavior: "none",
        })
      : stripe.subscriptions.update(subscriptionId, { cancel_at_period_end: true }),
  );
  const now = h.clock.now();
  await inTransaction(h.db, async (tx) => {
    const endsAt = subscriptionFields(updated).currentPeriodEndsAt ?? now;
    await insertCancellation(tx, {
      workspaceId: workspace.id,
      accountId: actor.accountId,
      canceledAt: now,
      endsAt,
    });
    await storeOwnChange(tx, actor.accountId, updated, now);
    await recordAudit(
      tx,
      auditActorOf(actor),
      {
        action: "billing.workspace_subscription_cancelled",
        workspaceId: workspace.id,
        targetType: "workspace",
        targetId: workspace.id,
      },
      now,
    );
  });
  return getBilling({ h, actor });
}
