import type { Actor } from "../../core/actor.ts";
import { ProblemError } from "../../core/problem.ts";
import type { Herald } from "../../herald.ts";
import { iso } from "../../lib/clock.ts";
import { usageMonth, xMonthlyLimit } from "../posts/x-usage.ts";
import { entitlementOf } from "./entitlement.ts";
import { findBillingState, listCancellations, listWorkspaceUsage, type SubscriptionRow } from "./repo.ts";

/** 409 for the processor operations while HERALD_BILLING_MODE is `disabled`. */
export function billingDisabled(): ProblemError {
  return new ProblemError(
    "public_conflict",
    "Billing is disabled on this server (HERALD_BILLING_MODE=disabled): every account is entitled to " +
      "everything and there is no subscription to manage.",
  );
}

/** 409 unless the server bills through Stripe. */
export function requireProcessor(h: Herald): void {
  if (h.config.billingMode === "disabled") throw billingDisabled();
}

/** The account's billing state: mode, entitlement, its times, and the stored row (null: none yet). */
export async function billingStateOf(h: Herald, accountId: string) {
  const found = await findBillingState(h.db, accountId);
  if (!found) throw new ProblemError("public_not_found", "No such account.");
  const now = h.clock.now();
  return { row: found.row, now, ...entitlementOf(h, found.trialStartsAt, found.row, now) };
}

/** The contract's `subscription`: null with billing disabled, `pending_checkout` before any checkout. */
function presentSubscription(row: SubscriptionRow | null, localTrialEndsAt: number | null) {
  const status = row?.status ?? "pending_checkout";
  const beforeStripe = status === "pending_checkout" || status === "incomplete";
  return {
    status,
    interval: row?.interval ?? null,
    currency: row?.currency ?? null,
    workspace_quantity: row?.workspaceQuantity ?? 0,
    trial_ends_at: iso(beforeStripe && row?.trialEndsAt == null ? localTrialEndsAt : row?.trialEndsAt),
    current_period_ends_at: iso(row?.currentPeriodEndsAt),
    cancel_at: iso(row?.cancelAt),
    cancel_at_period_end: row?.cancelAtPeriodEnd ?? false,
  };
}

/**
 * GET /billing: the contract's billing object, then Herald's extras: `grace_ends_at` (when `grace`
 * turns `read_only`) and `cancelled_workspaces` (workspaces taken out of the subscription). `x_usage`
 * covers the workspaces the credential can use, for the current calendar month (UTC).
 */
export async function getBilling(args: { h: Herald; actor: Actor }) {
  const { h, actor } = args;
  const state = await billingStateOf(h, actor.accountId);
  const onlyIds = actor.workspaceAccessMode === "selected" ? actor.workspaceIds : null;
  const usage = await listWorkspaceUsage(h.db, actor.accountId, onlyIds, usageMonth(state.now));
  const limit = xMonthlyLimit(h.config);
  const clamp = (n: number | null) => Math.min(limit, Math.max(0, n ?? 0));
  const disabled = h.config.billingMode === "disabled";
  const visible = new Set(usage.map((u) => u.workspaceId));
  const cancelled = disabled ? [] : await listCancellations(h.db, actor.accountId);
  return {
    object: "billing" as const,
    mode: h.config.billingMode,
    entitlement: state.entitlement,
    subscription: disabled ? null : presentSubscription(state.row, state.localTrialEndsAt),
    x_usage: usage.map((u) => ({
      workspace_id: u.workspaceId,
      used: clamp(u.used),
      reserved: clamp(u.reserved),
      limit,
    })),
    grace_ends_at: iso(state.entitlement === "grace" ? state.graceEndsAt : null),
    cancelled_workspaces: cancelled
      .filter((c) => visible.has(c.workspaceId))
      .map((c) => ({ workspace_id: c.workspaceId, cancelled_at: iso(c.canceledAt), ends_at: iso(c.endsAt) })),
  };
}
