import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { insertAccountWithOwner } from "../account/bootstrap.ts";
import { hasAnyAccount } from "../account/repo.ts";
import { recordAudit } from "../audit/repo.ts";
import { openFirstSession } from "../sessions/service.ts";
import { hashToken, newSecretToken } from "../sessions/tokens.ts";
import { checkSignupForm } from "../signup/service.ts";
import {
  findFirstAccountId,
  findInstallationSettings,
  type SignupPolicy,
  storeSetupTokenHash,
  storeSignupPolicy,
  takeSetupToken,
} from "./repo.ts";

export type { SignupPolicy };

/** Who may sign up, and what decided it. */
export interface SignupSetting {
  policy: SignupPolicy;
  /** `environment`: HERALD_SIGNUP; `setting`: an owner's choice (setup, dashboard); `default`: never chosen. */
  source: "environment" | "setting" | "default";
}

/**
 * The effective signup setting: HERALD_SIGNUP when set, else what an owner chose, else open (an
 * installation made by `herald admin bootstrap` never chose and keeps the behaviour it always had).
 */
export async function signupSetting(h: Herald): Promise<SignupSetting> {
  if (h.config.signup !== null) return { policy: h.config.signup, source: "environment" };
  const stored = (await findInstallationSettings(h.db))?.signupPolicy ?? null;
  return stored === null ? { policy: "open", source: "default" } : { policy: stored, source: "setting" };
}

/** Whether strangers may sign up now (invitations work either way). */
export async function signupIsOpen(h: Herald): Promise<boolean> {
  return (await signupSetting(h)).policy === "open";
}

/**
 * A new one-time setup token for an installation without any account (its hash is stored; an earlier
 * token stops working), or null once an account exists. `herald serve` and `herald admin setup-link`
 * print `setupUrl` of it.
 */
export async function issueSetupToken(h: Herald): Promise<string | null> {
  const { token, hash } = newSecretToken();
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    if (await hasAnyAccount(tx)) return null;
    await storeSetupTokenHash(tx, hash, now);
    return token;
  });
}

/** The page a setup token opens. */
export function setupUrl(h: Herald, token: string): string {
  return `${h.config.baseUrl}/setup?token=${token}`;
}

/** What a setup link leads to: the form (`valid`), nothing (`invalid`: wrong or replaced), or `done`. */
export async function inspectSetupToken(h: Herald, token: string): Promise<"valid" | "invalid" | "done"> {
  if (await hasAnyAccount(h.db)) return "done";
  const stored = (await findInstallationSettings(h.db))?.setupTokenHash ?? null;
  return stored !== null && stored === hashToken(token) ? "valid" : "invalid";
}

/** The setup page's fields. */
export interface SetupForm {
  email: string;
  name: string;
  workspace_name: string;
  password: string;
  password_confirmation: string;
  /** `closed`: only people an owner invites; `open`: anyone. */
  signup: string;
}

export type SetupErrors = Partial<Record<keyof SetupForm, string>>;

/** Field problems of the setup form (the person and password rules are the signup page's). */
export function checkSetupForm(form: SetupForm): SetupErrors {
  const errors: SetupErrors = checkSignupForm({
    name: form.name,
    password: form.password,
    password_confirmation: form.password_confirmation,
  });
  const email = form.email.trim();
  const at = email.lastIndexOf("@");
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254 || at > 64)
    errors.email = "Enter an e-mail address like name@example.com.";
  const workspace = form.workspace_name.trim();
  if (workspace.length === 0) errors.workspace_name = "Enter a name for the workspace.";
  else if (workspace.length > 200) errors.workspace_name = "Use at most 200 characters.";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  else if (/[\u0000-\u001f\u007f]/.test(workspace))
    errors.workspace_name = "Use letters, digits and punctuation only.";
  if (form.signup !== "open" && form.signup !== "closed") errors.signup = "Choose who may sign up.";
  return errors;
}

/** What completing the setup page did. */
export type SetupOutcome =
  | { kind: "done"; session: { id: string; token: string; expiresAt: number }; accountId: string }
  | { kind: "already_set_up" | "invalid_link" }
  | { kind: "invalid"; errors: SetupErrors };

/**
 * Sets the installation up from /setup: the owner (password hashed), the account and its first
 * workspace, who may sign up, and a session, in one transaction that first takes the one-time token
 * and checks that no account exists, so two concurrent setups never make two owners. The address
 * needs no confirmation: whoever holds the token printed on the server's console is its operator.
 */
export async function completeSetup(
  h: Herald,
  input: { token: string; form: SetupForm; requestId: string | null },
): Promise<SetupOutcome> {
  const state = await inspectSetupToken(h, input.token);
  if (state === "done") return { kind: "already_set_up" };
  if (state === "invalid") return { kind: "invalid_link" };
  const errors = checkSetupForm(input.form);
  if (Object.keys(errors).length > 0) return { kind: "invalid", errors };
  // Hashing takes tens of milliseconds: never inside the write transaction.
  const passwordHash = await Bun.password.hash(input.form.password, { algorithm: "argon2id" });
  const now = h.clock.now();
  return inTransaction(h.db, async (tx): Promise<SetupOutcome> => {
    if (await hasAnyAccount(tx)) return { kind: "already_set_up" };
    if (!(await takeSetupToken(tx, hashToken(input.token), now))) return { kind: "invalid_link" };
    const { accountId, userId } = await insertAccountWithOwner(tx, {
      accountName: input.form.name.trim(),
      email: input.form.email.trim().toLowerCase(),
      passwordHash,
      workspaceName: input.form.workspace_name.trim(),
      now,
    });
    await storeSignupPolicy(tx, input.form.signup as SignupPolicy, now);
    const session = await openFirstSession(
      tx,
      { userId, accountId, requestId: input.requestId },
      { action: "installation.set_up", targetType: "account", targetId: accountId },
      now,
    );
    return { kind: "done", session, accountId };
  });
}

/**
 * Whether a signed-in person may change the installation's settings: an owner of its first account
 * (the one /setup made). Owners of accounts that strangers opened through public signup may not.
 */
export async function mayManageInstallation(
  h: Herald,
  person: { accountId: string; role: string },
): Promise<boolean> {
  if (person.role !== "owner") return false;
  return (await findFirstAccountId(h.db)) === person.accountId;
}

/** Stores who may sign up (the dashboard's server settings), audited on the person's account. */
export async function changeSignupPolicy(
  h: Herald,
  actor: { accountId: string; credentialId: string | null; requestId: string | null },
  policy: SignupPolicy,
): Promise<void> {
  const now = h.clock.now();
  await inTransaction(h.db, async (tx) => {
    await storeSignupPolicy(tx, policy, now);
    await recordAudit(
      tx,
      actor,
      { action: `installation.signup_${policy}`, targetType: "installation", targetId: "installation" },
      now,
    );
  });
}
