// Tables of the browser handoff (issue 15): signup intents, CLI authorizations (the device flow),
// page sessions, e-mail confirmations and password reset links. Every token is stored as its SHA-256 hash only.
import type { TableBuilders } from "./builders.ts";
import type { AccountTables } from "./accounts.ts";

/** The signup and session tables. */
export function defineSignupTables(
  b: TableBuilders,
  { accounts, users }: Pick<AccountTables, "accounts" | "users">,
) {
  /** A CLI authorization: a device secret the CLI polls with and a user code a person approves. */
  const cliAuthorizations = b.table(
    "cli_authorizations",
    {
      id: b.text("id").primaryKey(),
      deviceSecretHash: b.text("device_secret_hash").notNull(),
      /** Hash of the normalized user code (`WDJBMJHT`); unique among live authorizations only. */
      userCodeHash: b.text("user_code_hash").notNull(),
      deviceName: b.text("device_name").notNull(),
      cliVersion: b.text("cli_version"),
      /** `pending`, `approved`, `denied`, or `exchanged` once the CLI received its key. */
      status: b.text("status", { enum: ["pending", "approved", "denied", "exchanged"] }).notNull(),
      /** Seconds the CLI must wait between polls (grows by 5 on each poll that came too early). */
      intervalSeconds: b.integer("interval_seconds").notNull(),
      lastPolledAt: b.integer("last_polled_at"),
      createdAt: b.integer("created_at").notNull(),
      expiresAt: b.integer("expires_at").notNull(),
      decidedAt: b.integer("decided_at"),
      /** Who approved or denied, and the workspace the credential names. */
      accountId: b.text("account_id").references(() => accounts.id),
      userId: b.text("user_id").references(() => users.id),
      workspaceId: b.text("workspace_id"),
      /** The API key made at exchange. */
      credentialId: b.text("credential_id"),
      exchangedAt: b.integer("exchanged_at"),
    },
    (t) => [
      b.uniqueIndex("cli_authorizations_secret").on(t.deviceSecretHash),
      b.index("cli_authorizations_user_code").on(t.userCodeHash),
      b.index("cli_authorizations_expiry").on(t.expiresAt),
    ],
  );

  /** A signup started through the API: the one-time token of its hosted page and what it asked for. */
  const signupIntents = b.table(
    "signup_intents",
    {
      id: b.text("id").primaryKey(),
      tokenHash: b.text("token_hash").notNull(),
      /** Lower-cased. */
      email: b.text("email").notNull(),
      workspaceName: b.text("workspace_name").notNull(),
      cliAuthorizationId: b.text("cli_authorization_id").references(() => cliAuthorizations.id),
      createdAt: b.integer("created_at").notNull(),
      expiresAt: b.integer("expires_at").notNull(),
      completedAt: b.integer("completed_at"),
      accountId: b.text("account_id").references(() => accounts.id),
    },
    (t) => [
      b.uniqueIndex("signup_intents_token").on(t.tokenHash),
      b.index("signup_intents_expiry").on(t.expiresAt),
    ],
  );

  /** A signed-in browser: the cookie's token hashed, revocable, with an absolute expiry. */
  const sessions = b.table(
    "sessions",
    {
      id: b.text("id").primaryKey(),
      tokenHash: b.text("token_hash").notNull(),
      userId: b
        .text("user_id")
        .notNull()
        .references(() => users.id),
      accountId: b
        .text("account_id")
        .notNull()
        .references(() => accounts.id),
      createdAt: b.integer("created_at").notNull(),
      expiresAt: b.integer("expires_at").notNull(),
      revokedAt: b.integer("revoked_at"),
    },
    (t) => [b.uniqueIndex("sessions_token").on(t.tokenHash), b.index("sessions_user").on(t.userId)],
  );

  /**
   * An address waiting for confirmation: while a user has an unconfirmed row, its account is not usable
   * (the CLI's key is held back). Users without any row (admin bootstrap) count as confirmed.
   */
  const emailConfirmations = b.table(
    "email_confirmations",
    {
      id: b.text("id").primaryKey(),
      userId: b
        .text("user_id")
        .notNull()
        .references(() => users.id),
      accountId: b
        .text("account_id")
        .notNull()
        .references(() => accounts.id),
      email: b.text("email").notNull(),
      tokenHash: b.text("token_hash").notNull(),
      createdAt: b.integer("created_at").notNull(),
      expiresAt: b.integer("expires_at").notNull(),
      confirmedAt: b.integer("confirmed_at"),
    },
    (t) => [
      b.uniqueIndex("email_confirmations_token").on(t.tokenHash),
      b.index("email_confirmations_account").on(t.accountId),
    ],
  );

  /**
   * A password reset link (`/password-reset/{token}`): one hour, single use. Setting a new password
   * uses it and ends every other open link of the same person.
   */
  const passwordResets = b.table(
    "password_resets",
    {
      id: b.text("id").primaryKey(),
      userId: b
        .text("user_id")
        .notNull()
        .references(() => users.id, { onDelete: "cascade" }),
      tokenHash: b.text("token_hash").notNull(),
      /** `mail` (asked for on /password-reset) or `admin` (`herald admin reset-password`). */
      origin: b.text("origin", { enum: ["mail", "admin"] }).notNull(),
      createdAt: b.integer("created_at").notNull(),
      expiresAt: b.integer("expires_at").notNull(),
      usedAt: b.integer("used_at"),
    },
    (t) => [
      b.uniqueIndex("password_resets_token").on(t.tokenHash),
      b.index("password_resets_user").on(t.userId),
    ],
  );
  return { cliAuthorizations, signupIntents, sessions, emailConfirmations, passwordResets };
}
