// Tables of the browser handoff (issue 15): signup intents, CLI authorizations (the device flow),
// page sessions and e-mail confirmations. Every token is stored as its SHA-256 hash only.
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts, users } from "./schema.ts";

/** A CLI authorization: a device secret the CLI polls with and a user code a person approves. */
export const cliAuthorizations = sqliteTable(
  "cli_authorizations",
  {
    id: text("id").primaryKey(),
    deviceSecretHash: text("device_secret_hash").notNull(),
    /** Hash of the normalized user code (`WDJBMJHT`); unique among live authorizations only. */
    userCodeHash: text("user_code_hash").notNull(),
    deviceName: text("device_name").notNull(),
    cliVersion: text("cli_version"),
    /** `pending`, `approved`, `denied`, or `exchanged` once the CLI received its key. */
    status: text("status", { enum: ["pending", "approved", "denied", "exchanged"] }).notNull(),
    /** Seconds the CLI must wait between polls (grows by 5 on each poll that came too early). */
    intervalSeconds: integer("interval_seconds").notNull(),
    lastPolledAt: integer("last_polled_at"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    decidedAt: integer("decided_at"),
    /** Who approved or denied, and the workspace the credential names. */
    accountId: text("account_id").references(() => accounts.id),
    userId: text("user_id").references(() => users.id),
    workspaceId: text("workspace_id"),
    /** The API key made at exchange. */
    credentialId: text("credential_id"),
    exchangedAt: integer("exchanged_at"),
  },
  (t) => [
    uniqueIndex("cli_authorizations_secret").on(t.deviceSecretHash),
    index("cli_authorizations_user_code").on(t.userCodeHash),
    index("cli_authorizations_expiry").on(t.expiresAt),
  ],
);

/** A signup started through the API: the one-time token of its hosted page and what it asked for. */
export const signupIntents = sqliteTable(
  "signup_intents",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull(),
    /** Lower-cased. */
    email: text("email").notNull(),
    workspaceName: text("workspace_name").notNull(),
    cliAuthorizationId: text("cli_authorization_id").references(() => cliAuthorizations.id),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    completedAt: integer("completed_at"),
    accountId: text("account_id").references(() => accounts.id),
  },
  (t) => [
    uniqueIndex("signup_intents_token").on(t.tokenHash),
    index("signup_intents_expiry").on(t.expiresAt),
  ],
);

/** A signed-in browser: the cookie's token hashed, revocable, with an absolute expiry. */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [uniqueIndex("sessions_token").on(t.tokenHash), index("sessions_user").on(t.userId)],
);

/**
 * An address waiting for confirmation: while a user has an unconfirmed row, its account is not usable
 * (the CLI's key is held back). Users without any row (admin bootstrap) count as confirmed.
 */
export const emailConfirmations = sqliteTable(
  "email_confirmations",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    email: text("email").notNull(),
    tokenHash: text("token_hash").notNull(),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    confirmedAt: integer("confirmed_at"),
  },
  (t) => [
    uniqueIndex("email_confirmations_token").on(t.tokenHash),
    index("email_confirmations_account").on(t.accountId),
  ],
);
