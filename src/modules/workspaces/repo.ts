import { and, desc, eq, inArray, lt, type SQL } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { apiKeyWorkspaces, workspaces } from "../../db/schema.ts";

/** A stored workspace. */
export type WorkspaceRow = typeof workspaces.$inferSelect;

/** A workspace of an account by id. */
export function findWorkspace(db: Db, accountId: string, id: string): WorkspaceRow | undefined {
  return db
    .select()
    .from(workspaces)
    .where(and(eq(workspaces.accountId, accountId), eq(workspaces.id, id)))
    .get();
}

/** A workspace by id alone (background work that has no credential). */
export function findWorkspaceById(db: Db, id: string): WorkspaceRow | undefined {
  return db.select().from(workspaces).where(eq(workspaces.id, id)).get();
}

/** One page (plus one row) of an account's workspaces, newest first, limited to `onlyIds` when given. */
export function listWorkspaces(
  db: Db,
  accountId: string,
  onlyIds: string[] | null,
  afterId: string | null,
  limit: number,
): WorkspaceRow[] {
  const conditions: (SQL | undefined)[] = [eq(workspaces.accountId, accountId)];
  if (onlyIds) conditions.push(inArray(workspaces.id, onlyIds));
  if (afterId) conditions.push(lt(workspaces.id, afterId));
  return db
    .select()
    .from(workspaces)
    .where(and(...conditions))
    .orderBy(desc(workspaces.id))
    .limit(limit + 1)
    .all();
}

/** Stores a new workspace. */
export function insertWorkspace(db: Db, row: WorkspaceRow): void {
  db.insert(workspaces).values(row).run();
}

/** Adds a workspace to a selected-access key's selection. */
export function grantKeyWorkspace(db: Db, keyId: string, workspaceId: string): void {
  db.insert(apiKeyWorkspaces).values({ keyId, workspaceId }).onConflictDoNothing().run();
}

/** Applies changed fields to a workspace. */
export function updateWorkspace(
  db: Db,
  id: string,
  changes: Partial<Pick<WorkspaceRow, "name" | "timeZone" | "updatedAt">>,
): void {
  db.update(workspaces).set(changes).where(eq(workspaces.id, id)).run();
}
