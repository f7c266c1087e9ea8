import { and, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { apiKeys, apiKeyWorkspaces, workspaces } from "../../db/schema.ts";

/** A stored API key row. */
export type ApiKeyRow = typeof apiKeys.$inferSelect;

/** The key whose secret hashes to `secretHash`, with its selected workspaces (hot path: prepared). */
export function findApiKeyBySecretHash(db: Db, secretHash: string): (ApiKeyRow & { workspaceIds: string[] }) | null {
  const row = db.select().from(apiKeys).where(eq(apiKeys.secretHash, secretHash)).get();
  if (!row) return null;
  const workspaceIds = row.workspaceAccessMode === "selected"
    ? db.select({ id: apiKeyWorkspaces.workspaceId }).from(apiKeyWorkspaces).where(eq(apiKeyWorkspaces.keyId, row.id)).all().map((r) => r.id)
    : [];
  return { ...row, workspaceIds };
}

/** Stores a new key and its workspace selection (call inside a transaction). */
export function insertApiKey(db: Db, row: typeof apiKeys.$inferInsert, workspaceIds: string[]): void {
  db.insert(apiKeys).values(row).run();
  for (const workspaceId of workspaceIds) db.insert(apiKeyWorkspaces).values({ keyId: row.id, workspaceId }).run();
}

/** Records when a key was last used. */
export function touchApiKey(db: Db, id: string, at: number): void {
  db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, id)).run();
}

/** Which of `ids` are workspaces of `accountId`. */
export function findAccountWorkspaceIds(db: Db, accountId: string, ids: string[]): string[] {
  if (ids.length === 0) return [];
  return db.select({ id: workspaces.id }).from(workspaces).where(and(eq(workspaces.accountId, accountId), inArray(workspaces.id, ids))).all().map((r) => r.id);
}
