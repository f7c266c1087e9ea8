// The installation's own settings (issue 26): one row, `id` = "installation". Not content of any
// account: who may sign up, and the hash of the one-time setup link of an empty installation.
import type { TableBuilders } from "./builders.ts";

/** The installation settings table. */
export function defineInstallationTables(b: TableBuilders) {
  const installationSettings = b.table("installation_settings", {
    id: b.text("id").primaryKey(),
    /** Who may sign up, as chosen on /setup or in the dashboard; null: never chosen (signup open). */
    signupPolicy: b.text("signup_policy", { enum: ["open", "closed"] }),
    /** SHA-256 of the setup link's token while the installation has no account; null once used. */
    setupTokenHash: b.text("setup_token_hash"),
    setupTokenCreatedAt: b.integer("setup_token_created_at"),
    updatedAt: b.integer("updated_at").notNull(),
  });
  return { installationSettings };
}
