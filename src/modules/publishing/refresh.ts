import { markDestinationForReauthorization } from "../chat/events.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { runTyped } from "../../providers/http.ts";
import { ProviderError, type Credentials } from "../../providers/types.ts";
import { destinationRef } from "../destinations/present.ts";
import {
  findDestinationById,
  listUsableDestinationsOn,
  releaseRefreshLease,
  takeRefreshLease,
  updateDestination,
} from "../destinations/repo.ts";

/** One refresh at a time per destination in this process; the database lease covers other processes. */
const refreshing = new Map<string, Promise<void>>();

/** How often a process waiting for another's refresh looks again, ms. */
const REFRESH_POLL_MS = 100;

/** New credentials over the stored ones: a value the network left out or sent empty keeps the old one. */
function mergeCredentials(stored: Credentials, fresh: Credentials): Credentials {
  const kept = Object.entries(fresh).filter(
    ([, value]) => value !== "" && value !== null && value !== undefined,
  );
  return { ...stored, ...Object.fromEntries(kept) };
}

/**
 * Renews a destination's credentials once across every process: this process's runs share one
 * refresh, and a lease on the destination row keeps other processes out (networks that rotate
 * single-use refresh tokens would revoke a second refresh). A process that finds the lease taken
 * waits for the new credentials. `usedSealed` is what the failed call used: if the stored
 * credentials differ, another run refreshed already.
 */
export async function refreshDestination(
  h: Herald,
  owner: string,
  destinationId: string,
  usedSealed: string,
): Promise<void> {
  const pending = refreshing.get(destinationId);
  if (pending) return pending;
  const work = (async () => {
    const deadline = Date.now() + h.config.engine.leaseMs;
    while (
      !(await takeRefreshLease(h.db, {
        destinationId,
        owner,
        now: h.clock.now(),
        leaseMs: h.config.engine.leaseMs,
      }))
    ) {
      if ((await findDestinationById(h.db, destinationId))?.credentialsSealed !== usedSealed) return;
      if (Date.now() > deadline) {
        throw new ProviderError(
          "transient",
          "another Herald process is refreshing this destination's token",
          { operation: "refreshCredentials" },
        );
      }
      await Bun.sleep(REFRESH_POLL_MS);
    }
    try {
      const current = (await findDestinationById(h.db, destinationId))!;
      if (current.credentialsSealed !== usedSealed) return;
      const adapter = h.providers.adapter(current.channel)!;
      const stored = destinationRef(h, current).credentials;
      const fresh = await runTyped({
        operation: "refreshCredentials",
        work: () => adapter.refreshCredentials({ destination: destinationRef(h, current) }),
      });
      const sealed = h.secrets.encrypt(JSON.stringify(mergeCredentials(stored, fresh)));
      const changes = { credentialsSealed: sealed, updatedAt: h.clock.now() };
      await inTransaction(h.db, (tx) => updateDestination(tx, destinationId, changes));
    } finally {
      await releaseRefreshLease(h.db, { destinationId, owner });
    }
  })();
  refreshing.set(destinationId, work);
  try {
    return await work;
  } finally {
    refreshing.delete(destinationId);
  }
}

/**
 * The credentials job: renews tokens that would otherwise die unused (Threads' 60-day token, a
 * LinkedIn token with a refresh token) once they are within their adapter's `refreshAheadMs` of
 * `expiresAt`, and credentials whose `renewBy` has come (TikTok's rotating refresh token).
 * A renewal the network refuses marks the destination `reauthorization_required`, so
 * the user hears of it before a post fails; a transient failure is tried again on the next run.
 * Returns how many destinations were renewed.
 */
export async function renewExpiringCredentials(h: Herald, owner: string): Promise<number> {
  const ahead = new Map<string, number | null>();
  for (const a of h.providers.adapters) ahead.set(a.channel, a.refreshAheadMs);
  let renewed = 0;
  for (const row of await listUsableDestinationsOn(h.db, [...ahead.keys()])) {
    const { expiresAt, renewable, renewBy } = destinationRef(h, row).credentials;
    const now = h.clock.now();
    const aheadMs = ahead.get(row.channel) ?? null;
    const accessDue = typeof expiresAt === "number" && aheadMs !== null && expiresAt - now <= aheadMs;
    const refreshDue = typeof renewBy === "number" && renewBy <= now;
    if (renewable === false) {
      // Nothing to renew: the user is told when the token dies, not a week before.
      if (typeof expiresAt === "number" && expiresAt <= now) await markForReauthorization(h, row.id);
      continue;
    }
    if (!accessDue && !refreshDue) continue;
    try {
      await refreshDestination(h, owner, row.id, row.credentialsSealed);
      renewed += 1;
    } catch (error) {
      const kind = error instanceof ProviderError ? error.kind : "not_sent";
      const message = error instanceof Error ? error.message : String(error);
      h.logger.warn("renewing a destination's credentials failed", {
        destination_id: row.id,
        channel: row.channel,
        kind,
        error: message,
      });
      if (kind === "auth_revoked" || kind === "auth_expired" || kind === "rejected")
        await markForReauthorization(h, row.id);
    }
  }
  return renewed;
}

async function markForReauthorization(h: Herald, destinationId: string): Promise<void> {
  await inTransaction(h.db, (tx) => markDestinationForReauthorization(tx, destinationId, h.clock.now()));
}
