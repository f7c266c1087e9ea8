import { Elysia, t } from "elysia";
import { iso } from "../../lib/clock.ts";
import type { Herald } from "../../herald.ts";
import { listingSchema, operation, Timestamp } from "../docs.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import type { heraldPlugin } from "../plugin.ts";
import { listAuditRecords, type AuditRow } from "../../modules/audit/repo.ts";

const AuditRecord = t.Object(
  {
    id: t.String(),
    object: t.Literal("audit_record"),
    action: t.String(),
    credential_id: t.Union([t.String(), t.Null()]),
    workspace_id: t.Union([t.String(), t.Null()]),
    target: t.Object({ type: t.String(), id: t.String() }),
    request_id: t.Union([t.String(), t.Null()]),
    created_at: Timestamp,
  },
  { title: "AuditRecord" },
);

function presentAuditRecord(row: AuditRow) {
  return {
    id: row.id,
    object: "audit_record" as const,
    action: row.action,
    credential_id: row.credentialId,
    workspace_id: row.workspaceId,
    target: { type: row.targetType, id: row.targetId },
    request_id: row.requestId,
    created_at: iso(row.createdAt),
  };
}

/** The audit log: who changed what, newest first. */
export function auditRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia().use(rails).get(
    "/audit-records",
    async ({ actor, request, query }) => {
      const scope = `audit-records:${actor.credentialId}`;
      const page = parsePageQuery(h, query, scope);
      const visible = actor.workspaceAccessMode === "selected" ? actor.workspaceIds : null;
      const rows = await listAuditRecords(h.db, actor.accountId, visible, page.afterId, page.limit);
      return pageResponse(h, request, rows, page, scope, presentAuditRecord);
    },
    {
      ...operation({ scope: "audit:read", summary: "List audit records", tag: "Account" }),
      query: t.Object({ limit: t.Optional(t.String()), after: t.Optional(t.String()) }),
      response: { 200: listingSchema(AuditRecord) },
    },
  );
}
