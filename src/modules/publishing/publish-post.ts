import { markDestinationForReauthorization } from "../chat/events.ts";
import { isMetered, xMonthlyLimit } from "../posts/x-usage.ts";
import { isPostgres } from "../../db/engine.ts";
import { eventPostSummary } from "../posts/present.ts";
import { wakeWebhooks } from "../webhooks/wake.ts";
import { newId } from "../../db/ids.ts";
import { inGuardedTransaction, inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import type { ProviderPending } from "../../db/pending.ts";
import { runTyped } from "../../providers/http.ts";
import {
  isPending,
  ProviderError,
  type MediaItem,
  type ProviderAdapter,
  type PublishedItem,
  type PublishItemInput,
  type PublishOutcome,
  type ReconcileResult,
  UnresolvedOutcome,
} from "../../providers/types.ts";
import { downloadUrl } from "../assets/signed-urls.ts";
import { destinationRef } from "../destinations/present.ts";
import { findDestinationById, type DestinationRow } from "../destinations/repo.ts";
import { findAssets, listReceipts, type PostRow, type ReceiptRow } from "../posts/repo.ts";
import { transitionPost, type PostChanges } from "../posts/transition.ts";
import {
  MAX_AUTOMATIC_RETRIES,
  postErrorFrom,
  providerDetails,
  retryDelayMs,
  type PostError,
} from "./failures.ts";
import { refreshDestination } from "./refresh.ts";
import { shortLinksForPublishing } from "../links/service.ts";
import { publishedText } from "../links/short-links.ts";
import { scheduleNextRecycledCopy, takesPartInRecycling } from "../recycling/schedule.ts";
import { enqueueFirstComment, firstCommentOf, sendFirstComment } from "./first-comment.ts";
import type { CommentReceiptRow } from "../posts/repo-comments.ts";
import { observeLateness, observePublishAttempt } from "../metrics/metrics.ts";
import { openPending, sealPending, unconfirmedItem } from "./pending.ts";
import {
  finishAttemptRow,
  holdLease,
  insertReceiptRow,
  updateLeasedPost,
  writePublishedOutcome,
} from "./repo.ts";

/** Credentials this close to their `expiresAt` are renewed before a publish instead of after a 401. */
const RENEW_BEFORE_USE_MS = 60_000;

/**
 * How long the download URL a pull-by-URL network fetches media from stays valid: the network may
 * fetch it minutes later while processing (Threads containers live 24 h; a day covers any retry).
 */
const PUBLIC_MEDIA_URL_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How long after a create call went out unanswered the network is asked what became of it: long
 * enough for a call still running there to finish and for its post to show in the account's listing.
 */
export const RECONCILE_AFTER_MS = 60_000;

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
    const { contentType, byteSize, width, height, durationSec } = asset;
    const publicUrl = () => downloadUrl(h, asset.id, h.clock.now() + PUBLIC_MEDIA_URL_TTL_MS);
    const facts = { assetId: asset.id, contentType, byteSize, width, height, durationSec };
    return [{ ...facts, altText: null, read, publicUrl }];
  });
}

/** A post this process claimed: as the claim left it (`processing`, leased), and its `started` attempt. */
export interface ClaimedPost {
  post: PostRow;
  attemptId: string;
  /** The post's receipts, when the claim read them (otherwise the run reads them). */
  receipts?: ReceiptRow[];
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
  observeLateness(
    h,
    claimed.post.channel,
    claimed.post.nextActionAt ?? claimed.post.scheduledAt,
    h.clock.now(),
  );
  const result = await sendItems(h, owner, claimed, destinationOf);
  callsDone();
  if (result === null) return;
  const { post, attemptId } = claimed;
  const outcome = "kind" in result ? result : result.outcome;
  const receipt = "kind" in result ? undefined : result.receipt;
  const now = h.clock.now();
  let comment: CommentReceiptRow | null = null;
  try {
    if (outcome.kind === "published" && !("kind" in result) && publishedInOneStatement(h, post))
      await writePublished(h, owner, claimed, outcome, now, result);
    else comment = await writeOutcome(h, owner, post, attemptId, outcome, now, receipt);
    observePublishAttempt(h, post.channel, outcome.kind);
  } catch (error) {
    if (!(error instanceof LeaseLost)) throw error;
    leaseLost(h, post.id, receipt!.itemIndex);
  }
  // The first comment goes right after the post (a run that dies first leaves it due for any engine).
  if (comment) await sendFirstComment(h, owner, comment);
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
): Promise<Outcome | Sent | null> {
  const { post } = claimed;
  const postId = post.id;
  const destination = post.destinationId ? await destinationOf(post.destinationId) : undefined;
  const adapter = h.providers.adapter(post.channel as never);

  if (!destination || destination.deletedAt !== null || !adapter)
    return destinationUnavailable(post, !adapter);
  if (destination.unavailableReason) return reauthorizationNeeded();

  const receipts = claimed.receipts ?? (await listReceipts(h.db, [postId]));
  // Stored before the first call and read again by any later run: every attempt sends the same codes.
  const shortLinks = receipts.length < post.body.length ? await shortLinksForPublishing(h, post) : null;
  let root: PublishedItem | null = receipts[0] ? receiptAsItem(receipts[0]) : null;
  let parent: PublishedItem | null = receipts.length ? receiptAsItem(receipts[receipts.length - 1]!) : null;
  let current = destination;
  let refreshed = false;
  // A pending item of an earlier run is checked, never sent again (its index is the first unsent one).
  let pending =
    post.providerPending?.item_index === receipts.length ? openPending(h, post.providerPending) : null;
  // Every receipt the post has (this run holds the lease: no other run adds one meanwhile).
  const known = [...receipts];
  if (expiresSoon(h, current)) {
    const renewed = await renewCredentials(h, owner, current);
    if (renewed instanceof ProviderError) return failWith(post, destination, renewed, h.clock.now());
    current = renewed;
    refreshed = true;
  }
  for (let index = receipts.length; index < post.body.length; index++) {
    const item = {
      destination: destinationRef(h, current),
      text: shortLinks ? publishedText(h, post.body[index]!, shortLinks) : post.body[index]!,
      headline: post.headline,
      itemIndex: index,
      media: await mediaFor(h, post, index),
      options: post.destinationOptions[post.channel] ?? {},
      root,
      parent,
      idempotencyKey: `${postId}.${index}`,
    };
    let step: Step;
    const startedAt = h.clock.now();
    try {
      step = await runTyped({
        operation: pending ? `check item ${index}` : `publish item ${index}`,
        work: () => publishOrCheck(adapter, item, pending, () => forgetPending(h, owner, postId)),
      });
    } catch (caught) {
      const error = caught as ProviderError;
      if (error.kind === "auth_expired" && !refreshed) {
        refreshed = true;
        const renewed = await renewCredentials(h, owner, current);
        if (renewed instanceof ProviderError) return failWith(post, destination, renewed, h.clock.now());
        current = renewed;
        index -= 1; // the same item again, with the new credentials
        continue;
      }
      const failure =
        error.kind === "auth_expired" ? new ProviderError("auth_revoked", error.message, error) : error;
      // An unanswered create is looked up later where the network lets Herald find out (not a second
      // time). A check of an item the network holds that can run again keeps what it stored (a
      // container, an upload session: the network's strongest answer) and runs again instead.
      const lookUp = adapter.reconcileItem && !(error instanceof UnresolvedOutcome);
      const recheck = pending !== null && !pending.unconfirmed && adapter.pendingChecksRepeatable;
      return failWith(
        post,
        destination,
        failure,
        h.clock.now(),
        lookUp ? { index, startedAt, recheck } : null,
      );
    }
    const now = h.clock.now();
    if (isPending(step.outcome)) return awaitingOutcome(step.outcome, step.recheck, index, pending, now);
    const published = step.outcome;
    const receipt = receiptOf(postId, index, published, now);
    const provider = providerOf(published.provider);
    // The last item's receipt is written with the outcome (one transaction fewer per post).
    if (index === post.body.length - 1)
      return { outcome: { kind: "published", provider }, receipt, receipts: [...known, receipt] };
    if (!(await storeReceipt(h, owner, receipt, pending !== null, now))) {
      leaseLost(h, postId, index);
      return null;
    }
    known.push(receipt);
    pending = null;
    root ??= published;
    parent = published;
  }
  // Every item had its receipt already (a run that died after its last receipt).
  return { outcome: { kind: "published", provider: null }, receipts: known };
}

/** What sending every item gave: the outcome, the last receipt when sent in this run, all the post's receipts. */
interface Sent {
  outcome: Outcome;
  receipt?: ReceiptRow;
  receipts: ReceiptRow[];
}

/** The post cannot go out: its destination was disconnected, or this Herald has no adapter for it. */
function destinationUnavailable(post: PostRow, noAdapter: boolean): Outcome {
  const reason = noAdapter
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

/** The network is still processing an item: the post waits and is checked again. */
function awaitingOutcome(
  waiting: Extract<PublishOutcome, { pending: true }>,
  recheck: boolean,
  index: number,
  pending: ProviderPending | null,
  now: number,
): Outcome {
  const { data, checkAgainAt, provider } = waiting;
  return {
    kind: "awaiting",
    pending: { item_index: index, data, since: recheck ? pending!.since : now },
    at: Math.max(checkAgainAt, now),
    // The user heard of this item's wait already; a check that finds it still processing is quiet.
    quiet: recheck,
    provider: providerOf(provider),
  };
}

function receiptOf(postId: string, index: number, published: PublishedItem, now: number): ReceiptRow {
  return {
    id: newId("rcpt"),
    postId,
    itemIndex: index,
    providerObjectId: published.providerObjectId,
    url: published.url,
    extra: published.extra,
    state: "published",
    publishedAt: now,
  };
}

/** Stores an item's receipt (not the last one) under the lease, clearing a pending wait; false if the lease was lost. */
async function storeReceipt(
  h: Herald,
  owner: string,
  receipt: ReceiptRow,
  wasPending: boolean,
  now: number,
): Promise<boolean> {
  const postId = receipt.postId;
  return inGuardedTransaction(h.db, async (tx) => {
    if (!(await holdLease(tx, postId, owner, now, now + h.config.engine.leaseMs))) return false;
    await insertReceiptRow(tx, receipt);
    if (wasPending) await updateLeasedPost(tx, postId, owner, { providerPending: null });
    return true;
  });
}

/** What one item's provider work gave, and whether it was a status check of an item already waiting. */
interface Step {
  outcome: PublishOutcome;
  recheck: boolean;
}

/**
 * Sends an item, or checks the item an earlier run left pending: still processing stays pending,
 * `gone` (the network dropped it, nothing was published) sends it again.
 */
async function publishOrCheck(
  adapter: ProviderAdapter,
  item: PublishItemInput,
  pending: ProviderPending | null,
  forget: () => Promise<void>,
): Promise<Step> {
  if (pending?.unconfirmed) return reconcile(adapter, item, pending, forget);
  if (pending && adapter.checkPending) {
    const input = { destination: item.destination, item, data: pending.data, since: pending.since };
    const status = await adapter.checkPending(input);
    if (status.state === "published") return { outcome: status.item, recheck: true };
    if (status.state === "pending") {
      const provider = { operation: "check pending", requestId: null, statusCode: null };
      const data = status.data ?? pending.data;
      return { outcome: { pending: true, data, checkAgainAt: status.checkAgainAt, provider }, recheck: true };
    }
    // Gone: forgotten first, so a run that dies while sending it again is not recovered as a check.
    await forget();
  }
  return { outcome: await adapter.publishItem(item), recheck: false };
}

/**
 * An item whose create call went out unanswered: the network is asked first. Found, it is the
 * receipt; absent, the mark is cleared and the item sent again; unknown, the mark is cleared (a
 * person's retry sends it) and the post needs attention with the network's reason.
 */
async function reconcile(
  adapter: ProviderAdapter,
  item: PublishItemInput,
  pending: ProviderPending,
  forget: () => Promise<void>,
): Promise<Step> {
  const found: ReconcileResult = adapter.reconcileItem
    ? await adapter.reconcileItem({ item, since: pending.since })
    : { state: "unknown", reason: `${adapter.displayName} offers no way to look the post up.` };
  if (found.state === "published") return { outcome: found.item, recheck: true };
  await forget();
  if (found.state === "absent") return { outcome: await adapter.publishItem(item), recheck: false };
  throw new UnresolvedOutcome(
    `The call that creates item ${item.itemIndex} went unanswered, and Herald could not tell whether ` +
      `${adapter.displayName} made it: ${found.reason}`,
    { operation: `look up item ${item.itemIndex}` },
  );
}

/** Clears a post's pending item under this run's lease (the network dropped it). */
async function forgetPending(h: Herald, owner: string, postId: string): Promise<void> {
  const cleared = await inGuardedTransaction(h.db, (tx) =>
    updateLeasedPost(tx, postId, owner, { providerPending: null }),
  );
  if (!cleared)
    throw new ProviderError("not_sent", "the lease on the post was lost before sending the item again", {
      operation: "forget pending item",
    });
}

/** The attempt log's provider details of a call that went through. */
function providerOf(p: PublishedItem["provider"]): Record<string, unknown> {
  return {
    operation: p.operation,
    request_id: p.requestId,
    status_code: p.statusCode,
    error_code: null,
    subcode: null,
  };
}

/** Credentials within a minute of their `expiresAt` are renewed before publishing rather than after a 401. */
function expiresSoon(h: Herald, destination: DestinationRow): boolean {
  const adapter = h.providers.adapter(destination.channel);
  if (!adapter) return false;
  const { expiresAt, renewable } = destinationRef(h, destination).credentials;
  // A token that cannot be renewed is used while it lasts (a 401 then asks for reauthorization).
  if (renewable === false) return false;
  return typeof expiresAt === "number" && expiresAt - h.clock.now() < RENEW_BEFORE_USE_MS;
}

/** Refreshes a destination's credentials (once across processes): the row after, or the typed failure. */
async function renewCredentials(
  h: Herald,
  owner: string,
  destination: DestinationRow,
): Promise<DestinationRow | ProviderError> {
  try {
    await refreshDestination(h, owner, destination.id, destination.credentialsSealed);
    return (await findDestinationById(h.db, destination.id))!;
  } catch (error) {
    return refreshFailure(error as ProviderError);
  }
}

/** The outcome of a destination that must be connected again before anything is sent. */
function reauthorizationNeeded(): Outcome {
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

/** A refused refresh means the grant is gone; a transient or blocked one keeps its kind. */
function refreshFailure(error: ProviderError): ProviderError {
  const revoked = error.kind === "auth_expired" || error.kind === "auth_revoked" || error.kind === "rejected";
  return revoked ? new ProviderError("auth_revoked", error.message, error) : error;
}

/**
 * The outcome a provider failure leads to. `lookUp`: the unanswered create of item `index` (started
 * at `startedAt`) can be looked up on the network, so an `outcome_unknown` waits for that instead of a
 * person (`recheck`: the check of its stored pending item runs again instead of a look-up).
 */
function failWith(
  post: PostRow,
  destination: DestinationRow,
  error: ProviderError,
  now: number,
  lookUp: { index: number; startedAt: number; recheck: boolean } | null = null,
): Outcome {
  const postError = postErrorFrom(error);
  const provider = providerDetails(error);
  if (error.kind === "outcome_unknown" && lookUp && post.autoRetries < MAX_AUTOMATIC_RETRIES) {
    const said = error.message.replace(/([^.!?])$/, "$1.");
    const next = lookUp.recheck ? "check it on the network again" : "look for it on the network";
    const at = now + Math.max(RECONCILE_AFTER_MS, retryDelayMs(post.autoRetries + 1));
    return {
      kind: "retry",
      at,
      rateLimited: false,
      retries: post.autoRetries + 1,
      error: {
        ...postError,
        message: `${said} Herald will ${next} before sending anything again.`,
        user_action: "none",
      },
      provider,
      unanswered: true,
      ...(lookUp.recheck ? {} : { lookUp: unconfirmedItem(lookUp.index, lookUp.startedAt) }),
    };
  }
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
          // Nothing refused the item: a manual retry checks the same pending upload or container.
          keepPending: true,
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
    // A setting the network refused fails every post alike: no automatic retry, the operator fixes it.
    case "misconfigured":
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
      kind: "awaiting";
      pending: ProviderPending;
      at: number;
      quiet: boolean;
      provider: Record<string, unknown>;
    }
  | {
      kind: "retry";
      at: number;
      rateLimited: boolean;
      retries: number;
      error: PostError;
      provider: Record<string, unknown>;
      /** An unanswered create: looked up (or its stored pending item checked again) before anything is sent. */
      unanswered?: true;
      /** The item whose unanswered create is looked up before it is sent again. */
      lookUp?: ProviderPending;
    }
  | { kind: "failed"; error: PostError; provider?: Record<string, unknown>; keepPending?: boolean }
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

/**
 * Whether a published outcome is written in one statement (`writePublishedOutcome`): on PostgreSQL,
 * where each statement is a round trip, for a post whose channel has no monthly usage to consume.
 * SQLite, whose statements cost microseconds, keeps the transaction of `writeOutcome`, and so does
 * a post of a recycling chain (its next copy is scheduled in that transaction).
 */
function publishedInOneStatement(h: Herald, post: PostRow): boolean {
  return (
    isPostgres(h.db) &&
    !isMetered(post.channel) &&
    !takesPartInRecycling(post) &&
    firstCommentOf(h, post) === null
  );
}

/**
 * A published outcome in one statement: the same rows `writeOutcome` writes (post, last receipt,
 * attempt, analytics, event), all only while the lease is this run's. The event's summary is made
 * here from the post as claimed: the fields it shows (text, time, destination) do not change while
 * the post is processing, and the receipts are the ones this run holds the lease over.
 */
async function writePublished(
  h: Herald,
  owner: string,
  claimed: ClaimedPost,
  outcome: Extract<Outcome, { kind: "published" }>,
  now: number,
  sent: Sent,
): Promise<void> {
  const { post, attemptId } = claimed;
  const { changes } = outcomeChanges(h, outcome, now);
  const after: PostRow = { ...post, ...changes, state: "published", leaseOwner: null, leaseExpiresAt: null };
  const event = { id: newId("evt"), payload: eventPostSummary(after, sent.receipts) };
  const receipt = sent.receipt;
  const wrote = await writePublishedOutcome(h.db, {
    postId: post.id,
    owner,
    attemptId,
    now,
    receipt,
    provider: outcome.provider,
    event,
  });
  if (!wrote) {
    if (receipt) throw new LeaseLost();
    return;
  }
  wakeWebhooks(h.db);
}

async function writeOutcome(
  h: Herald,
  owner: string,
  post: PostRow,
  attemptId: string,
  outcome: Outcome,
  now: number,
  receipt: ReceiptRow | undefined,
): Promise<CommentReceiptRow | null> {
  const { changes, attemptStatus } = outcomeChanges(h, outcome, now);
  return inGuardedTransaction(h.db, async (tx) => {
    const to =
      outcome.kind === "retry" ? "ready" : outcome.kind === "awaiting" ? "awaiting-provider" : outcome.kind;
    const quiet = outcome.kind === "awaiting" && outcome.quiet;
    if (receipt) {
      // Only while the lease is ours (a run that took the post over may have stored this item), and
      // before the move: the event the move writes lists the post's receipts.
      if (!(await holdLease(tx, post.id, owner, now, now + h.config.engine.leaseMs))) throw new LeaseLost();
      await insertReceiptRow(tx, receipt);
    }
    const moved = await transitionPost({
      tx,
      xLimit: xMonthlyLimit(h.config),
      now,
      post,
      to,
      changes,
      leasedBy: owner,
      quiet,
    });
    if (!moved) {
      if (receipt) throw new LeaseLost(); // the receipt goes with the outcome it belongs to
      return null;
    }
    // Publication recorded: an evergreen post's next copy is scheduled with it, or not at all.
    if (moved.state === "published") await scheduleNextRecycledCopy(h, tx, moved, now);
    // Only a run that still owns the post may mark its destination (a stale run must not).
    if (outcome.kind === "needs-attention" && outcome.reauthorize) {
      await markDestinationForReauthorization(tx, outcome.reauthorize, now);
    }
    if (outcome.kind === "awaiting") return null;
    await finishAttemptRow(tx, attemptId, finishedAttempt(outcome, attemptStatus, now));
    return outcome.kind === "published" ? enqueueFirstComment(h, tx, post, now) : null;
  });
}

/** What an outcome changes on the post, and the status its attempt ends with. */
function outcomeChanges(
  h: Herald,
  outcome: Outcome,
  now: number,
): { changes: PostChanges; attemptStatus: string } {
  switch (outcome.kind) {
    case "published":
      return {
        changes: {
          publishedAt: now,
          nextActionAt: null,
          lastError: null,
          retrySafety: "safe",
          providerPending: null,
        },
        attemptStatus: "succeeded",
      };
    case "awaiting":
      // The attempt goes on while the network processes; the status check continues it.
      return {
        changes: {
          nextActionAt: outcome.at,
          lastError: null,
          providerPending: sealPending(h, outcome.pending),
        },
        attemptStatus: "started",
      };
    case "retry":
      return {
        changes: {
          nextActionAt: outcome.at,
          autoRetries: outcome.retries,
          nextTrigger: outcome.unanswered ? "recovery" : "automatic_retry",
          lastError: { ...outcome.error },
          deferredReason: outcome.rateLimited ? "provider_rate_limit" : null,
          deferredUntil: outcome.rateLimited ? outcome.at : null,
          ...(outcome.unanswered ? { retrySafety: "unsafe" } : {}),
          ...(outcome.lookUp ? { providerPending: sealPending(h, outcome.lookUp) } : {}),
        },
        attemptStatus: outcome.unanswered ? "outcome_unknown" : "failed",
      };
    case "failed":
      // A refused item is sent afresh on a manual retry (a failed container is not checked again).
      return {
        changes: {
          nextActionAt: null,
          lastError: { ...outcome.error },
          retrySafety: outcome.error.retry_safety,
          ...(outcome.keepPending ? {} : { providerPending: null }),
        },
        attemptStatus: "failed",
      };
    case "needs-attention":
      return {
        changes: {
          nextActionAt: null,
          lastError: { ...outcome.error },
          retrySafety: outcome.unknown ? "unsafe" : "safe",
        },
        attemptStatus: outcome.unknown ? "outcome_unknown" : "failed",
      };
  }
}

/** The attempt row's end: its status, retry safety, error and the network's answer. */
function finishedAttempt(outcome: Exclude<Outcome, { kind: "awaiting" }>, status: string, now: number) {
  return {
    status,
    finishedAt: now,
    retrySafety:
      (outcome.kind === "needs-attention" && outcome.unknown) ||
      (outcome.kind === "retry" && outcome.unanswered)
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
  };
}
