// What drizzle-kit reads to generate SQLite's migrations (drizzle.config.ts): every table under its own
// name, since drizzle-kit finds tables among a module's named exports only. The application never
// imports this file; it reads the tables of the open database (`tablesOf(db)`).
import { defineTables, type Tables } from "../tables.ts";
import { sqliteBuilders } from "../tables/builders.ts";

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
} = defineTables(sqliteBuilders);

/** Compiles only while every table of `defineTables` is exported above. */
export const everyTableExported: keyof Tables extends keyof typeof import("./sqlite-tables.ts")
  ? true
  : never = true;
