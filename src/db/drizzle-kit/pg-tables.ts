// What drizzle-kit reads to generate PostgreSQL's migrations (drizzle.pg.config.ts): every table under its own
// name, since drizzle-kit finds tables among a module's named exports only. The application never
// imports this file; it reads the tables of the open database (`tablesOf(db)`).
import { defineTables, type Tables } from "../tables.ts";
import { pgBuilders } from "../tables/builders-pg.ts";

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
} = defineTables(pgBuilders);

/** Compiles only while every table of `defineTables` is exported above. */
export const everyTableExported: keyof Tables extends keyof typeof import("./pg-tables.ts") ? true : never =
  true;
