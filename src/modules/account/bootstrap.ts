import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { ALL_SCOPES } from "../../core/scopes.ts";
import { recordAudit } from "../audit/repo.ts";
import { createApiKey } from "../keys/service.ts";
import { newPasswordErrors } from "../signup/password.ts";
import { insertWorkspace } from "../workspaces/repo.ts";
import { findUserByEmail, insertAccount, insertUser } from "./repo.ts";

/**
 * A new account with its owner and first workspace (UTC), inside the caller's transaction: what
 * `herald admin bootstrap` and the signup page both create. Returns the new ids.
 */
export async function insertAccountWithOwner(
  tx: Db,
  input: {
    accountName: string;
    email: string;
    passwordHash: string | null;
    workspaceName: string;
    now: number;
  },
): Promise<{ accountId: string; userId: string; workspaceId: string }> {
  const { now } = input;
  const accountId = newId("acc");
  const userId = newId("usr");
  const workspaceId = newId("ws");
  await insertAccount(tx, { id: accountId, name: input.accountName, createdAt: now, updatedAt: now });
  await insertUser(tx, {
    id: userId,
    accountId,
    email: input.email,
    passwordHash: input.passwordHash,
    role: "owner",
    createdAt: now,
  });
  await insertWorkspace(tx, {
    id: workspaceId,
    accountId,
    name: input.workspaceName,
    timeZone: "UTC",
    approvalRequired: false,
    linkTracking: null,
    createdAt: now,
    updatedAt: now,
  });
  return { accountId, userId, workspaceId };
}

/** A bootstrap request that cannot be carried out (the message is for the operator). */
export class BootstrapError extends Error {}

/**
 * Creates an account, its owner, a first workspace (UTC) and a live API key with every scope, in
 * one transaction. The key is returned once and never stored in clear.
 */
export async function bootstrapAccount(
  h: Herald,
  input: { email: string; workspaceName: string; password?: string },
) {
  const email = input.email.trim();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
    throw new BootstrapError(`"${email}" is not an e-mail address`);
  const workspaceName = input.workspaceName.trim();
  if (workspaceName.length < 1 || workspaceName.length > 200)
    throw new BootstrapError("the workspace name must be 1 to 200 characters");
  if (input.password !== undefined) {
    // The same rule as every page where a person chooses a password.
    const problem = newPasswordErrors(input.password, input.password, [email, workspaceName]).password;
    if (problem) throw new BootstrapError(`--password: ${problem}`);
  }
  const passwordHash = input.password ? await Bun.password.hash(input.password) : null;
  const now = h.clock.now();
  return inTransaction(h.db, async (tx) => {
    if (await findUserByEmail(tx, email)) throw new BootstrapError(`an account for ${email} already exists`);
    const { accountId, workspaceId } = await insertAccountWithOwner(tx, {
      accountName: workspaceName,
      email,
      passwordHash,
      workspaceName,
      now,
    });
    const key = await createApiKey(
      tx,
      {
        accountId,
        name: "bootstrap",
        environment: "live",
        scopes: [...ALL_SCOPES],
        workspaceAccessMode: "all",
        workspaceIds: [],
        expiresAt: null,
      },
      now,
    );
    const actor = { accountId, credentialId: null, requestId: null };
    await recordAudit(
      tx,
      actor,
      { action: "account.bootstrapped", targetType: "account", targetId: accountId },
      now,
    );
    await recordAudit(
      tx,
      actor,
      { action: "api_key.created", targetType: "api_key", targetId: key.credentialId },
      now,
    );
    return {
      account_id: accountId,
      workspace_id: workspaceId,
      api_key: key.apiKey,
      credential_id: key.credentialId,
    };
  });
}
