import { and, desc, eq, inArray, isNull, or } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { apiKeys, apiKeyWorkspaces, workspaces } from "../../db/schema.ts";

/** A stored API key row. */
export type ApiKeyRow = typeof apiKeys.$inferSelect;

/** The key whose secret hashes to `secretHash`, with its selected workspaces (hot path: prepared). */
export function findApiKeyBySecretHash(
  db: Db,
  secretHash: string,
): (ApiKeyRow & { workspaceIds: string[] }) | null {
  const row = db.select().from(apiKeys).where(eq(apiKeys.secretHash, secretHash)).get();
  if (!row) return null;
  const workspaceIds =
    row.workspaceAccessMode === "selected"
      ? db
          .select({ id: apiKeyWorkspaces.workspaceId })
          .from(apiKeyWorkspaces)
          .where(eq(apiKeyWorkspaces.keyId, row.id))
          .all()
          .map((r) => r.id)
      : [];
  return { ...row, workspaceIds };
}

/** Stores a new key and its workspace selection (call inside a transaction). */
export function insertApiKey(db: Db, row: typeof apiKeys.$inferInsert, workspaceIds: string[]): void {
  db.insert(apiKeys).values(row).run();
  for (const workspaceId of workspaceIds)
    db.insert(apiKeyWorkspaces).values({ keyId: row.id, workspaceId }).run();
}

/** Records when a key was last used. */
export function touchApiKey(db: Db, id: string, at: number): void {
  db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id)).run();
}

/** Which of `ids` are workspaces of `accountId`. */
export function findAccountWorkspaceIds(db: Db, accountId: string, ids: string[]): string[] {
  if (ids.length === 0) return [];
  return db
    .select({ id: workspaces.id })
    .from(workspaces)
    .where(and(eq(workspaces.accountId, accountId), inArray(workspaces.id, ids)))
    .all()
    .map((r) => r.id);
}

/** Every key of an account, newest first, each with its selected workspaces. */
export function listApiKeys(db: Db, accountId: string): (ApiKeyRow & { workspaceIds: string[] })[] {
  const rows = db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.accountId, accountId))
    .orderBy(desc(apiKeys.id))
    .all();
  const ids = rows.filter((r) => r.workspaceAccessMode === "selected").map((r) => r.id);
  const links =
    ids.length === 0
      ? []
      : db.select().from(apiKeyWorkspaces).where(inArray(apiKeyWorkspaces.keyId, ids)).all();
  const selected = (keyId: string) => links.filter((l) => l.keyId === keyId).map((l) => l.workspaceId);
  return rows.map((row) => ({ ...row, workspaceIds: selected(row.id) }));
}

/** The keys whose credential id or visible prefix is `ref` (a prefix may match more than one). */
export function findApiKeysByIdOrPrefix(db: Db, ref: string): ApiKeyRow[] {
  return db
    .select()
    .from(apiKeys)
    .where(or(eq(apiKeys.id, ref), eq(apiKeys.prefix, ref)))
    .all();
}

/** Sets `revoked_at` unless the key is revoked already (an earlier revocation time is kept). */
export function markApiKeyRevoked(db: Db, id: string, at: number): void {
  db.update(apiKeys)
    .set({ revokedAt: at })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .run();
}
