import { iso } from "../../lib/clock.ts";
import { isIanaTimeZone } from "../../lib/time-zone.ts";
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, canUseWorkspace, type Actor } from "../../core/actor.ts";
import { checkIfMatch, etagOf } from "../../core/etag.ts";
import { invalid, notFound, ProblemError } from "../../core/problem.ts";
import { recordAudit } from "../audit/repo.ts";
import { linkTrackingOf, mergeLinkTracking, type LinkTrackingPatch } from "../links/settings.ts";
import {
  findWorkspace,
  grantKeyWorkspace,
  insertWorkspace,
  updateWorkspace,
  type WorkspaceRow,
} from "./repo.ts";

/** The workspace resource. */
export function presentWorkspace(row: WorkspaceRow) {
  return {
    id: row.id,
    object: "workspace" as const,
    name: row.name,
    time_zone: row.timeZone,
    approval_required: row.approvalRequired,
    link_tracking: linkTrackingOf(row.linkTracking),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  };
}

/**
 * The workspace a credential asks for, or 404 when it does not exist, belongs to another account
 * or is outside the key's selection (the three are indistinguishable on purpose).
 */
export async function requireWorkspace(db: Db, actor: Actor, workspaceId: string): Promise<WorkspaceRow> {
  const row = canUseWorkspace(actor, workspaceId)
    ? await findWorkspace(db, actor.accountId, workspaceId)
    : undefined;
  if (!row) throw notFound("workspace");
  return row;
}

/** The zone as IANA spells it ("europe/berlin" → "Europe/Berlin"; aliases stay as given), or 400. */
function canonicalTimeZone(zone: string): string {
  if (!isIanaTimeZone(zone))
    throw invalid("/time_zone", `"${zone}" is not an IANA time zone name such as "Europe/Berlin" or "UTC"`);
  return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
}

/** Creates a workspace (time zone UTC unless given); a selected-access key gains access to it. */
export async function createWorkspace(args: {
  h: Herald;
  actor: Actor;
  input: { name: string; time_zone?: string };
}): Promise<WorkspaceRow> {
  const { h, actor, input } = args;
  const timeZone = input.time_zone === undefined ? "UTC" : canonicalTimeZone(input.time_zone);
  const now = h.clock.now();
  const row: WorkspaceRow = {
    id: newId("ws"),
    accountId: actor.accountId,
    name: input.name,
    timeZone,
    approvalRequired: false,
    linkTracking: null,
    createdAt: now,
    updatedAt: now,
  };
  await inTransaction(h.db, async (tx) => {
    await insertWorkspace(tx, row);
    if (actor.workspaceAccessMode === "selected") await grantKeyWorkspace(tx, actor.credentialId, row.id);
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "workspace.created", workspaceId: row.id, targetType: "workspace", targetId: row.id },
      now,
    );
  });
  return row;
}

/**
 * Renames a workspace, changes its time zone, whether posts need approval or its link tracking (the
 * link_tracking fields sent are merged into the stored ones); `ifMatch` (optional)
 * guards against lost updates. Changing `approval_required` also needs posts:approve (whoever may
 * skip approval decides whether it is asked for).
 */
export function patchWorkspace(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  input: {
    name?: string;
    time_zone?: string;
    approval_required?: boolean;
    link_tracking?: LinkTrackingPatch;
  };
  ifMatch: string | null;
}): Promise<WorkspaceRow> {
  const { h, actor, workspaceId, input, ifMatch } = args;
  const timeZone = input.time_zone === undefined ? undefined : canonicalTimeZone(input.time_zone);
  if (input.approval_required !== undefined && !actor.scopes.includes("posts:approve"))
    throw new ProblemError(
      "public_scope_missing",
      "Changing approval_required needs the `posts:approve` scope as well as `workspaces:write`.",
    );
  return inTransaction(h.db, async (tx) => {
    const current = await requireWorkspace(tx, actor, workspaceId);
    checkIfMatch(ifMatch, etagOf(presentWorkspace(current)), false);
    const changes = {
      name: input.name ?? current.name,
      timeZone: timeZone ?? current.timeZone,
      approvalRequired: input.approval_required ?? current.approvalRequired,
      linkTracking: input.link_tracking
        ? mergeLinkTracking(current.linkTracking, input.link_tracking)
        : current.linkTracking,
    };
    if (
      changes.name === current.name &&
      changes.timeZone === current.timeZone &&
      changes.approvalRequired === current.approvalRequired &&
      JSON.stringify(linkTrackingOf(changes.linkTracking)) ===
        JSON.stringify(linkTrackingOf(current.linkTracking))
    )
      return current;
    const now = h.clock.now();
    await updateWorkspace(tx, workspaceId, { ...changes, updatedAt: now });
    await recordAudit(
      tx,
      auditActorOf(actor),
      { action: "workspace.updated", workspaceId, targetType: "workspace", targetId: workspaceId },
      now,
    );
    return { ...current, ...changes, updatedAt: now };
  });
}
