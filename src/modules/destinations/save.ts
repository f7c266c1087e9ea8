import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import type { Herald } from "../../herald.ts";
import { ProblemError } from "../../core/problem.ts";
import { unreachableReason } from "../../providers/http.ts";
import { ProviderError, type ConnectedAccount } from "../../providers/types.ts";
import { recordAudit, type AuditActor } from "../audit/repo.ts";
import {
  findDestinationByExternalId,
  insertDestination,
  updateDestination,
  type DestinationRow,
} from "./repo.ts";

/** What a connection attempt was doing when the network failed. */
export interface ConnectionAttempt {
  /** The network's origin Herald called (the Mastodon instance, the Bluesky PDS). */
  origin: string;
  /**
   * `password`: the network checked an account's handle and app password (`pointer`: the field a
   * refusal blames); `registration`: Herald registered its app on the instance.
   */
  step: { kind: "password"; pointer: string } | { kind: "registration" };
}

/**
 * The problem a failure while connecting becomes, saying what failed: the way to the network (502
 * `public_provider_unreachable`, not retryable: a name that does not resolve or a refused port is
 * fixed by a person, not by a retry in seconds), an address Herald does not call (400), credentials
 * the network refused (422 `public_provider_credentials_refused`), an app registration the instance
 * refused or an answer Herald could not use (502 `public_provider_error`). Problems pass unchanged.
 */
export function connectionProblem(error: unknown, attempt: ConnectionAttempt): ProblemError {
  if (error instanceof ProblemError) return error;
  if (!(error instanceof ProviderError)) throw error;
  const host = new URL(attempt.origin).host;
  const unreachable = unreachableReason(error);
  if (unreachable !== null) return unreachableProblem(host, unreachable);
  if (error.kind === "blocked")
    return new ProblemError(
      "public_invalid_request",
      `Herald does not call ${host}: ${networkMessage(error)}`,
      {
        errors: [{ pointer: "/instance_origin", code: "blocked", detail: networkMessage(error) }],
      },
    );
  const refused = error.kind === "auth_revoked" || error.kind === "auth_expired" || error.kind === "rejected";
  if (refused && attempt.step.kind === "password")
    return new ProblemError(
      "public_provider_credentials_refused",
      `${host} refused the handle and app password: ${networkMessage(error)}`,
      { errors: [{ pointer: attempt.step.pointer, code: "refused", detail: networkMessage(error) }] },
    );
  if (refused)
    return new ProblemError(
      "public_provider_error",
      `${host} refused to register Herald's app: ${networkMessage(error)}. Check that the address is ` +
        "the instance's.",
      {
        retrySafety: "not_retryable",
        errors: [{ pointer: "/instance_origin", code: "refused", detail: networkMessage(error) }],
      },
    );
  return new ProblemError(
    "public_provider_error",
    `${host} did not answer properly to ${error.operation}: ${networkMessage(error)}`,
  );
}

/** 502 `public_provider_unreachable`: `host` could not be reached, and why (`its name does not resolve (ENOTFOUND)`). */
export function unreachableProblem(host: string, reason: string): ProblemError {
  return new ProblemError(
    "public_provider_unreachable",
    `Herald could not reach ${host}: ${reason}. Check the address; if it is right, the server Herald ` +
      "runs on cannot reach it now (DNS, network or firewall).",
    {
      retrySafety: "not_retryable",
      errors: [{ pointer: "/instance_origin", code: "unreachable", detail: `${host}: ${reason}` }],
    },
  );
}

/** The failure's message without the call's name in front, with the HTTP status when it does not say it. */
function networkMessage(error: ProviderError): string {
  const prefix = `${error.operation}: `;
  const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  const status = error.statusCode === null ? null : `HTTP ${error.statusCode}`;
  return status === null || message.includes(status) ? message : `${message} (${status})`;
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
