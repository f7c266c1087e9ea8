import { roleAllows } from "../../modules/account/roles.ts";
import { findXUsage, usageMonth, X_MONTHLY_LIMIT } from "../../modules/posts/x-usage.ts";
import { listWorkspaces } from "../../modules/workspaces/repo.ts";
import { html } from "../pages/html.ts";
import type { DashboardRoutes } from "./router.ts";
import { table } from "./ui.ts";

/** Enough for any account this version serves; the usage table is one row per workspace. */
const MAX_WORKSPACES = 1000;

/**
 * `/dashboard/billing`: billing has no API yet (issue 17), so this page says what is true today: the
 * server's billing mode, and each workspace's X posts this month against the monthly limit.
 */
export function billingPages(routes: DashboardRoutes): void {
  routes.page("/dashboard/billing", async (r) => {
    if (!roleAllows(r.session.role, "billing:read"))
      return r.message(403, "Not allowed", [
        `Your role (${r.session.role}) cannot see billing; the account's owners and admins can.`,
      ]);
    const month = usageMonth(r.h.clock.now());
    const workspaces = await listWorkspaces(r.h.db, r.session.accountId, null, null, MAX_WORKSPACES);
    const rows = await Promise.all(
      workspaces.map(async (w) => {
        const usage = await findXUsage(r.h.db, w.id, month);
        return [
          w.name,
          String(usage.used),
          String(usage.reserved),
          `${usage.used + usage.reserved} of ${X_MONTHLY_LIMIT}`,
        ];
      }),
    );
    const mode = r.h.config.billingMode;
    return r.render(
      "Billing",
      html`<h1>Billing</h1>
${
  mode === "disabled"
    ? html`<p>Billing is disabled on this server: it is self-hosted, and every feature is available without
a subscription.</p>`
    : html`<p>Billing is configured on this server (mode <code>${mode}</code>); subscriptions are not
managed from the dashboard yet.</p>`
}
<h2>X posts this month</h2>
<p>Each workspace may publish at most ${X_MONTHLY_LIMIT} posts on X per calendar month (UTC). Published posts
count as used; scheduled ones are reserved until they are published or cancelled.</p>
${table({
  caption: `X usage in ${month} (UTC)`,
  head: ["Workspace", "Used", "Reserved", "Total"],
  rows,
  empty: "No workspaces.",
})}`,
      { section: "billing" },
    );
  });
}
