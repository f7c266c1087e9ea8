import { and, asc, eq } from "drizzle-orm";
import { firstRow } from "../../db/engine.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";

/** The one row of `installation_settings`. */
export type InstallationSettingsRow = Tables["installationSettings"]["$inferSelect"];
/** Who may sign up, as an owner chose it. */
export type SignupPolicy = "open" | "closed";

const INSTALLATION = "installation";

/** The installation's settings, or undefined before anything was stored. */
export async function findInstallationSettings(db: Db): Promise<InstallationSettingsRow | undefined> {
  const { installationSettings } = tablesOf(db);
  return db
    .select()
    .from(installationSettings)
    .where(eq(installationSettings.id, INSTALLATION))
    .then(firstRow);
}

/** Stores a new setup token's hash, replacing any earlier one (whose link stops working). */
export async function storeSetupTokenHash(db: Db, hash: string, now: number): Promise<void> {
  const { installationSettings } = tablesOf(db);
  const set = { setupTokenHash: hash, setupTokenCreatedAt: now, updatedAt: now };
  await db
    .insert(installationSettings)
    .values({ id: INSTALLATION, signupPolicy: null, ...set })
    .onConflictDoUpdate({ target: installationSettings.id, set });
}

/** Clears the setup token if it is the one with `hash`; false when it is not (wrong, replaced, used). */
export async function takeSetupToken(db: Db, hash: string, now: number): Promise<boolean> {
  const { installationSettings } = tablesOf(db);
  const changed = await db
    .update(installationSettings)
    .set({ setupTokenHash: null, setupTokenCreatedAt: null, updatedAt: now })
    .where(and(eq(installationSettings.id, INSTALLATION), eq(installationSettings.setupTokenHash, hash)))
    .returning({ id: installationSettings.id });
  return changed.length === 1;
}

/** Stores who may sign up. */
export async function storeSignupPolicy(db: Db, policy: SignupPolicy, now: number): Promise<void> {
  const { installationSettings } = tablesOf(db);
  await db
    .insert(installationSettings)
    .values({ id: INSTALLATION, signupPolicy: policy, setupTokenHash: null, updatedAt: now })
    .onConflictDoUpdate({ target: installationSettings.id, set: { signupPolicy: policy, updatedAt: now } });
}

/** The installation's first account (made by /setup or the first `admin bootstrap`), if any. */
export async function findFirstAccountId(db: Db): Promise<string | undefined> {
  const { accounts } = tablesOf(db);
  const row = await db
    .select({ id: accounts.id })
    .from(accounts)
    .orderBy(asc(accounts.createdAt), asc(accounts.id))
    .limit(1)
    .then(firstRow);
  return row?.id;
}
