// The analytics-refresh job: claims due rows (a lease, like every job, so several processes share
// the work), reads each destination's posts in the batches its network allows, and stores what it
// got. A destination that fails records the failure on its posts and holds up no other destination.
import { inGuardedTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { runTyped } from "../../providers/http.ts";
import {
  ProviderError,
  type MetricsResult,
  type MetricsTarget,
  type ProviderAdapter,
} from "../../providers/types.ts";
import { destinationRef } from "../destinations/present.ts";
import { findDestinationById, type DestinationRow } from "../destinations/repo.ts";
import { listReceipts } from "../posts/repo.ts";
import { refreshDestination } from "../publishing/refresh.ts";
import { nextRefreshAfter, normalizeMetrics, RETRY_AFTER_FAILURE_MS, STOP_AFTER_AGE_MS } from "./cadence.ts";
import { claimDueAnalytics, finishRefresh, insertSnapshot, type PostAnalyticsRow } from "./repo.ts";

/** Rows one pass claims at most. */
const CLAIM_BATCH = 200;
/** A claim outlives a slow network by this much; a dead process's rows come due again after it. */
const LEASE_MS = 5 * 60_000;

/** A failure recorded on a post's analytics (`last_error`). */
interface ReadFailure {
  code: string;
  message: string;
  retryAt: number | null;
}

/** One pass: reads every due post's numbers; returns how many rows it handled. */
export async function refreshDueAnalytics(h: Herald, owner: string): Promise<number> {
  const now = h.clock.now();
  const claimed = await inGuardedTransaction(h.db, (tx) =>
    claimDueAnalytics(tx, { now, limit: CLAIM_BATCH, owner, until: now + LEASE_MS }),
  );
  const byDestination = new Map<string, PostAnalyticsRow[]>();
  for (const row of claimed) {
    const key = row.destinationId ?? "";
    byDestination.set(key, [...(byDestination.get(key) ?? []), row]);
  }
  // Destinations are read side by side: a slow or failing network delays only its own posts.
  await Promise.all(
    [...byDestination].map(([destinationId, rows]) =>
      refreshDestinationPosts(h, owner, destinationId, rows).catch((error) =>
        recordFailure(h, owner, rows, {
          code: "analytics_refresh_failed",
          message: error instanceof Error ? error.message : String(error),
          retryAt: null,
        }),
      ),
    ),
  );
  return claimed.length;
}

async function refreshDestinationPosts(
  h: Herald,
  owner: string,
  destinationId: string,
  rows: PostAnalyticsRow[],
): Promise<void> {
  const adapter = h.providers.adapter(rows[0]!.channel);
  if (!adapter?.fetchMetrics) return recordUnsupported(h, owner, rows);
  const destination = destinationId ? await findDestinationById(h.db, destinationId) : undefined;
  if (!destination || destination.deletedAt !== null || destination.unavailableReason) {
    const message = destination?.unavailableReason
      ? `the destination is unavailable (${destination.unavailableReason})`
      : "the destination was disconnected";
    return recordFailure(h, owner, rows, { code: "destination_unavailable", message, retryAt: null });
  }
  // A thread counts as one post: the numbers are its first item's.
  const receipts = await listReceipts(
    h.db,
    rows.map((r) => r.postId),
  );
  const targets = new Map<string, { row: PostAnalyticsRow; target: MetricsTarget }>();
  const unreceipted: PostAnalyticsRow[] = [];
  for (const row of rows) {
    const first = receipts.find((r) => r.postId === row.postId && r.itemIndex === 0);
    if (!first) unreceipted.push(row);
    else {
      const { providerObjectId, url, extra } = first;
      targets.set(providerObjectId, {
        row,
        target: { providerObjectId, url, extra, publishedAt: row.publishedAt },
      });
    }
  }
  if (unreceipted.length > 0) {
    const message = "the post has no receipt of its first item";
    await recordFailure(h, owner, unreceipted, { code: "provider_post_missing", message, retryAt: null });
  }
  const all = [...targets.values()];
  const size = Math.max(1, adapter.metricsBatchSize ?? 1);
  let current = destination;
  for (let i = 0; i < all.length; i += size) {
    const batch = all.slice(i, i + size);
    const read = await readBatch(
      h,
      owner,
      adapter,
      current,
      batch.map((b) => b.target),
    );
    current = read.destination;
    if ("failure" in read) {
      await recordFailure(
        h,
        owner,
        batch.map((b) => b.row),
        read.failure,
      );
      continue;
    }
    await storeResults(h, owner, read.results, batch);
  }
}

/** One fetchMetrics call, with one credentials renewal on an expired token. */
async function readBatch(
  h: Herald,
  owner: string,
  adapter: ProviderAdapter,
  destination: DestinationRow,
  targets: MetricsTarget[],
): Promise<
  | { destination: DestinationRow; results: MetricsResult[] }
  | { destination: DestinationRow; failure: ReadFailure }
> {
  let current = destination;
  for (let tries = 0; ; tries++) {
    try {
      const results = await runTyped({
        operation: "fetchMetrics",
        work: () => adapter.fetchMetrics!({ destination: destinationRef(h, current), targets }),
      });
      return { destination: current, results };
    } catch (caught) {
      const error = caught as ProviderError;
      if (error.kind === "auth_expired" && tries === 0) {
        try {
          await refreshDestination(h, owner, current.id, current.credentialsSealed);
          current = (await findDestinationById(h.db, current.id))!;
          continue;
        } catch (refreshError) {
          return { destination: current, failure: failureOf(refreshError as ProviderError) };
        }
      }
      return { destination: current, failure: failureOf(error) };
    }
  }
}

function failureOf(error: ProviderError): ReadFailure {
  const limited = error.kind === "transient" && error.retryAt !== null;
  const code =
    error.kind === "auth_expired" || error.kind === "auth_revoked"
      ? "destination_reauthorization_required"
      : limited
        ? "provider_rate_limited"
        : "provider_error";
  return { code, message: error.message, retryAt: error.retryAt };
}

/** Stores a batch's numbers (a snapshot each), unsupported posts, and posts the network did not return. */
async function storeResults(
  h: Herald,
  owner: string,
  results: MetricsResult[],
  batch: { row: PostAnalyticsRow; target: MetricsTarget }[],
): Promise<void> {
  const now = h.clock.now();
  const missing: PostAnalyticsRow[] = [];
  await inGuardedTransaction(h.db, async (tx) => {
    for (const { row, target } of batch) {
      const result = results.find((r) => r.providerObjectId === target.providerObjectId);
      if (!result || result.kind === "missing") {
        missing.push(row);
        continue;
      }
      if (result.kind === "unsupported") {
        await finishRefresh(tx, row.postId, owner, {
          state: "unsupported",
          nextRefreshAt: null,
          lastError: null,
        });
        continue;
      }
      const { metrics, offered } = normalizeMetrics(result.values);
      if (
        !(await finishRefresh(tx, row.postId, owner, {
          state: "fresh",
          metrics,
          offered,
          fetchedAt: now,
          providerAsOf: result.providerAsOf,
          nextRefreshAt: nextRefreshAfter(row.publishedAt, now),
          lastError: null,
        }))
      )
        continue; // another run took the row over: its read wins
      await insertSnapshot(tx, {
        postId: row.postId,
        workspaceId: row.workspaceId,
        fetchedAt: now,
        providerAsOf: result.providerAsOf,
        metrics,
        offered,
      });
    }
  });
  if (missing.length > 0) {
    const reason = results.find((r) => r.kind === "missing");
    const message =
      reason?.kind === "missing"
        ? reason.reason
        : "the network did not return the post (deleted, or not visible)";
    await recordFailure(h, owner, missing, { code: "provider_post_missing", message, retryAt: null });
  }
}

/** A failed read: the last good numbers stay (`stale`), the error is kept, and the read is tried again. */
async function recordFailure(
  h: Herald,
  owner: string,
  rows: PostAnalyticsRow[],
  failure: ReadFailure,
): Promise<void> {
  const now = h.clock.now();
  await inGuardedTransaction(h.db, async (tx) => {
    for (const row of rows) {
      // Past the last scheduled read (and a day of grace), a failing post is left as it is.
      const tooOld = now - row.publishedAt >= STOP_AFTER_AGE_MS + 24 * 60 * 60_000;
      await finishRefresh(tx, row.postId, owner, {
        state: row.fetchedAt === null ? "pending" : "stale",
        lastError: { code: failure.code, message: failure.message, at: now },
        nextRefreshAt: tooOld ? null : Math.max(failure.retryAt ?? 0, now + RETRY_AFTER_FAILURE_MS),
      });
    }
  });
}

/** Posts of a network Herald reads no numbers from: `unsupported`, never read again. */
async function recordUnsupported(h: Herald, owner: string, rows: PostAnalyticsRow[]): Promise<void> {
  const unsupported = { state: "unsupported", nextRefreshAt: null, lastError: null };
  await inGuardedTransaction(h.db, async (tx) => {
    for (const row of rows) await finishRefresh(tx, row.postId, owner, unsupported);
  });
}
