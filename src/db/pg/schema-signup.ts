// Tables of the browser handoff (issue 15): signup intents, CLI authorizations (the device flow),
// page sessions and e-mail confirmations. PostgreSQL twin of src/db/sqlite/schema-signup.ts.
import { bigint, index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { accounts, users } from "./schema.ts";

/** A CLI authorization: a device secret the CLI polls with and a user code a person approves. */
export const cliAuthorizations = pgTable(
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
    intervalSeconds: bigint("interval_seconds", { mode: "number" }).notNull(),
    lastPolledAt: bigint("last_polled_at", { mode: "number" }),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    decidedAt: bigint("decided_at", { mode: "number" }),
    /** Who approved or denied, and the workspace the credential names. */
    accountId: text("account_id").references(() => accounts.id),
    userId: text("user_id").references(() => users.id),
    workspaceId: text("workspace_id"),
    /** The API key made at exchange. */
    credentialId: text("credential_id"),
    exchangedAt: bigint("exchanged_at", { mode: "number" }),
  },
  (t) => [
    uniqueIndex("cli_authorizations_secret").on(t.deviceSecretHash),
    index("cli_authorizations_user_code").on(t.userCodeHash),
    index("cli_authorizations_expiry").on(t.expiresAt),
  ],
);

/** A signup started through the API: the one-time token of its hosted page and what it asked for. */
export const signupIntents = pgTable(
  "signup_intents",
  {
    id: text("id").primaryKey(),
    tokenHash: text("token_hash").notNull(),
    /** Lower-cased. */
    email: text("email").notNull(),
    workspaceName: text("workspace_name").notNull(),
    cliAuthorizationId: text("cli_authorization_id").references(() => cliAuthorizations.id),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    completedAt: bigint("completed_at", { mode: "number" }),
    accountId: text("account_id").references(() => accounts.id),
  },
  (t) => [
    uniqueIndex("signup_intents_token").on(t.tokenHash),
    index("signup_intents_expiry").on(t.expiresAt),
  ],
);

/** A signed-in browser: the cookie's token hashed, revocable, with an absolute expiry. */
export const sessions = pgTable(
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
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    revokedAt: bigint("revoked_at", { mode: "number" }),
  },
  (t) => [uniqueIndex("sessions_token").on(t.tokenHash), index("sessions_user").on(t.userId)],
);

/**
 * An address waiting for confirmation: while a user has an unconfirmed row, its account is not usable
 * (the CLI's key is held back). Users without any row (admin bootstrap) count as confirmed.
 */
export const emailConfirmations = pgTable(
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
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
    confirmedAt: bigint("confirmed_at", { mode: "number" }),
  },
  (t) => [
    uniqueIndex("email_confirmations_token").on(t.tokenHash),
    index("email_confirmations_account").on(t.accountId),
  ],
);
