import { newId } from "../../db/ids.ts";
import { inGuardedTransaction, inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { runTyped } from "../../providers/http.ts";
import {
  ProviderError,
  type Credentials,
  type MediaItem,
  type PublishedItem,
} from "../../providers/types.ts";
import { destinationRef } from "../destinations/present.ts";
import {
  findDestinationById,
  releaseRefreshLease,
  takeRefreshLease,
  updateDestination,
  type DestinationRow,
} from "../destinations/repo.ts";
import { findAssets, listReceipts, type PostRow, type ReceiptRow } from "../posts/repo.ts";
import { transitionPost, type PostChanges } from "../posts/transition.ts";
import {
  MAX_AUTOMATIC_RETRIES,
  postErrorFrom,
  providerDetails,
  retryDelayMs,
  type PostError,
} from "./failures.ts";
import { finishAttemptRow, holdLease, insertReceiptRow } from "./repo.ts";

/** One refresh at a time per destination in this process; the database lease covers other processes. */
const refreshing = new Map<string, Promise<void>>();

/** How often a process waiting for another's refresh looks again, ms. */
const REFRESH_POLL_MS = 100;

function receiptAsItem(r: ReceiptRow): PublishedItem {
  return {
    providerObjectId: r.providerObjectId,
    url: r.url,
    extra: r.extra,
    provider: { operation: "receipt", requestId: null, statusCode: null },
  };
}

/**
 * The media of one body item, read from the blob store (local disk or S3) when the adapter asks. A
 * read that fails is `transient` (nothing was sent; the store may be back on the next try).
 */
async function mediaFor(h: Herald, post: PostRow, itemIndex: number): Promise<MediaItem[]> {
  const ids = post.assetItems.filter((a) => a.item_index === itemIndex).map((a) => a.asset_id);
  if (ids.length === 0) return [];
  const assets = new Map((await findAssets(h.db, post.workspaceId, ids)).map((a) => [a.id, a]));
  return ids.flatMap((id) => {
    const asset = assets.get(id);
    if (!asset || !asset.blobKey) return [];
    const key = asset.blobKey;
    const read = async () => {
      try {
        return await h.blobs.readBytes(key);
      } catch (error) {
        const detail = error instanceof Error ? error.message : String(error);
        throw new ProviderError("transient", `media ${asset.id} could not be read from storage: ${detail}`, {
          operation: "read media",
        });
      }
    };
    const { contentType, byteSize, width, height } = asset;
    return [{ assetId: asset.id, contentType, byteSize, width, height, altText: null, read }];
  });
}

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
async function refreshDestination(
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

/** A post this process claimed: as the claim left it (`processing`, leased), and its `started` attempt. */
export interface ClaimedPost {
  post: PostRow;
  attemptId: string;
}

/**
 * Publishes one claimed post (its attempt row was written with the claim): each body item after the
 * last receipt is sent in order (replies to the previous one) and its receipt stored at once, so a
 * resumed thread never repeats an item. The outcome is written with its event, and the last item's
 * receipt, in one transaction. `destinationOf` reads a destination (shared by one claim's posts);
 * `callsDone` is told when no provider call is left, before the outcome is written.
 */
export async function publishClaimedPost(
  h: Herald,
  owner: string,
  claimed: ClaimedPost,
  destinationOf: (id: string) => Promise<DestinationRow | undefined>,
  callsDone: () => void = () => {},
): Promise<void> {
  const result = await sendItems(h, owner, claimed, destinationOf);
  callsDone();
  if (result === null) return;
  const { post, attemptId } = claimed;
  const outcome = "kind" in result ? result : result.outcome;
  const receipt = "kind" in result ? undefined : result.receipt;
  const now = h.clock.now();
  try {
    await writeOutcome(h, owner, post, attemptId, outcome, now, receipt);
  } catch (error) {
    if (!(error instanceof LeaseLost)) throw error;
    leaseLost(h, post.id, receipt!.itemIndex);
  }
}

/**
 * Sends the items not sent yet; the outcome to write, with the last item's receipt when it was sent
 * in this run, or null when the lease was lost (another process owns the post now).
 */
async function sendItems(
  h: Herald,
  owner: string,
  claimed: ClaimedPost,
  destinationOf: (id: string) => Promise<DestinationRow | undefined>,
): Promise<Outcome | { outcome: Outcome; receipt: ReceiptRow } | null> {
  const { post } = claimed;
  const postId = post.id;
  const destination = post.destinationId ? await destinationOf(post.destinationId) : undefined;
  const adapter = h.providers.adapter(post.channel as never);

  if (!destination || destination.deletedAt !== null || !adapter) {
    const reason = !adapter
      ? `Publishing to ${post.channel} is not available in this version of Herald.`
      : "The destination was disconnected.";
    return {
      kind: "failed",
      error: {
        code: "destination_unavailable",
        message: reason,
        retryable: false,
        retry_safety: "not_retryable",
        user_action: "edit_post",
      },
    };
  }
  if (destination.unavailableReason) {
    return {
      kind: "needs-attention",
      error: {
        code: "destination_reauthorization_required",
        message: "The destination must be connected again.",
        retryable: true,
        retry_safety: "safe",
        user_action: "reauthorize_destination",
      },
    };
  }

  const receipts = await listReceipts(h.db, [postId]);
  let root: PublishedItem | null = receipts[0] ? receiptAsItem(receipts[0]) : null;
  let parent: PublishedItem | null = receipts.length ? receiptAsItem(receipts[receipts.length - 1]!) : null;
  let current = destination;
  let refreshed = false;
  for (let index = receipts.length; index < post.body.length; index++) {
    let published: PublishedItem;
    const item = {
      destination: destinationRef(h, current),
      text: post.body[index]!,
      itemIndex: index,
      media: await mediaFor(h, post, index),
      options: post.destinationOptions[post.channel] ?? {},
      root,
      parent,
      idempotencyKey: `${postId}.${index}`,
    };
    try {
      published = await runTyped({
        operation: `publish item ${index}`,
        work: () => adapter.publishItem(item),
      });
    } catch (caught) {
      const error = caught as ProviderError;
      if (error.kind === "auth_expired" && !refreshed) {
        refreshed = true;
        try {
          await refreshDestination(h, owner, current.id, current.credentialsSealed);
          current = (await findDestinationById(h.db, current.id))!;
          index -= 1; // the same item again, with the new credentials
          continue;
        } catch (refreshError) {
          return failWith(post, destination, refreshFailure(refreshError as ProviderError), h.clock.now());
        }
      }
      const failure =
        error.kind === "auth_expired" ? new ProviderError("auth_revoked", error.message, error) : error;
      return failWith(post, destination, failure, h.clock.now());
    }
    const now = h.clock.now();
    const receipt: ReceiptRow = {
      id: newId("rcpt"),
      postId,
      itemIndex: index,
      providerObjectId: published.providerObjectId,
      url: published.url,
      extra: published.extra,
      state: "published",
      publishedAt: now,
    };
    const provider = {
      operation: published.provider.operation,
      request_id: published.provider.requestId,
      status_code: published.provider.statusCode,
      error_code: null,
      subcode: null,
    };
    // The last item's receipt is written with the outcome (one transaction fewer per post).
    if (index === post.body.length - 1) return { outcome: { kind: "published", provider }, receipt };
    const stored = await inGuardedTransaction(h.db, async (tx) => {
      if (!(await holdLease(tx, postId, owner, now, now + h.config.engine.leaseMs))) return false;
      await insertReceiptRow(tx, receipt);
      return true;
    });
    if (!stored) {
      leaseLost(h, postId, index);
      return null;
    }
    root ??= published;
    parent = published;
  }
  // Every item had its receipt already (a run that died after its last receipt).
  return { kind: "published", provider: null };
}

/** A refused refresh means the grant is gone; a transient or blocked one keeps its kind. */
function refreshFailure(error: ProviderError): ProviderError {
  const revoked = error.kind === "auth_expired" || error.kind === "auth_revoked" || error.kind === "rejected";
  return revoked ? new ProviderError("auth_revoked", error.message, error) : error;
}

/** The outcome a provider failure leads to. */
function failWith(post: PostRow, destination: DestinationRow, error: ProviderError, now: number): Outcome {
  const postError = postErrorFrom(error);
  const provider = providerDetails(error);
  switch (error.kind) {
    case "transient": {
      const retries = post.autoRetries + 1;
      if (retries > MAX_AUTOMATIC_RETRIES)
        return {
          kind: "failed",
          error: {
            ...postError,
            message: `${postError.message} (gave up after ${MAX_AUTOMATIC_RETRIES} automatic retries)`,
          },
          provider,
        };
      const at = Math.max(now + retryDelayMs(retries), error.retryAt ?? 0);
      return {
        kind: "retry",
        at,
        rateLimited: error.retryAt !== null,
        retries,
        error: postError,
        provider,
      };
    }
    case "auth_revoked":
    case "auth_expired":
      return {
        kind: "needs-attention",
        error: postError,
        provider,
        reauthorize: destination.id,
      };
    case "rejected":
    case "blocked":
    case "not_sent":
      return { kind: "failed", error: postError, provider };
    case "outcome_unknown":
      return {
        kind: "needs-attention",
        error: postError,
        provider,
        unknown: true,
      };
  }
}

type Outcome =
  | { kind: "published"; provider: Record<string, unknown> | null }
  | {
      kind: "retry";
      at: number;
      rateLimited: boolean;
      retries: number;
      error: PostError;
      provider: Record<string, unknown>;
    }
  | { kind: "failed"; error: PostError; provider?: Record<string, unknown> }
  | {
      kind: "needs-attention";
      error: PostError;
      provider?: Record<string, unknown>;
      unknown?: boolean;
      reauthorize?: string;
    };

/** Thrown inside an outcome's transaction to undo its receipt when the lease turned out lost. */
class LeaseLost extends Error {}

function leaseLost(h: Herald, postId: string, itemIndex: number): void {
  h.logger.warn("lease lost while publishing; another process owns the post now", {
    post_id: postId,
    item_index: itemIndex,
  });
}

async function writeOutcome(
  h: Herald,
  owner: string,
  post: PostRow,
  attemptId: string,
  outcome: Outcome,
  now: number,
  receipt: ReceiptRow | undefined,
): Promise<void> {
  await inGuardedTransaction(h.db, async (tx) => {
    let changes: PostChanges;
    let attemptStatus: string;
    switch (outcome.kind) {
      case "published":
        changes = { publishedAt: now, nextActionAt: null, lastError: null, retrySafety: "safe" };
        attemptStatus = "succeeded";
        break;
      case "retry":
        changes = {
          nextActionAt: outcome.at,
          autoRetries: outcome.retries,
          nextTrigger: "automatic_retry",
          lastError: { ...outcome.error },
          deferredReason: outcome.rateLimited ? "provider_rate_limit" : null,
          deferredUntil: outcome.rateLimited ? outcome.at : null,
        };
        attemptStatus = "failed";
        break;
      case "failed":
        changes = {
          nextActionAt: null,
          lastError: { ...outcome.error },
          retrySafety: outcome.error.retry_safety,
        };
        attemptStatus = "failed";
        break;
      case "needs-attention":
        changes = {
          nextActionAt: null,
          lastError: { ...outcome.error },
          retrySafety: outcome.unknown ? "unsafe" : "safe",
        };
        attemptStatus = outcome.unknown ? "outcome_unknown" : "failed";
        break;
    }
    const to = outcome.kind === "retry" ? "ready" : outcome.kind;
    if (receipt) {
      // Only while the lease is ours (a run that took the post over may have stored this item), and
      // before the move: the event the move writes lists the post's receipts.
      if (!(await holdLease(tx, post.id, owner, now, now + h.config.engine.leaseMs))) throw new LeaseLost();
      await insertReceiptRow(tx, receipt);
    }
    if (!(await transitionPost({ tx, now, post, to, changes, leasedBy: owner }))) {
      if (receipt) throw new LeaseLost(); // the receipt goes with the outcome it belongs to
      return;
    }
    // Only a run that still owns the post may mark its destination (a stale run must not).
    if (outcome.kind === "needs-attention" && outcome.reauthorize) {
      const mark = { unavailableReason: "reauthorization_required", updatedAt: now };
      await updateDestination(tx, outcome.reauthorize, mark);
    }
    await finishAttemptRow(tx, attemptId, {
      status: attemptStatus,
      finishedAt: now,
      retrySafety:
        outcome.kind === "needs-attention" && outcome.unknown
          ? "unsafe"
          : outcome.kind === "failed"
            ? "not_retryable"
            : "safe",
      error:
        outcome.kind === "published"
          ? null
          : {
              code: outcome.error.code,
              message: outcome.error.message,
              retryable: outcome.error.retryable,
              user_action: outcome.error.user_action,
            },
      provider: outcome.provider ?? null,
    });
  });
}
