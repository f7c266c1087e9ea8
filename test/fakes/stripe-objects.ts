// Stripe's objects and wire format for the Stripe fake (test/fakes/stripe.ts): the error shape, the form
// encoding the official client sends, prices and subscriptions as Stripe returns them.
import { json, token } from "./shared.ts";

export type Obj = Record<string, any>;

export const DAY = 86_400;

/** Stripe's error answer: `{error: {type, message, code?, param?}}` with a `Request-Id` header. */
export function stripeError(status: number, message: string, extra: Obj = {}): Response {
  return json({ error: { type: "invalid_request_error", message, ...extra } }, status, {
    "request-id": token("req_"),
  });
}

/** Decodes Stripe's form encoding: `a[b][0][c]=v` → `{a: {b: [{c: "v"}]}}`. */
export function decodeStripeForm(body: string): Obj {
  const out: Obj = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const parts = key.replace(/\]/g, "").split("[");
    let node: any = out;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      const nextIsIndex = !last && /^\d+$/.test(parts[i + 1]!);
      if (last) node[part] = value;
      else node = node[part] ??= nextIsIndex ? [] : {};
    });
  }
  return out;
}

/** The end of a billing period that starts at `start` (seconds). */
export function periodEnd(start: number, interval: string): number {
  return start + (interval === "year" ? 365 : 30) * DAY;
}

/** The two per-unit recurring prices the tests configure Herald with. */
export function defaultPrices(): Map<string, Obj> {
  const prices = new Map<string, Obj>();
  for (const [id, interval, amount] of [
    ["price_herald_monthly", "month", 1200],
    ["price_herald_yearly", "year", 12000],
  ] as const) {
    prices.set(id, {
      id,
      object: "price",
      active: true,
      currency: "eur",
      unit_amount: amount,
      type: "recurring",
      recurring: { interval, interval_count: 1, usage_type: "licensed" },
      livemode: false,
    });
  }
  return prices;
}

/**
 * A subscription as Stripe creates it when a checkout completes: one item (price × quantity) carrying the
 * billing period (API versions since 2025-03-31), `trialing` until `trialEnd` when the checkout had one.
 */
export function newSubscription(input: {
  customer: string;
  price: Obj;
  quantity: number;
  trialEnd: number | null;
  metadata: Obj;
  now: number;
}): Obj {
  const { price, quantity, trialEnd, now } = input;
  const id = `sub_${token("").slice(0, 24)}`;
  const subscription = {
    id,
    object: "subscription",
    customer: input.customer,
    status: trialEnd ? "trialing" : "active",
    currency: price.currency,
    created: now,
    start_date: now,
    trial_start: trialEnd ? now : null,
    trial_end: trialEnd,
    cancel_at: null,
    cancel_at_period_end: false,
    canceled_at: null,
    ended_at: null,
    collection_method: "charge_automatically",
    metadata: input.metadata,
    latest_invoice: null,
    livemode: false,
    items: {
      object: "list",
      data: [
        {
          id: `si_${token("").slice(0, 14)}`,
          object: "subscription_item",
          created: now,
          price,
          quantity,
          subscription: id,
          current_period_start: now,
          current_period_end: trialEnd ?? periodEnd(now, price.recurring.interval),
          metadata: {},
        },
      ],
      has_more: false,
      url: `/v1/subscription_items?subscription=${id}`,
    },
  };
  return subscription;
}

/** A session without the fake's private fields. */
export function publicOf(session: Obj): Obj {
  const { _line, _subscription_data, ...rest } = session;
  return structuredClone(rest);
}
