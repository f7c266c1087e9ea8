import { roleAllows } from "../../modules/account/roles.ts";
import {
  usageMonth,
  X_MONTHLY_LIMIT_DEFAULT,
  X_MONTHLY_LIMIT_SETTING,
  xMonthlyLimit,
} from "../../modules/posts/x-usage.ts";
import { html, type Markup } from "../pages/html.ts";
import { problemOf } from "./api.ts";
import type { Billing, BillingSession } from "./api-resources.ts";
import type { DashboardRequest, DashboardRoutes } from "./router.ts";
import { zonedTime } from "../pages/time.ts";
import { badge, buttonForm, choices, postForm, table } from "./ui.ts";
import { notice, withNotice } from "./notices.ts";

type Subscription = NonNullable<Billing["subscription"]>;

const ENTITLEMENT: Record<string, { tone: "ok" | "warn" | "danger"; text: string }> = {
  active: { tone: "ok", text: "Everything works." },
  trialing: { tone: "ok", text: "The trial is running: everything works." },
  grace: {
    tone: "warn",
    text: "A payment is overdue: everything still works, until the grace period ends.",
  },
  read_only: {
    tone: "danger",
    text:
      "Read-only: new posts, uploads and connections are refused until the subscription is paid. " +
      "Reading, exporting, cancelling and deleting keep working.",
  },
};

/** Where Stripe's hosted pages are: the checkout and portal forms redirect there. */
const STRIPE_PAGES = ["https://checkout.stripe.com", "https://billing.stripe.com"];

/**
 * `/dashboard/billing`: the account's billing as GET /v1/billing has it (mode, entitlement,
 * subscription, each workspace's X posts this month) and, for owners with a processor, Stripe's
 * checkout and portal and the trial's conversion.
 */
export function billingPages(routes: DashboardRoutes): void {
  routes
    .page("/dashboard/billing", async (r) => {
      const answer = await r.api.get<Billing>("/billing");
      if (answer.status === 403)
        return r.message(403, "Not allowed", [
          `Your role (${r.session.role}) cannot see billing; the account's owners and admins can.`,
        ]);
      if (!answer.ok) return r.message(answer.status, "Billing is unavailable", [answer.body?.detail ?? ""]);
      return r.render("Billing", billingContent(r, answer.body), {
        section: "billing",
        formActions: answer.body.mode === "disabled" ? [] : STRIPE_PAGES,
      });
    })
    .form("/dashboard/billing/checkout", async (r, form) =>
      toStripe(r, "/billing/checkout-sessions", {
        interval: form.get("interval") === "year" ? "year" : "month",
        confirmed: form.get("confirmed") === "true",
      }),
    )
    .form("/dashboard/billing/portal", (r) => toStripe(r, "/billing/portal-sessions", {}))
    .form("/dashboard/billing/conversion", async (r, form) => {
      const answer = await r.api.call("POST", "/billing/conversion", {
        body: { confirmed: true },
        idempotencyKey: form.get("idempotency_key") ?? undefined,
      });
      if (answer.ok) return r.redirect(withNotice("/dashboard/billing", "billing", "converted"));
      return r.message(answer.status, "The trial was not converted", [answer.body?.detail ?? ""]);
    });
}

/** Starts a Stripe-hosted session through the API and sends the browser there. */
async function toStripe(r: DashboardRequest, path: string, body: Record<string, unknown>) {
  const answer = await r.api.call<BillingSession>("POST", path, { body });
  if (answer.ok && /^https?:\/\//.test(answer.body.url))
    return new Response(null, {
      status: 303,
      headers: { location: answer.body.url, "cache-control": "no-store" },
    });
  const problem = problemOf(answer);
  const detail = problem?.errors?.[0]?.detail ?? problem?.detail ?? "Stripe did not answer.";
  return r.message(answer.status, "Billing could not be opened", [detail]);
}

function billingContent(r: DashboardRequest, billing: Billing): Markup {
  const names = new Map(r.workspaces.map((w) => [w.id, w.name]));
  const entitlement = ENTITLEMENT[billing.entitlement] ?? { tone: "warn", text: billing.entitlement };
  const sub = billing.subscription;
  const owner = roleAllows(r.session.role, "billing:write");
  return html`<h1>Billing</h1>
${notice(r.query, "billing")}
${
  billing.mode === "disabled"
    ? html`<p>Billing is disabled on this server: it is self-hosted, and every feature is available without
a subscription.</p>`
    : html`<p>Billing through Stripe (${billing.mode === "processor_live" ? "live" : "test mode"}).</p>`
}
<p>${badge(billing.entitlement.replace("_", "-"), entitlement.tone)} ${entitlement.text}</p>
${sub ? subscriptionFacts(sub) : ""}
${owner && billing.mode !== "disabled" ? actions(r, sub) : ""}
<h2>X posts this month</h2>
${xLimitText(billing.x_usage[0]?.limit ?? xMonthlyLimit(r.h.config))}
${table({
  caption: `X usage in ${usageMonth(r.h.clock.now())} (UTC)`,
  head: ["Workspace", "Used", "Reserved", "Total"],
  rows: billing.x_usage.map((u) => [
    names.get(u.workspace_id) ?? u.workspace_id,
    String(u.used),
    String(u.reserved),
    `${u.used + u.reserved} of ${u.limit}`,
  ]),
  empty: "No workspaces.",
})}`;
}

/**
 * Where the monthly X limit comes from: the operator's setting, not the plan (every plan and a disabled
 * billing have the same limit).
 */
function xLimitText(limit: number): Markup {
  const setting = html`<code>${X_MONTHLY_LIMIT_SETTING}</code>`;
  const source =
    limit === X_MONTHLY_LIMIT_DEFAULT
      ? html`${setting}, at its default of ${String(X_MONTHLY_LIMIT_DEFAULT)}`
      : html`${setting}, set to ${String(limit)} (the default is ${String(X_MONTHLY_LIMIT_DEFAULT)})`;
  return html`<p>Each workspace may publish at most ${String(limit)} posts on X per calendar month (UTC).
This limit is not a billing plan's: it comes from the server's settings, chosen by whoever runs this
server (${source}). Published posts count as used; scheduled ones are reserved until they are published
or cancelled.</p>`;
}

function subscriptionFacts(sub: Subscription): Markup {
  return html`<h2>Subscription</h2>
<dl>
<dt>Status</dt><dd>${sub.status.replaceAll("_", " ")}</dd>
<dt>Billed</dt><dd>${sub.interval ? `every ${sub.interval}` : "—"}</dd>
<dt>Workspaces paid for</dt><dd>${String(sub.workspace_quantity)}</dd>
<dt>Trial ends</dt><dd>${zonedTime(sub.trial_ends_at)}</dd>
<dt>Current period ends</dt><dd>${zonedTime(sub.current_period_ends_at)}</dd>
<dt>Ends</dt><dd>${sub.cancel_at_period_end ? "at the end of the period" : zonedTime(sub.cancel_at)}</dd>
</dl>`;
}

/** Subscribe (checkout), manage (portal), end the trial now (conversion). */
function actions(r: DashboardRequest, sub: Subscription | null): Markup {
  const subscribed = sub && sub.status !== "pending_checkout" && sub.status !== "canceled";
  const checkout = postForm(
    { action: "/dashboard/billing/checkout", csrf: r.csrf, label: "Subscribe" },
    html`<h2>Subscribe</h2>
${choices({
  name: "interval",
  pointer: "/interval",
  legend: "Billed",
  type: "radio",
  options: [
    { value: "month", label: "Monthly" },
    { value: "year", label: "Yearly" },
  ],
  checked: ["month"],
})}
${choices({
  name: "confirmed",
  pointer: "/confirmed",
  legend: "Confirmation",
  type: "checkbox",
  options: [{ value: "true", label: "I want to subscribe; Stripe's page asks for payment details" }],
  checked: [],
})}
<button type="submit">Continue to Stripe</button>`,
  );
  return html`${subscribed ? "" : checkout}
${
  subscribed
    ? html`<h2>Manage</h2><p>Payment method, invoices, plan and cancellation are on Stripe's portal.</p>
${buttonForm({ action: "/dashboard/billing/portal", csrf: r.csrf, label: "Open the billing portal" })}`
    : ""
}
${
  sub?.status === "trialing"
    ? buttonForm({
        action: "/dashboard/billing/conversion",
        csrf: r.csrf,
        label: "End the trial and start paying now",
        secondary: true,
        confirm: "End the trial now? Stripe charges the first period today.",
      })
    : ""
}`;
}
