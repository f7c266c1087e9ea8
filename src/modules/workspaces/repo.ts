import { and, desc, eq, inArray, lt, sql, type SQL } from "drizzle-orm";
import { runPrepared } from "../../db/prepared.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";
import { firstRow } from "../../db/engine.ts";
import { forgetCredentials } from "../keys/credential-cache.ts";

/** A stored workspace. */
export type WorkspaceRow = Tables["workspaces"]["$inferSelect"];

/** A workspace of an account by id. */
export async function findWorkspace(
  db: Db,
  accountId: string,
  id: string,
): Promise<WorkspaceRow | undefined> {
  const { workspaces } = tablesOf(db);
  return runPrepared(
    db,
    "workspace_of_account",
    (d) =>
      d
        .select()
        .from(workspaces)
        .where(
          and(
            eq(workspaces.accountId, sql.placeholder("accountId")),
            eq(workspaces.id, sql.placeholder("id")),
          ),
        ),
    { accountId, id },
  ).then(firstRow);
}

/** A workspace by id alone (background work that has no credential). */
export async function findWorkspaceById(db: Db, id: string): Promise<WorkspaceRow | undefined> {
  const { workspaces } = tablesOf(db);
  return db.select().from(workspaces).where(eq(workspaces.id, id)).then(firstRow);
}

/** The names of workspaces by id (those that exist). */
export async function workspaceNames(db: Db, ids: string[]): Promise<Map<string, string>> {
  const { workspaces } = tablesOf(db);
  if (ids.length === 0) return new Map();
  const rows = await db
    .select({ id: workspaces.id, name: workspaces.name })
    .from(workspaces)
    .where(inArray(workspaces.id, ids));
  return new Map(rows.map((w) => [w.id, w.name]));
}

/** One page (plus one row) of an account's workspaces, newest first, limited to `onlyIds` when given. */
export async function listWorkspaces(
  db: Db,
  accountId: string,
  onlyIds: string[] | null,
  afterId: string | null,
  limit: number,
): Promise<WorkspaceRow[]> {
  const { workspaces } = tablesOf(db);
  const conditions: (SQL | undefined)[] = [eq(workspaces.accountId, accountId)];
  if (onlyIds) conditions.push(inArray(workspaces.id, onlyIds));
  if (afterId) conditions.push(lt(workspaces.id, afterId));
  return db
    .select()
    .from(workspaces)
    .where(and(...conditions))
    .orderBy(desc(workspaces.id))
    .limit(limit + 1);
}

/** Stores a new workspace. */
export async function insertWorkspace(db: Db, row: WorkspaceRow): Promise<void> {
  const { workspaces } = tablesOf(db);
  await db.insert(workspaces).values(row);
}

/** Adds a workspace to a selected-access key's selection. */
export async function grantKeyWorkspace(db: Db, keyId: string, workspaceId: string): Promise<void> {
  const { apiKeyWorkspaces } = tablesOf(db);
  await db.insert(apiKeyWorkspaces).values({ keyId, workspaceId }).onConflictDoNothing();
  forgetCredentials(db);
}

/** Applies changed fields to a workspace. */
export async function updateWorkspace(
  db: Db,
  id: string,
  changes: Partial<
    Pick<WorkspaceRow, "name" | "timeZone" | "approvalRequired" | "linkTracking" | "updatedAt">
  >,
): Promise<void> {
  const { workspaces } = tablesOf(db);
  await db.update(workspaces).set(changes).where(eq(workspaces.id, id));
  forgetCredentials(db);
}
