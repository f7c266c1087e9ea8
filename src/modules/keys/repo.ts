import { and, desc, eq, getTableColumns, inArray, isNull, lte, or, sql } from "drizzle-orm";
import { runPrepared } from "../../db/prepared.ts";
import type { Db } from "../../db/open.ts";
import { firstRow } from "../../db/engine.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import { forgetCredentials } from "./credential-cache.ts";

/** A stored API key row. */
export type ApiKeyRow = Tables["apiKeys"]["$inferSelect"];

/** A stored workspace (as the credential lookup returns it). */
type WorkspaceRow = Tables["workspaces"]["$inferSelect"];

/** What one request's authentication reads: the key, its selected workspaces, the workspace asked for. */
export interface Credential {
  key: ApiKeyRow;
  /** The key's selected workspaces; empty when its mode is `all`. */
  workspaceIds: string[];
  /** The workspace the request names when it is one of the key's account (access is checked apart). */
  workspace: WorkspaceRow | null;
  /** Whether the key's account still waits for an address to be confirmed (signup/unconfirmed.ts). */
  unconfirmed: boolean;
}

/**
 * The key whose secret hashes to `secretHash`, its selected workspaces, the account's workspace
 * `workspaceId` ("" for none) and whether the account has an unconfirmed address, in one statement:
 * one row per selected workspace (one row for a key of mode `all`) and unconfirmed address, every
 * row carrying the key and the workspace. What the rails read for a key's request.
 */
export async function findCredential(
  db: Db,
  secretHash: string,
  workspaceId: string,
): Promise<Credential | null> {
  const { apiKeys, apiKeyWorkspaces, emailConfirmations, workspaces } = tablesOf(db);
  const rows = await runPrepared(
    db,
    "credential_by_secret_hash",
    (d) =>
      d
        .select({
          ...getTableColumns(apiKeys),
          selectedWorkspaceId: apiKeyWorkspaces.workspaceId,
          workspaceId: workspaces.id,
          workspaceAccountId: workspaces.accountId,
          workspaceName: workspaces.name,
          workspaceTimeZone: workspaces.timeZone,
          workspaceApprovalRequired: workspaces.approvalRequired,
          workspaceLinkTracking: workspaces.linkTracking,
          workspaceCreatedAt: workspaces.createdAt,
          workspaceUpdatedAt: workspaces.updatedAt,
          unconfirmedId: emailConfirmations.id,
        })
        .from(apiKeys)
        .leftJoin(apiKeyWorkspaces, eq(apiKeyWorkspaces.keyId, apiKeys.id))
        .leftJoin(
          workspaces,
          and(eq(workspaces.id, sql.placeholder("workspaceId")), eq(workspaces.accountId, apiKeys.accountId)),
        )
        .leftJoin(
          emailConfirmations,
          and(eq(emailConfirmations.accountId, apiKeys.accountId), isNull(emailConfirmations.confirmedAt)),
        )
        .where(eq(apiKeys.secretHash, sql.placeholder("secretHash"))),
    { secretHash, workspaceId },
  );
  const first = rows[0];
  if (!first) return null;
  const {
    selectedWorkspaceId: _selected,
    workspaceId: foundId,
    workspaceAccountId,
    workspaceName,
    workspaceTimeZone,
    workspaceApprovalRequired,
    workspaceLinkTracking,
    workspaceCreatedAt,
    workspaceUpdatedAt,
    unconfirmedId,
    ...key
  } = first;
  const workspace =
    foundId === null
      ? null
      : {
          id: foundId,
          accountId: workspaceAccountId!,
          name: workspaceName!,
          timeZone: workspaceTimeZone!,
          approvalRequired: workspaceApprovalRequired!,
          linkTracking: workspaceLinkTracking ?? null,
          createdAt: workspaceCreatedAt!,
          updatedAt: workspaceUpdatedAt!,
        };
  const workspaceIds =
    key.workspaceAccessMode === "selected"
      ? [...new Set(rows.flatMap((r) => (r.selectedWorkspaceId === null ? [] : [r.selectedWorkspaceId])))]
      : [];
  return { key, workspaceIds, workspace, unconfirmed: unconfirmedId !== null };
}

/** Stores a new key and its workspace selection (call inside a transaction). */
export async function insertApiKey(
  db: Db,
  row: Tables["apiKeys"]["$inferInsert"],
  workspaceIds: string[],
): Promise<void> {
  const { apiKeys, apiKeyWorkspaces } = tablesOf(db);
  await db.insert(apiKeys).values(row);
  for (const workspaceId of workspaceIds)
    await db.insert(apiKeyWorkspaces).values({ keyId: row.id, workspaceId });
}

/**
 * Records when a key was last used, unless a request since `staleBefore` already did (requests
 * running at once with one key, here or in another process, then write once).
 */
export async function touchApiKey(db: Db, id: string, at: number, staleBefore: number): Promise<void> {
  const { apiKeys } = tablesOf(db);
  await db
    .update(apiKeys)
    .set({ lastUsedAt: at })
    .where(and(eq(apiKeys.id, id), or(isNull(apiKeys.lastUsedAt), lte(apiKeys.lastUsedAt, staleBefore))));
}

/** Which of `ids` are workspaces of `accountId`. */
export async function findAccountWorkspaceIds(db: Db, accountId: string, ids: string[]): Promise<string[]> {
  const { workspaces } = tablesOf(db);
  if (ids.length === 0) return [];
  const rows = await db
    .select({ id: workspaces.id })
    .from(workspaces)
    .where(and(eq(workspaces.accountId, accountId), inArray(workspaces.id, ids)));
  return rows.map((r) => r.id);
}

/** Every key of an account, newest first, each with its selected workspaces. */
export async function listApiKeys(
  db: Db,
  accountId: string,
): Promise<(ApiKeyRow & { workspaceIds: string[] })[]> {
  const { apiKeys, apiKeyWorkspaces } = tablesOf(db);
  const rows = await db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.accountId, accountId))
    .orderBy(desc(apiKeys.id));
  const ids = rows.filter((r) => r.workspaceAccessMode === "selected").map((r) => r.id);
  const links =
    ids.length === 0
      ? []
      : await db.select().from(apiKeyWorkspaces).where(inArray(apiKeyWorkspaces.keyId, ids));
  const selected = (keyId: string) => links.filter((l) => l.keyId === keyId).map((l) => l.workspaceId);
  return rows.map((row) => ({ ...row, workspaceIds: selected(row.id) }));
}

/** The keys whose credential id or visible prefix is `ref` (a prefix may match more than one). */
export async function findApiKeysByIdOrPrefix(db: Db, ref: string): Promise<ApiKeyRow[]> {
  const { apiKeys } = tablesOf(db);
  return db
    .select()
    .from(apiKeys)
    .where(or(eq(apiKeys.id, ref), eq(apiKeys.prefix, ref)));
}

/** Sets `revoked_at` unless the key is revoked already (an earlier revocation time is kept). */
export async function markApiKeyRevoked(db: Db, id: string, at: number): Promise<void> {
  const { apiKeys } = tablesOf(db);
  await db
    .update(apiKeys)
    .set({ revokedAt: at })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)));
  forgetCredentials(db);
}

/** A key of `accountId` by its credential id (another account's key is not found). */
export async function findAccountApiKey(
  db: Db,
  accountId: string,
  id: string,
): Promise<ApiKeyRow | undefined> {
  const { apiKeys } = tablesOf(db);
  return db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, accountId), eq(apiKeys.id, id)))
    .then(firstRow);
}

/** The key a dashboard form with this one-time key already created, if any. */
export async function findApiKeyByCreationFormKey(
  db: Db,
  accountId: string,
  formKey: string,
): Promise<ApiKeyRow | undefined> {
  const { apiKeys } = tablesOf(db);
  return db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, accountId), eq(apiKeys.creationFormKey, formKey)))
    .then(firstRow);
}
