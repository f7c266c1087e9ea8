import { iso } from "../../lib/clock.ts";
import { newId } from "../../db/ids.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { ProblemError } from "../../core/problem.ts";
import { insertAccountWithOwner } from "../account/bootstrap.ts";
import { findUserByEmail } from "../account/repo.ts";
import { signupIsOpen } from "../installation/service.ts";
import { findCliAuthorization, type CliAuthorizationRow } from "../cli-auth/repo.ts";
import {
  checkedName,
  decideForAccount,
  presentCliAuthorizationStart,
  startCliAuthorization,
  type StartedCliAuthorization,
} from "../cli-auth/service.ts";
import { openFirstSession } from "../sessions/service.ts";
import { hashToken, newSecretToken } from "../sessions/tokens.ts";
import { newPasswordErrors } from "./password.ts";
import { emailConfirmationRequired, requestEmailConfirmation, warnWithoutMail } from "./confirmation.ts";
import {
  deleteExpiredSignupIntents,
  findSignupIntentByTokenHash,
  insertSignupIntent,
  markSignupCompleted,
  type SignupIntentRow,
} from "./repo.ts";

/** How long a signup page link (and a CLI authorization attached to it) works. */
export const SIGNUP_INTENT_TTL_MS = 60 * 60 * 1000;
export { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "./password.ts";

/** 403 `public_signup_closed` while signup is closed (HERALD_SIGNUP, else the installation's setting). */
export async function requireSignupOpen(h: Herald): Promise<void> {
  if (!(await signupIsOpen(h)))
    throw new ProblemError(
      "public_signup_closed",
      "Public signup is closed on this server; ask its operator for an account.",
    );
}

/** The body of POST /signup-intents after the schema's checks. */
export interface SignupIntentInput {
  email: string;
  workspace_name: string;
  authorize_cli?: boolean;
  device_name?: string;
  cli_version?: string;
}

/** A new intent with its one-time page token and, when asked for, its CLI authorization. */
export interface CreatedSignupIntent {
  row: SignupIntentRow;
  token: string;
  cli: StartedCliAuthorization | null;
}

function invalidField(pointer: string, detail: string, code: "public_invalid_request" | "public_conflict") {
  return new ProblemError(code, `${pointer.slice(1)} ${detail}.`, {
    errors: [{ pointer, code: "custom", detail }],
  });
}

/**
 * Starts a signup (POST /signup-intents): the intent, stored with its page token hashed, and with
 * `authorize_cli` a CLI authorization that the signup page approves. An address that already has an
 * account is 409 on `/email` (sign in instead); `device_name` is required with `authorize_cli` (and
 * ignored without it, like `cli_version`).
 */
export async function createSignupIntent(h: Herald, input: SignupIntentInput): Promise<CreatedSignupIntent> {
  await requireSignupOpen(h);
  const email = input.email.toLowerCase();
  if (email.slice(0, email.lastIndexOf("@")).length > 64)
    throw invalidField("/email", "must have at most 64 characters before the @", "public_invalid_request");
  const workspaceName = checkedName(input.workspace_name, "/workspace_name");
  let cliInput: { deviceName: string; cliVersion: string | null } | null = null;
  if (input.authorize_cli) {
    if (input.device_name === undefined)
      throw invalidField("/device_name", "is required when authorize_cli is true", "public_invalid_request");
    cliInput = {
      deviceName: checkedName(input.device_name, "/device_name"),
      cliVersion: input.cli_version === undefined ? null : checkedName(input.cli_version, "/cli_version"),
    };
  }
  if (await findUserByEmail(h.db, email))
    throw invalidField("/email", "already has an account; sign in with `herald login`", "public_conflict");
  const now = h.clock.now();
  const expiresAt = now + SIGNUP_INTENT_TTL_MS;
  const { token, hash } = newSecretToken();
  return inTransaction(h.db, async (tx) => {
    await deleteExpiredSignupIntents(tx, now - 24 * 60 * 60 * 1000, 100);
    const cli = cliInput ? await startCliAuthorization(tx, cliInput, now, expiresAt) : null;
    const row: SignupIntentRow = {
      id: newId("sgn"),
      tokenHash: hash,
      email,
      workspaceName,
      cliAuthorizationId: cli?.row.id ?? null,
      createdAt: now,
      expiresAt,
      completedAt: null,
      accountId: null,
    };
    await insertSignupIntent(tx, row);
    return { row, token, cli };
  });
}

/** The signup intent resource of the contract; `signup_url` is the one-time page `<base>/signup/<token>`. */
export function presentSignupIntent(h: Herald, created: CreatedSignupIntent) {
  const intent: Record<string, unknown> = {
    object: "signup_intent",
    signup_url: `${h.config.baseUrl}/signup/${created.token}`,
    expires_at: iso(created.row.expiresAt),
  };
  if (created.cli) intent.cli_authorization = presentCliAuthorizationStart(h, created.cli);
  return intent as {
    object: "signup_intent";
    signup_url: string;
    expires_at: string;
    cli_authorization?: ReturnType<typeof presentCliAuthorizationStart>;
  };
}

/** What a signup page link leads to. */
export type SignupLink =
  | { kind: "unknown" | "expired" | "used" }
  | { kind: "open"; intent: SignupIntentRow; cli: CliAuthorizationRow | null };

/** Looks up the intent of a signup page link. */
export async function inspectSignupLink(h: Herald, token: string): Promise<SignupLink> {
  const intent = await findSignupIntentByTokenHash(h.db, hashToken(token));
  if (!intent) return { kind: "unknown" };
  if (intent.completedAt !== null) return { kind: "used" };
  if (intent.expiresAt <= h.clock.now()) return { kind: "expired" };
  const cli = intent.cliAuthorizationId
    ? ((await findCliAuthorization(h.db, intent.cliAuthorizationId)) ?? null)
    : null;
  return { kind: "open", intent, cli };
}

/** The signup page's fields. */
export interface SignupForm {
  name: string;
  password: string;
  password_confirmation: string;
}

/**
 * Field problems of the signup form, by field name (empty when it is fine). `userInputs` are what the
 * password must not be built from: the person's e-mail address, the workspace or account name.
 */
export function checkSignupForm(
  form: SignupForm,
  userInputs: readonly string[] = [],
): Partial<Record<keyof SignupForm, string>> {
  const errors: Partial<Record<keyof SignupForm, string>> = {};
  const name = form.name.trim();
  if (name.length === 0) errors.name = "Enter a name.";
  else if (name.length > 200) errors.name = "Use at most 200 characters.";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  else if (/[\u0000-\u001f\u007f]/.test(name)) errors.name = "Use letters, digits and punctuation only.";
  const inputs = name ? [...userInputs, name] : userInputs;
  return { ...errors, ...newPasswordErrors(form.password, form.password_confirmation, inputs) };
}

/** What completing the signup page did. */
export type SignupOutcome =
  | { kind: "unknown" | "expired" | "used" | "email_taken" }
  | { kind: "invalid"; errors: Partial<Record<keyof SignupForm, string>> }
  | {
      kind: "done";
      session: { id: string; token: string; expiresAt: number };
      accountId: string;
      cliApproved: boolean;
      awaitingConfirmation: boolean;
    };

/**
 * Completes a signup from its page: the account (named as the form says), its owner (password hashed
 * with Argon2id), its first workspace (UTC, named by the intent), a session, the e-mail confirmation
 * when required, and the approval of an attached CLI authorization, in one transaction: the same
 * pieces as `admin bootstrap`, without an all-scopes key.
 */
export async function completeSignup(
  h: Herald,
  input: { token: string; form: SignupForm; requestId: string | null },
): Promise<SignupOutcome> {
  const link = await inspectSignupLink(h, input.token);
  if (link.kind !== "open") return link;
  const errors = checkSignupForm(input.form, [link.intent.email, link.intent.workspaceName]);
  if (Object.keys(errors).length > 0) return { kind: "invalid", errors };
  // Hashing takes tens of milliseconds: never inside the write transaction.
  const passwordHash = await Bun.password.hash(input.form.password, { algorithm: "argon2id" });
  const confirm = emailConfirmationRequired(h);
  const now = h.clock.now();
  const outcome = await inTransaction(h.db, async (tx): Promise<SignupOutcome> => {
    // Read again in the transaction: another request may have completed it while the password was hashed.
    const intent = await findSignupIntentByTokenHash(tx, link.intent.tokenHash);
    if (!intent || intent.completedAt !== null) return { kind: "used" };
    if (await findUserByEmail(tx, intent.email)) return { kind: "email_taken" };
    const { accountId, userId, workspaceId } = await insertAccountWithOwner(tx, {
      accountName: input.form.name.trim(),
      email: intent.email,
      passwordHash,
      workspaceName: intent.workspaceName,
      now,
    });
    if (!(await markSignupCompleted(tx, intent.id, accountId, now)))
      throw new Error(`signup intent ${intent.id} was completed twice in one transaction`);
    const session = await openFirstSession(
      tx,
      { userId, accountId, requestId: input.requestId },
      { action: "account.signed_up", targetType: "account", targetId: accountId },
      now,
    );
    if (confirm) await requestEmailConfirmation(h, tx, { userId, accountId, email: intent.email }, now);
    let cliApproved = false;
    if (link.cli && link.cli.status === "pending" && link.cli.expiresAt > now) {
      const decider = { sessionId: session.id, userId, accountId, requestId: input.requestId };
      cliApproved = await decideForAccount(tx, link.cli, "approve", decider, workspaceId, now);
    }
    return { kind: "done", session, accountId, cliApproved, awaitingConfirmation: confirm };
  });
  if (outcome.kind === "done" && outcome.awaitingConfirmation) warnWithoutMail(h, outcome.accountId);
  return outcome;
}
