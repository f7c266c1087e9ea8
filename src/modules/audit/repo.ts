import { insertRow } from "../../db/prepared.ts";
import { and, desc, eq, inArray, isNull, lt, or, type SQL } from "drizzle-orm";
import type { BatchDelete } from "../../db/batch-delete.ts";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { tablesOf, type Tables } from "../../db/tables.ts";

/** A stored audit record. */
export type AuditRow = Tables["auditRecords"]["$inferSelect"];

/** Who did a write, as the audit log records it. */
export interface AuditActor {
  accountId: string;
  credentialId: string | null;
  requestId: string | null;
  /** The caller's Service-Request-Id, when it sent one. */
  clientRequestId?: string | null;
}

/** Appends an audit record; call inside the transaction of the write it describes. */
export async function recordAudit(
  db: Db,
  actor: AuditActor,
  entry: { action: string; workspaceId?: string | null; targetType: string; targetId: string },
  at: number,
): Promise<void> {
  const { auditRecords } = tablesOf(db);
  await insertRow(db, auditRecords, {
    id: newId("aud"),
    accountId: actor.accountId,
    credentialId: actor.credentialId,
    requestId: actor.requestId,
    clientRequestId: actor.clientRequestId ?? null,
    action: entry.action,
    workspaceId: entry.workspaceId ?? null,
    targetType: entry.targetType,
    targetId: entry.targetId,
    createdAt: at,
  });
}

/**
 * One page (plus one row) of an account's audit records, newest first. `visibleWorkspaceIds`
 * (for selected-access keys) hides records of other workspaces; account-level records stay visible.
 */
export async function listAuditRecords(
  db: Db,
  accountId: string,
  visibleWorkspaceIds: string[] | null,
  afterId: string | null,
  limit: number,
): Promise<AuditRow[]> {
  const { auditRecords } = tablesOf(db);
  const conditions: (SQL | undefined)[] = [eq(auditRecords.accountId, accountId)];
  if (afterId) conditions.push(lt(auditRecords.id, afterId));
  if (visibleWorkspaceIds) {
    conditions.push(
      visibleWorkspaceIds.length > 0
        ? or(isNull(auditRecords.workspaceId), inArray(auditRecords.workspaceId, visibleWorkspaceIds))
        : isNull(auditRecords.workspaceId),
    );
  }
  return db
    .select()
    .from(auditRecords)
    .where(and(...conditions))
    .orderBy(desc(auditRecords.id))
    .limit(limit + 1);
}

/** Audit records written before `before`, oldest first (retention deletes them in batches). */
export function auditRecordsBefore(db: Db, before: number): BatchDelete {
  const { auditRecords: t } = tablesOf(db);
  return { table: t, key: [t.id], where: lt(t.createdAt, before), oldestFirst: t.createdAt };
}
