// A post's first comment (`destination_options.<channel>.first_comment`): due the moment the post is
// published (its receipt is written in the outcome's transaction), sent right after by the run that
// published the post, and otherwise by any engine's tick (a retry, a dead process's comment). Sent
// exactly once like an item: claimed under a lease, the create call marked before it goes out, and a
// mark found by the next run looked up among the post's comments before anything is sent again.
import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { inGuardedTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { runTyped } from "../../providers/http.ts";
import {
  ProviderError,
  UnresolvedOutcome,
  type FirstCommentInput,
  type ProviderAdapter,
  type PublishedItem,
  type ReconcileResult,
} from "../../providers/types.ts";
import { destinationRef } from "../destinations/present.ts";
import { findDestinationById } from "../destinations/repo.ts";
import { findPostById, listReceipts, type PostRow } from "../posts/repo.ts";
import {
  claimComment,
  insertCommentReceipt,
  updateLeasedComment,
  type CommentReceiptEdit,
  type CommentReceiptRow,
} from "../posts/repo-comments.ts";
import { editPostIfStill } from "../posts/transition.ts";
import { MAX_AUTOMATIC_RETRIES, postErrorFrom, retryDelayMs } from "./failures.ts";
import { refreshDestination } from "./refresh.ts";

/** The `last_error.code` of a published post whose first comment failed. */
export const FIRST_COMMENT_FAILED = "first_comment_failed";

/** How long after an unanswered comment call its post's comments are read for it. */
const LOOK_UP_AFTER_MS = 60_000;

/** The post's first comment, when it has one and its network publishes first comments. */
export function firstCommentOf(h: Herald, post: PostRow): string | null {
  const text = post.destinationOptions[post.channel]?.first_comment;
  const adapter = h.providers.adapter(post.channel as never);
  return typeof text === "string" && text !== "" && adapter?.publishFirstComment ? text : null;
}

/**
 * In the transaction that publishes the post: its first comment's receipt, due now (null when the
 * post has none). Written with the outcome, so a process that dies after it leaves the comment due.
 */
export async function enqueueFirstComment(
  h: Herald,
  tx: Db,
  post: PostRow,
  now: number,
): Promise<CommentReceiptRow | null> {
  if (!firstCommentOf(h, post)) return null;
  const row: CommentReceiptRow = {
    id: newId("rcpt"),
    postId: post.id,
    state: "pending",
    providerObjectId: null,
    url: null,
    error: null,
    attempts: 0,
    nextAttemptAt: now,
    callStartedAt: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    publishedAt: null,
    createdAt: now,
  };
  await insertCommentReceipt(tx, row);
  return row;
}

/** What a run of one comment ends with: published, due again later, or failed. */
type CommentOutcome =
  | { kind: "published"; item: PublishedItem }
  | { kind: "later"; at: number; attempts: number; keepMark: boolean }
  | { kind: "failed"; code: string; message: string; unsafe: boolean };

/**
 * Sends one due comment if this process can claim it (another may hold it, or have sent it). A run
 * that finds the mark of an unanswered call looks the comment up first: found, it is the receipt;
 * absent, it is sent; unknown, it fails for a person (retrying may make a second comment).
 */
export async function sendFirstComment(h: Herald, owner: string, due: CommentReceiptRow): Promise<void> {
  const now = h.clock.now();
  const claimed = await inGuardedTransaction(h.db, (tx) =>
    claimComment(tx, due.id, owner, now, now + h.config.engine.leaseMs),
  );
  if (!claimed) return;
  const outcome = await runComment(h, owner, claimed);
  if (outcome) await finish(h, owner, claimed, outcome);
}

/** The comment's provider work; null when the lease was lost before the call. */
async function runComment(
  h: Herald,
  owner: string,
  comment: CommentReceiptRow,
): Promise<CommentOutcome | null> {
  const post = await findPostById(h.db, comment.postId);
  const text = post ? firstCommentOf(h, post) : null;
  const first = post ? (await listReceipts(h.db, [post.id]))[0] : undefined;
  let destination = post?.destinationId ? await findDestinationById(h.db, post.destinationId) : undefined;
  const adapter = post ? h.providers.adapter(post.channel as never) : undefined;
  if (!post || !text || !first || !adapter || !destination || destination.deletedAt !== null)
    return {
      kind: "failed",
      code: "destination_unavailable",
      message: "The destination was disconnected.",
      unsafe: false,
    };
  if (destination.unavailableReason)
    return {
      kind: "failed",
      code: "destination_reauthorization_required",
      message: "The destination must be connected again.",
      unsafe: false,
    };
  const target: PublishedItem = {
    providerObjectId: first.providerObjectId,
    url: first.url,
    extra: first.extra,
    provider: { operation: "receipt", requestId: null, statusCode: null },
  };
  let mark = comment.callStartedAt;
  for (let refreshed = false; ; refreshed = true) {
    const input: FirstCommentInput = { destination: destinationRef(h, destination), post: target, text };
    try {
      // A mark of an earlier call: the network's comments are read first (found: that is the receipt).
      if (mark !== null) {
        const since = mark;
        const found = await runTyped({
          operation: "look up first comment",
          work: () => lookUp(adapter, { ...input, since }),
        });
        if (found.state === "published") return { kind: "published", item: found.item };
        if (found.state === "unknown")
          throw new UnresolvedOutcome(
            `The call that creates the first comment went unanswered, and Herald could not tell ` +
              `whether ${adapter.displayName} made it: ${found.reason}`,
            { operation: "look up first comment" },
          );
      }
      // The mark is committed before the call: a run that dies during it leaves a look-up behind.
      const startedAt = h.clock.now();
      const marked = await inGuardedTransaction(h.db, (tx) =>
        updateLeasedComment(tx, comment.id, owner, { callStartedAt: startedAt }),
      );
      if (!marked) return null; // another process holds the comment now
      mark = startedAt;
      const item = await runTyped({
        operation: "publish first comment",
        work: () => adapter.publishFirstComment!(input),
      });
      return { kind: "published", item };
    } catch (caught) {
      const error = caught as ProviderError;
      if (error.kind === "auth_expired" && !refreshed) {
        try {
          await refreshDestination(h, owner, destination.id, destination.credentialsSealed);
          destination = (await findDestinationById(h.db, destination.id))!;
          continue;
        } catch (failed) {
          return failure(failed as ProviderError);
        }
      }
      return afterFailure(h, comment, error, mark !== null && adapter.findFirstComment !== undefined);
    }
  }
}

function lookUp(
  adapter: ProviderAdapter,
  input: FirstCommentInput & { since: number },
): Promise<ReconcileResult> {
  if (!adapter.findFirstComment)
    return Promise.resolve({
      state: "unknown",
      reason: `${adapter.displayName} offers no way to look the comment up`,
    });
  return adapter.findFirstComment(input);
}

/**
 * A failed call: a network that is down or limiting is tried again with the items' backoff, an
 * unanswered create is looked up a minute later (where the network lets Herald read the comments),
 * anything else fails the comment.
 */
function afterFailure(
  h: Herald,
  comment: CommentReceiptRow,
  error: ProviderError,
  canLookUp: boolean,
): CommentOutcome {
  const attempts = comment.attempts + 1;
  const now = h.clock.now();
  if (attempts <= MAX_AUTOMATIC_RETRIES) {
    if (error.kind === "transient")
      return {
        kind: "later",
        at: Math.max(now + retryDelayMs(attempts), error.retryAt ?? 0),
        attempts,
        // A mark stays while the network can be asked: the failure may have been the look-up's read.
        keepMark: canLookUp,
      };
    if (error.kind === "outcome_unknown" && canLookUp && !(error instanceof UnresolvedOutcome))
      return {
        kind: "later",
        at: now + Math.max(LOOK_UP_AFTER_MS, retryDelayMs(attempts)),
        attempts,
        keepMark: true,
      };
  }
  return failure(error);
}

function failure(error: ProviderError): CommentOutcome {
  const { code, message } = postErrorFrom(error);
  return { kind: "failed", code, message, unsafe: error.kind === "outcome_unknown" };
}

/** Writes the outcome while the lease is this run's; a published or failed comment changes the post (its version). */
async function finish(
  h: Herald,
  owner: string,
  comment: CommentReceiptRow,
  outcome: CommentOutcome,
): Promise<void> {
  const now = h.clock.now();
  const released = { leaseOwner: null, leaseExpiresAt: null };
  await inGuardedTransaction(h.db, async (tx) => {
    if (outcome.kind === "later") {
      const changes: CommentReceiptEdit = {
        ...released,
        attempts: outcome.attempts,
        nextAttemptAt: outcome.at,
        ...(outcome.keepMark ? {} : { callStartedAt: null }),
      };
      await updateLeasedComment(tx, comment.id, owner, changes);
      return;
    }
    const changes: CommentReceiptEdit =
      outcome.kind === "published"
        ? {
            ...released,
            state: "published",
            providerObjectId: outcome.item.providerObjectId,
            url: outcome.item.url,
            publishedAt: now,
            nextAttemptAt: null,
            callStartedAt: null,
            error: null,
          }
        : {
            ...released,
            state: "failed",
            nextAttemptAt: null,
            error: { code: outcome.code, message: outcome.message },
            // A mark stays: a person's retry looks the comment up before sending it (unless they
            // accept a second comment), whatever failed after the mark.
          };
    if (!(await updateLeasedComment(tx, comment.id, owner, changes))) return;
    const post =
      outcome.kind === "published"
        ? { updatedAt: now }
        : {
            updatedAt: now,
            retrySafety: outcome.unsafe ? "unsafe" : "safe",
            lastError: {
              code: FIRST_COMMENT_FAILED,
              message: `The post is published, but its first comment failed: ${outcome.message}`,
              retryable: true,
              retry_safety: outcome.unsafe ? "unsafe" : "safe",
              user_action: outcome.unsafe ? "inspect_resource" : "retry",
            },
          };
    await editPostIfStill(tx, comment.postId, { state: "published" }, post);
  });
  if (outcome.kind === "failed")
    h.logger.warn("first comment failed", { post_id: comment.postId, code: outcome.code });
}
