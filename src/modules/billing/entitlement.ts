import type { Actor } from "../../core/actor.ts";
import { ProblemError } from "../../core/problem.ts";
import type { Herald } from "../../herald.ts";
import { iso } from "../../lib/clock.ts";
import { findBillingState, findCancellation, type SubscriptionRow } from "./repo.ts";
import { createsWork } from "./work.ts";

/** What the account's subscription allows (the contract's `entitlement`). */
export type Entitlement = "trialing" | "active" | "grace" | "read_only";

/** The response header that warns of a subscription in `grace` or `read_only` (docs/billing.md). */
export const BILLING_WARNING_HEADER = "herald-billing-warning";

/** An account's entitlement now, with the times that explain it. */
export interface EntitlementState {
  entitlement: Entitlement;
  /**
   * End of Herald's own trial while no Stripe subscription runs: from the account's creation, or from
   * the installation's first start in a processor mode when the account is older.
   */
  localTrialEndsAt: number | null;
  /** When `grace` turns `read_only` (past_due only). */
  graceEndsAt: number | null;
}

/**
 * The entitlement of an account: `active` with billing disabled; before a Stripe subscription exists
 * (pending checkout, or a first payment still `incomplete`) `trialing` within the trial from
 * `trialStartsAt` (repo.ts findBillingState) and `read_only` after it; then Stripe's status: trialing, active, past_due
 * (`grace` for the grace period from when it became past due, then `read_only`), canceled and unpaid
 * `read_only`.
 */
export function entitlementOf(
  h: Herald,
  trialStartsAt: number,
  row: SubscriptionRow | null,
  now: number,
): EntitlementState {
  const { trialMs, gracePeriodMs } = h.config.billing;
  const localTrialEndsAt = trialMs > 0 ? trialStartsAt + trialMs : null;
  const state = (entitlement: Entitlement, graceEndsAt: number | null = null): EntitlementState => ({
    entitlement,
    localTrialEndsAt,
    graceEndsAt,
  });
  if (h.config.billingMode === "disabled") return state("active");
  const status = row?.status ?? "pending_checkout";
  switch (status) {
    case "pending_checkout":
    case "incomplete":
      return state(localTrialEndsAt !== null && now < localTrialEndsAt ? "trialing" : "read_only");
    case "trialing":
      return state("trialing");
    case "active":
      return state("active");
    case "past_due": {
      const graceEndsAt = (row!.pastDueSince ?? now) + gracePeriodMs;
      return state(now < graceEndsAt ? "grace" : "read_only", graceEndsAt);
    }
    default:
      return state("read_only");
  }
}

const WHAT_TO_DO =
  "Reads, exports, cancellations and deletions still work. To create work again, an owner subscribes " +
  "or pays: POST /v1/billing/checkout-sessions (or /v1/billing/portal-sessions to update the payment " +
  "method), or the dashboard's billing page.";

/**
 * The one billing rule of the rails, run for every authenticated request after its credential and
 * workspace are known: a request that creates work (`WRITE_OPERATIONS`) is refused with 402
 * `public_subscription_required` while the account is `read_only` or its workspace's share of the
 * subscription has ended. Returns the warning header's value for `grace` and `read_only`, else null.
 * With billing disabled it costs nothing.
 */
export async function checkEntitlement(
  h: Herald,
  input: { method: string; route: string; actor: Pick<Actor, "accountId">; workspaceId: string | null },
): Promise<string | null> {
  if (h.config.billingMode === "disabled") return null;
  const found = await findBillingState(h.db, input.actor.accountId);
  if (!found) return null;
  const now = h.clock.now();
  const state = entitlementOf(h, found.trialStartsAt, found.row, now);
  const work = createsWork(input.method, input.route);
  if (work && state.entitlement === "read_only") {
    throw new ProblemError(
      "public_subscription_required",
      `${readOnlyReason(found.row, state)} ${WHAT_TO_DO}`,
      {
        userAction: "upgrade_plan",
      },
    );
  }
  if (work && input.workspaceId !== null) {
    const cancelled = await findCancellation(h.db, input.workspaceId);
    if (cancelled && cancelled.endsAt <= now)
      throw new ProblemError(
        "public_subscription_required",
        `This workspace's share of the subscription was cancelled and ended at ${iso(cancelled.endsAt)}; ` +
          "it keeps its data and can be read, but creates no new work. Raise the subscription's workspace " +
          "quantity (POST /v1/billing/portal-sessions) to use it again.",
        { userAction: "upgrade_plan" },
      );
  }
  if (state.entitlement === "grace") return `grace; read_only_at=${iso(state.graceEndsAt)}`;
  if (state.entitlement === "read_only") return "read_only";
  return null;
}

function readOnlyReason(row: SubscriptionRow | null, state: EntitlementState): string {
  const status = row?.status ?? "pending_checkout";
  if (status === "pending_checkout" || status === "incomplete")
    return state.localTrialEndsAt === null
      ? "The account has no subscription yet, so it is read-only."
      : `The account's trial ended at ${iso(state.localTrialEndsAt)} without a subscription, ` +
          "so it is read-only.";
  if (status === "past_due")
    return (
      `A payment is past due and the grace period ended at ${iso(state.graceEndsAt)}, ` +
      "so the account is read-only."
    );
  return `The account's subscription is ${status}, so the account is read-only.`;
}
