// Every table of Herald, defined once: `defineTables` builds them with one dialect's builders
// (tables/builders.ts for SQLite, tables/builders-pg.ts for PostgreSQL), and the open database
// carries the result (`tablesOf(db)`). The row types are the SQLite build's on both engines.
import { ENGINE, type Db } from "./engine.ts";
import { defineAccountTables } from "./tables/accounts.ts";
import { defineApprovalTables } from "./tables/approvals.ts";
import { defineAnalyticsTables } from "./tables/analytics.ts";
import { defineAssetTables } from "./tables/assets.ts";
import { defineBillingTables } from "./tables/billing.ts";
import type { TableBuilders } from "./tables/builders.ts";
import { defineDestinationTables } from "./tables/destinations.ts";
import { defineInstallationTables } from "./tables/installation.ts";
import { defineLinkTables } from "./tables/links.ts";
import { defineOauthTables } from "./tables/oauth.ts";
import { definePostTables } from "./tables/posts.ts";
import { defineSignupTables } from "./tables/signup.ts";
import { defineTeamTables } from "./tables/team.ts";
import { defineWebhookTables } from "./tables/webhooks.ts";

/** Every table, built with one dialect's builders (after `npm run db:generate` for a change). */
export function defineTables(b: TableBuilders) {
  const account = defineAccountTables(b);
  const destination = defineDestinationTables(b, account);
  const post = definePostTables(b, { ...account, ...destination });
  return {
    ...account,
    ...destination,
    ...defineAssetTables(b, account),
    ...post,
    ...defineWebhookTables(b, account),
    ...defineAnalyticsTables(b, post),
    ...defineSignupTables(b, account),
    ...defineTeamTables(b, account),
    ...defineBillingTables(b, account),
    ...defineInstallationTables(b),
    ...defineOauthTables(b, account),
    ...defineApprovalTables(b, { ...account, ...post }),
    ...defineLinkTables(b, { ...account, ...post }),
  };
}

/** The tables of one open database (typed as SQLite's). */
export type Tables = ReturnType<typeof defineTables>;

/** The tables of the database a handle (or transaction handle) belongs to. */
export function tablesOf(db: Db): Tables {
  return db[ENGINE].tables;
}
