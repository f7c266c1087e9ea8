import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { iso } from "../../lib/clock.ts";
import type { Herald } from "../../herald.ts";
import { listingSchema, operation } from "../docs.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import type { heraldPlugin } from "../plugin.ts";
import { listAuditRecords, type AuditRow } from "../../modules/audit/repo.ts";
import { AuditRecord } from "./account-schemas.ts";
import { PageQuery } from "./common-schemas.ts";
import type { RouteContext } from "./context.ts";
import { handler } from "./context.ts";

function presentAuditRecord(row: AuditRow) {
  return {
    id: row.id,
    object: "audit_record" as const,
    action: row.action,
    credential_id: row.credentialId,
    workspace_id: row.workspaceId,
    target: { type: row.targetType, id: row.targetId },
    request_id: row.requestId,
    client_request_id: row.clientRequestId,
    created_at: iso(row.createdAt),
  };
}

/** One page of the records the key may see (a key of selected workspaces sees theirs). */
async function listRecords(
  h: Herald,
  { actor, request, query }: RouteContext<unknown, Static<typeof PageQuery>>,
) {
  const scope = `audit-records:${actor.credentialId}`;
  const page = parsePageQuery(h, query, scope);
  const visible = actor.workspaceAccessMode === "selected" ? actor.workspaceIds : null;
  const rows = await listAuditRecords(h.db, actor.accountId, visible, page.afterId, page.limit);
  return pageResponse(h, request, rows, page, scope, presentAuditRecord);
}

const doc = {
  list: operation({
    scope: "audit:read",
    operationId: "listAuditRecords",
    summary: "List audit records",
    description:
      "Who changed what in the account, newest first: each record names the action, the " +
      "credential, the workspace, the target and the request ids (Herald's and the caller's " +
      "`Service-Request-Id`). Paged with `limit` and `after`.",
    tag: "Account",
  }),
};

/** The audit log: who changed what, newest first. */
export function auditRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia().use(rails).get("/audit-records", handler(h, listRecords), {
    ...doc.list,
    query: PageQuery,
    response: { 200: listingSchema(AuditRecord) },
  });
}
