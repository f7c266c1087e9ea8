// What drizzle-kit reads to generate the migrations of one dialect: every table under its own name,
// since drizzle-kit finds tables among a module's named exports only. The dialect is the config's
// (drizzle.config.ts and drizzle.pg.config.ts set HERALD_MIGRATIONS_DIALECT before drizzle-kit loads
// this file). The application never imports it; it reads the tables of the open database (`tablesOf`).
import { defineTables, type Tables } from "../tables.ts";
import { sqliteBuilders } from "../tables/builders.ts";
import { pgBuilders } from "../tables/builders-pg.ts";

const builders = process.env.HERALD_MIGRATIONS_DIALECT === "postgresql" ? pgBuilders : sqliteBuilders;

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
  commentReceipts,
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
  passwordResets,
  feedback,
  chatNotificationSettings,
  chatNotifications,
  billingSubscriptions,
  billingStripeEvents,
  billingWorkspaceCancellations,
  billingInstallation,
  installationSettings,
  oauthClients,
  oauthAuthorizationCodes,
  oauthRefreshTokens,
  postApprovals,
  postApprovalSteps,
  postComments,
  reviewLinks,
  trackedLinks,
  trackedLinkClicks,
} = defineTables(builders);

/** Compiles only while every table of `defineTables` is exported above. */
export const everyTableExported: keyof Tables extends keyof typeof import("./tables.ts") ? true : never =
  true;
