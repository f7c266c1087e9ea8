import { billingPages } from "./billing.ts";
import { keyPages } from "./keys.ts";
import type { DashboardRoutes } from "./router.ts";
import { serverSettingsPages } from "./server-settings.ts";
import { teamPages } from "./team.ts";
import { workspaceSettingsPages } from "./workspace-settings.ts";
import { workspacePages } from "./workspaces.ts";

/** The account's pages: API keys, workspaces and their settings, team, billing, the server's settings. */
export function accountPages(routes: DashboardRoutes): void {
  keyPages(routes);
  workspacePages(routes);
  workspaceSettingsPages(routes);
  teamPages(routes);
  billingPages(routes);
  serverSettingsPages(routes);
}
