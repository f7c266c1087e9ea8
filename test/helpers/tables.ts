// The tables, for tests that read or write rows directly: built for the engine this run uses
// (database.ts), the same definitions `tablesOf(db)` gives every server of the run.
import { defineTables } from "../../src/db/tables.ts";
import { sqliteBuilders } from "../../src/db/tables/builders.ts";
import { POSTGRES_URL } from "./database.ts";

const builders = POSTGRES_URL
  ? (await import("../../src/db/tables/builders-pg.ts")).pgBuilders
  : sqliteBuilders;

export const {
  accounts,
  users,
  workspaces,
  apiKeys,
  apiKeyWorkspaces,
  idempotencyKeys,
  auditRecords,
  invitations,
  mailOutbox,
  destinations,
  destinationConnections,
  oauthApps,
  assets,
  assetUploads,
  posts,
  receipts,
  attempts,
  queueWindows,
  eventsOutbox,
  xUsage,
  webhookEndpoints,
  webhookDeliveries,
  webhookDeliveryAttempts,
  postAnalytics,
  analyticsSnapshots,
  analyticsRefreshes,
  cliAuthorizations,
  signupIntents,
  sessions,
  emailConfirmations,
  feedback,
  chatNotificationSettings,
  chatNotifications,
  billingSubscriptions,
  billingStripeEvents,
  billingWorkspaceCancellations,
  billingInstallation,
} = defineTables(builders);
