import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { stylesheetResponse } from "../pages/respond.ts";
import { DASHBOARD_JS } from "./script.ts";
import { CALENDAR_JS } from "./calendar-script.ts";
import { DASHBOARD_CSS } from "./style.ts";
import { PREVIEW_CSS } from "../previews/index.ts";
import { DASHBOARD_CSS_PATH, DASHBOARD_JS_PATH } from "./layout.ts";
import { html } from "../pages/html.ts";
import { overviewPages } from "./overview.ts";
import { postPages } from "./posts.ts";
import { approvalPages } from "./approvals.ts";
import { accountPages } from "./account-pages.ts";
import { composePages } from "./compose.ts";
import { destinationAndWebhookPages } from "./destinations.ts";
import { dashboardRouter } from "./router.ts";

const hidden = { detail: { hide: true } };

/**
 * The signed-in dashboard under `/dashboard`: server-rendered pages that read and write through the API
 * in-process as the person (see api.ts), so they follow the contract's rules exactly.
 */
export function dashboardRoutes(h: Herald, handle: (request: Request) => Promise<Response>) {
  return new Elysia()
    .get(DASHBOARD_CSS_PATH, () => stylesheetResponse(DASHBOARD_CSS + PREVIEW_CSS), hidden)
    .get(
      DASHBOARD_JS_PATH,
      () =>
        new Response(DASHBOARD_JS + CALENDAR_JS, {
          headers: {
            "content-type": "text/javascript; charset=utf-8",
            "cache-control": "public, max-age=3600",
            "x-content-type-options": "nosniff",
          },
        }),
      hidden,
    )
    .use(
      dashboardRouter(h, handle, (routes) => {
        overviewPages(routes);
        composePages(routes);
        postPages(routes);
        approvalPages(routes);
        accountPages(routes);
        destinationAndWebhookPages(routes);
        // Any other dashboard path: an HTML 404 inside the dashboard (after sign-in), not problem+json.
        routes.page("/dashboard/*", (r) =>
          r.message(404, "Page not found", [html`<a href="/dashboard">Back to your account</a>`]),
        );
      }),
    );
}
