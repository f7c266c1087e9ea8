import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import type { Herald } from "../../herald.ts";
import { ProblemError } from "../../core/problem.ts";
import { ProviderError, type ConnectedAccount } from "../../providers/types.ts";
import { recordAudit, type AuditActor } from "../audit/repo.ts";
import {
  findDestinationByExternalId,
  insertDestination,
  updateDestination,
  type DestinationRow,
} from "./repo.ts";

/** The problem a provider failure while connecting becomes (`pointer`: the field to fix). */
export function connectionProblem(error: unknown, pointer: string): ProblemError {
  if (error instanceof ProblemError) return error;
  if (error instanceof ProviderError) {
    if (
      error.kind === "auth_revoked" ||
      error.kind === "auth_expired" ||
      error.kind === "rejected" ||
      error.kind === "blocked"
    ) {
      return new ProblemError(
        "public_unpublishable",
        `The network refused the credentials: ${error.message}`,
        {
          errors: [{ pointer, code: "custom", detail: error.message }],
        },
      );
    }
    return new ProblemError(
      "public_provider_error",
      `The network did not answer properly (${error.operation}): ${error.message}`,
      {
        retryAfter: 30,
      },
    );
  }
  throw error;
}

/**
 * Stores connected accounts as destinations, one each (reconnecting the same account refreshes its
 * destination), with an audit record each; call inside a transaction.
 */
export async function saveDestinations(args: {
  h: Herald;
  tx: Db;
  actor: AuditActor;
  workspaceId: string;
  channel: string;
  origin: string;
  accounts: ConnectedAccount[];
}): Promise<DestinationRow[]> {
  const { h, tx, actor, workspaceId, channel, origin } = args;
  const now = h.clock.now();
  const saved: DestinationRow[] = [];
  for (const account of args.accounts) {
    const existing = await findDestinationByExternalId(tx, workspaceId, channel, origin, account.externalId);
    const fields = {
      displayName: account.displayName || account.handle,
      handle: account.handle,
      profileImageUrl: account.profileImageUrl,
      credentialsSealed: h.secrets.encrypt(JSON.stringify(account.credentials)),
      limits: account.limits as unknown as Record<string, number>,
      unavailableReason: null,
      updatedAt: now,
    };
    let row: DestinationRow;
    if (existing) {
      await updateDestination(tx, existing.id, fields);
      row = { ...existing, ...fields };
    } else {
      row = {
        id: newId("dest"),
        workspaceId,
        channel,
        externalId: account.externalId,
        origin,
        enabled: true,
        isDefault: false,
        createdAt: now,
        deletedAt: null,
        refreshLeaseOwner: null,
        refreshLeaseExpiresAt: null,
        ...fields,
      };
      await insertDestination(tx, row);
    }
    const action = existing ? "destination.reconnected" : "destination.connected";
    await recordAudit(tx, actor, { action, workspaceId, targetType: "destination", targetId: row.id }, now);
    saved.push(row);
  }
  return saved;
}
