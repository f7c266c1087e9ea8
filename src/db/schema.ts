// The tables every repository imports. Their TypeScript types are the SQLite definitions
// (src/db/sqlite); `useDialect("postgresql")` rebinds each name to its PostgreSQL twin (src/db/pg),
// whose row types are identical (test/db/schema-parity.test.ts). One process uses one engine at a
// time: `openDatabase` selects it before the first query. The PostgreSQL definitions are loaded only
// then, so a SQLite server never builds them (memory and start-up time).
import * as lite from "./sqlite/schema.ts";

/** The SQL dialects Herald stores its data in. */
export type Dialect = "sqlite" | "postgresql";

export let accounts = lite.accounts;
export let users = lite.users;
export let workspaces = lite.workspaces;
export let apiKeys = lite.apiKeys;
export let apiKeyWorkspaces = lite.apiKeyWorkspaces;
export let idempotencyKeys = lite.idempotencyKeys;
export let auditRecords = lite.auditRecords;
export let invitations = lite.invitations;
export let mailOutbox = lite.mailOutbox;
export let destinations = lite.destinations;
export let destinationConnections = lite.destinationConnections;
export let oauthApps = lite.oauthApps;
export let assets = lite.assets;
export let posts = lite.posts;
export let receipts = lite.receipts;
export let attempts = lite.attempts;
export let queueWindows = lite.queueWindows;
export let eventsOutbox = lite.eventsOutbox;
export let xUsage = lite.xUsage;
export let webhookEndpoints = lite.webhookEndpoints;
export let webhookDeliveries = lite.webhookDeliveries;
export let webhookDeliveryAttempts = lite.webhookDeliveryAttempts;
export let assetUploads = lite.assetUploads;
export let postAnalytics = lite.postAnalytics;
export let analyticsSnapshots = lite.analyticsSnapshots;
export let analyticsRefreshes = lite.analyticsRefreshes;
export let cliAuthorizations = lite.cliAuthorizations;
export let signupIntents = lite.signupIntents;
export let sessions = lite.sessions;
export let emailConfirmations = lite.emailConfirmations;
export let feedback = lite.feedback;
export let chatNotificationSettings = lite.chatNotificationSettings;
export let chatNotifications = lite.chatNotifications;
export let billingSubscriptions = lite.billingSubscriptions;
export let billingStripeEvents = lite.billingStripeEvents;
export let billingWorkspaceCancellations = lite.billingWorkspaceCancellations;
export let billingInstallation = lite.billingInstallation;

let current: Dialect = "sqlite";

/** The dialect the table bindings point at. */
export function currentDialect(): Dialect {
  return current;
}

/** Points every table binding at one dialect's definitions. */
export async function useDialect(dialect: Dialect): Promise<void> {
  current = dialect;
  const source = (dialect === "sqlite" ? lite : await import("./pg/schema.ts")) as unknown as typeof lite;
  accounts = source.accounts;
  users = source.users;
  workspaces = source.workspaces;
  apiKeys = source.apiKeys;
  apiKeyWorkspaces = source.apiKeyWorkspaces;
  idempotencyKeys = source.idempotencyKeys;
  auditRecords = source.auditRecords;
  invitations = source.invitations;
  mailOutbox = source.mailOutbox;
  destinations = source.destinations;
  destinationConnections = source.destinationConnections;
  oauthApps = source.oauthApps;
  assets = source.assets;
  posts = source.posts;
  receipts = source.receipts;
  attempts = source.attempts;
  queueWindows = source.queueWindows;
  eventsOutbox = source.eventsOutbox;
  xUsage = source.xUsage;
  webhookEndpoints = source.webhookEndpoints;
  webhookDeliveries = source.webhookDeliveries;
  webhookDeliveryAttempts = source.webhookDeliveryAttempts;
  assetUploads = source.assetUploads;
  postAnalytics = source.postAnalytics;
  analyticsSnapshots = source.analyticsSnapshots;
  analyticsRefreshes = source.analyticsRefreshes;
  cliAuthorizations = source.cliAuthorizations;
  signupIntents = source.signupIntents;
  sessions = source.sessions;
  emailConfirmations = source.emailConfirmations;
  feedback = source.feedback;
  chatNotificationSettings = source.chatNotificationSettings;
  chatNotifications = source.chatNotifications;
  billingSubscriptions = source.billingSubscriptions;
  billingStripeEvents = source.billingStripeEvents;
  billingWorkspaceCancellations = source.billingWorkspaceCancellations;
  billingInstallation = source.billingInstallation;
}
