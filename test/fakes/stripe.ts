// A faithful local fake of the part of Stripe's API Herald calls (docs.stripe.com/api), spoken to by the
// official `stripe` package pointed at it (host, port, protocol): form-encoded requests with bracketed
// keys (`line_items[0][price]`), `Authorization: Bearer sk_test_…`, `Idempotency-Key`, JSON answers, and
// Stripe's error shape `{error: {type, code, message, param}}` (401 for a bad key, 400 for a bad
// parameter, 404 for an unknown object in the path). Objects carry Stripe's fields as of API version
// 2025-03-31 and later: the billing period is on each subscription item.
//
// Endpoints: POST /v1/customers, POST /v1/checkout/sessions, POST /v1/billing_portal/sessions,
// GET and POST /v1/subscriptions/{id}. Test helpers play Stripe's side: completing a checkout, moving a
// subscription's status, and building events (signed by the tests with the package's own signer).
import { json, newControls, serveFake, token, type FailSpec, type FakeControls } from "./shared.ts";
import {
  DAY,
  decodeStripeForm,
  defaultPrices,
  newSubscription,
  periodEnd,
  publicOf,
  stripeError,
  type Obj,
} from "./stripe-objects.ts";

export { decodeStripeForm };

/** The running fake. */
export interface StripeFake extends FakeControls {
  origin: string;
  secretKey: string;
  prices: Map<string, Obj>;
  customers: Map<string, Obj>;
  sessions: Map<string, Obj>;
  subscriptions: Map<string, Obj>;
  /** The decoded body of every accepted POST /v1/subscriptions/{id}, in order. */
  subscriptionUpdates: { id: string; body: Obj }[];
  /** Plays the customer paying on the checkout page: the session completes and a subscription starts. */
  completeCheckout(sessionId: string): { session: Obj; subscription: Obj };
  /** Changes a subscription as Stripe's billing would (a failed renewal: `past_due`, then `canceled`). */
  setSubscription(id: string, changes: Obj): Obj;
  /** An event as Stripe sends it, wrapping a copy of `object` (`created` in seconds). */
  event(type: string, object: Obj, created?: number): Obj;
  stop(): Promise<void>;
}

export function startStripeFake(options: { now: () => number; secretKey?: string }): StripeFake {
  const failures: { remaining: number; spec: FailSpec }[] = [];
  const controls = newControls(failures);
  const seconds = () => Math.floor(options.now() / 1000);
  const fake = Object.assign(controls, {
    secretKey: options.secretKey ?? "sk_test_herald_fake",
    prices: defaultPrices(),
    customers: new Map<string, Obj>(),
    sessions: new Map<string, Obj>(),
    subscriptions: new Map<string, Obj>(),
    subscriptionUpdates: [] as { id: string; body: Obj }[],
  }) as StripeFake;
  const idempotent = new Map<string, string>();

  const createCustomer = (body: Obj): Response => {
    const id = token("cus_").slice(0, 18);
    const customer = {
      id,
      object: "customer",
      created: seconds(),
      email: body.email ?? null,
      metadata: body.metadata ?? {},
      livemode: false,
    };
    fake.customers.set(id, customer);
    return json(customer);
  };

  const createCheckout = (body: Obj): Response => {
    if (body.mode !== "subscription")
      return stripeError(400, "Only `subscription` mode is faked.", { param: "mode" });
    if (!body.success_url)
      return stripeError(400, "Missing required param: success_url.", {
        code: "parameter_missing",
        param: "success_url",
      });
    if (body.customer && !fake.customers.has(body.customer))
      return stripeError(400, `No such customer: '${body.customer}'`, {
        code: "resource_missing",
        param: "customer",
      });
    const line = body.line_items?.[0];
    const price = fake.prices.get(line?.price);
    if (!price)
      return stripeError(400, `No such price: '${line?.price}'`, {
        code: "resource_missing",
        param: "line_items[0][price]",
      });
    const quantity = Number(line.quantity ?? 1);
    if (!Number.isInteger(quantity) || quantity < 1)
      return stripeError(400, "Invalid positive integer", {
        code: "parameter_invalid_integer",
        param: "line_items[0][quantity]",
      });
    const trialEnd = body.subscription_data?.trial_end ? Number(body.subscription_data.trial_end) : null;
    if (trialEnd !== null && trialEnd < seconds() + 2 * DAY)
      return stripeError(400, "The `trial_end` date has to be at least 2 days in the future.", {
        param: "subscription_data[trial_end]",
      });
    const id = `cs_test_${token("").slice(0, 24)}`;
    const session = {
      id,
      object: "checkout.session",
      mode: "subscription",
      status: "open",
      payment_status: "unpaid",
      customer: body.customer ?? null,
      client_reference_id: body.client_reference_id ?? null,
      metadata: body.metadata ?? {},
      success_url: body.success_url,
      cancel_url: body.cancel_url ?? null,
      subscription: null,
      url: `https://checkout.stripe.com/c/pay/${id}`,
      expires_at: seconds() + DAY,
      created: seconds(),
      livemode: false,
      // Kept to start the subscription when the checkout completes.
      _line: { price, quantity },
      _subscription_data: { metadata: body.subscription_data?.metadata ?? {}, trial_end: trialEnd },
    };
    fake.sessions.set(id, session);
    return json(publicOf(session));
  };

  const createPortal = (body: Obj): Response => {
    if (!body.customer)
      return stripeError(400, "Missing required param: customer.", {
        code: "parameter_missing",
        param: "customer",
      });
    if (!fake.customers.has(body.customer))
      return stripeError(400, `No such customer: '${body.customer}'`, {
        code: "resource_missing",
        param: "customer",
      });
    const id = token("bps_").slice(0, 28);
    return json({
      id,
      object: "billing_portal.session",
      customer: body.customer,
      return_url: body.return_url ?? null,
      url: `https://billing.stripe.com/p/session/test_${id.slice(4)}`,
      created: seconds(),
      livemode: false,
    });
  };

  const updateSubscription = (sub: Obj, body: Obj): Response => {
    if (sub.status === "canceled")
      return stripeError(
        400,
        "A canceled subscription can only update its cancellation_details and metadata.",
      );
    // Stripe checks every parameter before it changes anything.
    if (
      body.proration_behavior &&
      !["create_prorations", "none", "always_invoice"].includes(body.proration_behavior)
    )
      return stripeError(400, `Invalid proration_behavior: ${body.proration_behavior}`, {
        param: "proration_behavior",
      });
    for (const [i, change] of (body.items ?? []).entries())
      if (change.quantity !== undefined && !/^\d+$/.test(String(change.quantity)))
        return stripeError(400, `Invalid non-negative integer: ${change.quantity}`, {
          param: `items[${i}][quantity]`,
        });
    const now = seconds();
    const item = sub.items.data[0];
    if (body.trial_end !== undefined) {
      if (body.trial_end !== "now")
        return stripeError(400, "Only trial_end=now is faked.", { param: "trial_end" });
      if (sub.status === "trialing") {
        sub.status = "active";
        item.current_period_start = now;
        item.current_period_end = periodEnd(now, item.price.recurring.interval);
      }
      sub.trial_end = now;
    }
    for (const change of body.items ?? []) {
      if (change.id !== item.id)
        return stripeError(400, `Invalid subscription_item id: ${change.id}`, {
          code: "resource_missing",
          param: "items[0][id]",
        });
      if (change.quantity !== undefined) item.quantity = Number(change.quantity);
    }
    if (body.cancel_at_period_end !== undefined) {
      sub.cancel_at_period_end = body.cancel_at_period_end === "true";
      sub.cancel_at = sub.cancel_at_period_end ? item.current_period_end : null;
    }
    fake.subscriptionUpdates.push({ id: sub.id, body });
    return json(sub);
  };

  const route = async (request: Request, url: URL): Promise<Response> => {
    if (request.headers.get("authorization") !== `Bearer ${fake.secretKey}`)
      return stripeError(401, "Invalid API Key provided: sk_test_****");
    const body = request.method === "POST" ? decodeStripeForm(await request.text()) : {};
    const key = request.headers.get("idempotency-key");
    if (key && idempotent.has(key))
      return new Response(idempotent.get(key), {
        headers: { "content-type": "application/json", "idempotent-replayed": "true" },
      });
    const answer = await dispatch(request.method, url.pathname, body);
    if (key && answer.status === 200) idempotent.set(key, await answer.clone().text());
    return answer;
  };

  const dispatch = async (method: string, path: string, body: Obj): Promise<Response> => {
    if (method === "POST" && path === "/v1/customers") return createCustomer(body);
    if (method === "POST" && path === "/v1/checkout/sessions") return createCheckout(body);
    if (method === "POST" && path === "/v1/billing_portal/sessions") return createPortal(body);
    const sub = /^\/v1\/subscriptions\/([^/]+)$/.exec(path);
    if (sub) {
      const found = fake.subscriptions.get(decodeURIComponent(sub[1]!));
      if (!found)
        return stripeError(404, `No such subscription: '${sub[1]}'`, {
          code: "resource_missing",
          param: "id",
        });
      return method === "GET" ? json(found) : updateSubscription(found, body);
    }
    return stripeError(404, `Unrecognized request URL (${method}: ${path}).`);
  };

  const server = serveFake({
    controls,
    failures,
    defaultFailure: (status) => ({
      body: { error: { type: "api_error", message: `Fake failure ${status}` } },
    }),
    route,
  });

  fake.origin = server.origin;
  fake.stop = server.stop;
  fake.completeCheckout = (sessionId) => {
    const session = fake.sessions.get(sessionId);
    if (!session) throw new Error(`no session ${sessionId}`);
    const trialEnd: number | null = session._subscription_data.trial_end;
    const subscription = newSubscription({
      customer: session.customer,
      ...session._line,
      trialEnd,
      metadata: session._subscription_data.metadata,
      now: seconds(),
    });
    fake.subscriptions.set(subscription.id, subscription);
    Object.assign(session, {
      status: "complete",
      payment_status: trialEnd ? "no_payment_required" : "paid",
      subscription: subscription.id,
    });
    return { session: publicOf(session), subscription: structuredClone(subscription) };
  };
  fake.setSubscription = (id, changes) => {
    const sub = fake.subscriptions.get(id);
    if (!sub) throw new Error(`no subscription ${id}`);
    Object.assign(sub, changes);
    return structuredClone(sub);
  };
  fake.event = (type, object, created = seconds()) => ({
    id: `evt_${token("").slice(0, 24)}`,
    object: "event",
    api_version: "2026-10-28.endive",
    created,
    data: { object: structuredClone(object) },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  });
  return fake;
}
