// Publishing one X item: its media uploaded (media.ts), then POST /2/tweets (a reply for later items of a
// thread). Media still processing makes the item pending; each status check takes one STATUS round
// and creates the post once every media item is ready.
import { readJson, responseDetails } from "../http.ts";
import { createXMedia, type XMediaDeps } from "./media.ts";
import { X_OPERATIONS, xBase, xBearer, xCall } from "./http.ts";
import {
  ProviderError,
  type DestinationRef,
  type PendingItem,
  type PendingPublisher,
  type PendingStatus,
  type PublishedItem,
  type PublishItemInput,
} from "../types.ts";

/**
 * What a post waiting for X's media processing keeps (nothing secret): media ids, in order, and when they
 * expire.
 */
interface XPendingData {
  media_ids: string[];
  processing: string[];
  expires_at: number;
}

/** The publishing half of the X adapter. */
export function createXPublisher(deps: XMediaDeps): PendingPublisher {
  const media = createXMedia(deps);

  return {
    async publishItem(input) {
      const { destination } = input;
      const uploads = await media.uploadAll({ destination, media: input.media, options: input.options });
      if (uploads.processing.length > 0) {
        const left = await media.waitBriefly({ destination, processing: uploads.processing });
        if (left.processing.length > 0) {
          const data = {
            media_ids: uploads.mediaIds,
            processing: left.processing,
            expires_at: uploads.expiresAt,
          };
          return pendingItem(deps, data, left.checkAfterMs);
        }
      }
      return createTweet(deps, input, uploads.mediaIds);
    },

    /**
     * One STATUS round over the media still processing: still processing → pending; processing failed →
     * `rejected`; media X no longer knows (expired, 400/404) → `gone` (uploaded again); all ready → the post.
     */
    async checkPending({ destination, item, data }): Promise<PendingStatus> {
      const pending = pendingDataOf(data);
      if (!pending) return { state: "gone", reason: "the pending X media could not be read" };
      if (deps.clock.now() >= pending.expires_at)
        return { state: "gone", reason: "X's media ids expired before processing finished" };
      let left: { processing: string[]; checkAfterMs: number };
      try {
        left = await media.checkOnce({ destination, processing: pending.processing });
      } catch (error) {
        const forgotten =
          error instanceof ProviderError &&
          error.kind === "rejected" &&
          (error.statusCode === 400 || error.statusCode === 404);
        if (forgotten) return { state: "gone", reason: `X no longer knows the media: ${error.message}` };
        throw error;
      }
      if (left.processing.length > 0) {
        const next = pendingItem(deps, { ...pending, processing: left.processing }, left.checkAfterMs);
        return { state: "pending", checkAgainAt: next.checkAgainAt, data: next.data };
      }
      return {
        state: "published",
        item: await createTweet(deps, { ...item, destination }, pending.media_ids),
      };
    },
  };
}

/** POST /2/tweets; once X answered 201, nothing here throws except for an answer without an id. */
async function createTweet(
  deps: XMediaDeps,
  input: PublishItemInput,
  mediaIds: string[],
): Promise<PublishedItem> {
  const { destination } = input;
  const operation = X_OPERATIONS.tweet;
  const response = await xCall({
    deps,
    operation,
    url: `${xBase(destination.origin)}/2/tweets`,
    init: {
      method: "POST",
      headers: { ...xBearer(destination), "content-type": "application/json" },
      body: JSON.stringify({
        ...(input.text !== "" ? { text: input.text } : {}),
        ...(mediaIds.length > 0 ? { media: { media_ids: mediaIds } } : {}),
        ...(input.parent ? { reply: { in_reply_to_tweet_id: input.parent.providerObjectId } } : {}),
      }),
    },
    idempotent: false, // X has no idempotency key: an unanswered create may have posted
  });
  const id = (await readJson(response))?.data?.id;
  if (typeof id !== "string" && typeof id !== "number")
    throw new ProviderError(
      "outcome_unknown",
      `${operation}: X accepted the post (${response.status}) but its answer has no id`,
      responseDetails({ operation, response }),
    );
  return {
    ...tweetReceipt(destination, String(id)),
    provider: {
      operation,
      requestId: responseDetails({ operation, response }).requestId,
      statusCode: response.status,
    },
  };
}

/** The receipt of X post `id` of the destination's account: its x.com URL (by handle when known). */
export function tweetReceipt(destination: DestinationRef, id: string): Omit<PublishedItem, "provider"> {
  const handle = destination.handle || null;
  return {
    providerObjectId: id,
    url: handle ? `https://x.com/${handle}/status/${id}` : `https://x.com/i/web/status/${id}`,
    extra: { id },
  };
}

function pendingItem(deps: XMediaDeps, data: XPendingData, checkAfterMs: number): PendingItem {
  return {
    pending: true,
    data: { ...data },
    checkAgainAt: deps.clock.now() + Math.max(checkAfterMs, deps.pollIntervalMs ?? 1000),
    provider: { operation: X_OPERATIONS.status, requestId: null, statusCode: null },
  };
}

function pendingDataOf(data: Record<string, unknown>): XPendingData | null {
  const strings = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === "string");
  if (!strings(data.media_ids) || !strings(data.processing)) return null;
  const expiresAt = typeof data.expires_at === "number" ? data.expires_at : Number.POSITIVE_INFINITY;
  return {
    media_ids: data.media_ids as string[],
    processing: data.processing as string[],
    expires_at: expiresAt,
  };
}
