// A video's first comment: `commentThreads.insert` (`POST /youtube/v3/commentThreads?part=snippet`
// with `snippet.channelId`, `snippet.videoId` and `snippet.topLevelComment.snippet.textOriginal`;
// developers.google.com/youtube/v3/docs/commentThreads/insert, 50 quota units). It needs the
// youtube.force-ssl scope, which Herald asks for since issue 31: a channel connected before answers
// 403 insufficientPermissions and must be connected again. A video with comments turned off answers
// 403 commentsDisabled (refused, not retried). An unanswered call is looked up with
// `commentThreads.list?videoId=…` by the channel's own comments with the text as sent.
import { bearer, youtubeBase, youtubeJson } from "./api.ts";
import { watchUrl } from "./publish.ts";
import {
  comparableText,
  failedListing,
  isoSecond,
  listingFloor,
  settleLookup,
} from "../reconcile-listing.ts";
import type { FirstCommentInput, ProviderDeps, PublishedItem, ReconcileResult } from "../types.ts";

const CREATE = "POST /youtube/v3/commentThreads";
const LIST = "GET /youtube/v3/commentThreads";

/** The comment's link: the video's, opened on the comment (`lc`). */
function commentUrl(videoId: string, threadId: string): string {
  return `${watchUrl(videoId)}&lc=${encodeURIComponent(threadId)}`;
}

/** Publishes the comment as the channel; the thread's id is the receipt. */
export async function publishYouTubeComment(
  deps: ProviderDeps,
  input: FirstCommentInput,
): Promise<PublishedItem> {
  const { destination, post, text } = input;
  const videoId = post.providerObjectId;
  const body = await youtubeJson({
    deps,
    operation: CREATE,
    url: `${youtubeBase(destination.origin)}/youtube/v3/commentThreads?part=snippet`,
    init: {
      method: "POST",
      headers: { ...bearer(destination.credentials.accessToken), "content-type": "application/json" },
      body: JSON.stringify({
        snippet: {
          channelId: destination.externalId,
          videoId,
          topLevelComment: { snippet: { textOriginal: text } },
        },
      }),
    },
    idempotent: false,
  });
  // The comment exists now: nothing below may throw.
  const id = typeof body.id === "string" ? body.id : "";
  return {
    providerObjectId: id,
    url: id ? commentUrl(videoId, id) : watchUrl(videoId),
    extra: {},
    provider: { operation: CREATE, requestId: null, statusCode: 200 },
  };
}

/** Looks the comment up among the video's comment threads (the channel's, with the text, since the call). */
export async function findYouTubeComment(
  deps: ProviderDeps,
  input: FirstCommentInput & { since: number },
): Promise<ReconcileResult> {
  const { destination, post, text } = input;
  const videoId = post.providerObjectId;
  const floor = listingFloor(input.since);
  const listing = `the comments on the YouTube video since ${isoSecond(floor)}`;
  const sent = comparableText(text);
  try {
    const query = new URLSearchParams({
      part: "snippet",
      videoId,
      order: "time",
      maxResults: "100",
      textFormat: "plainText",
    });
    const body = await youtubeJson({
      deps,
      operation: LIST,
      url: `${youtubeBase(destination.origin)}/youtube/v3/commentThreads?${query}`,
      init: { headers: bearer(destination.credentials.accessToken) },
      idempotent: true,
    });
    const items: Record<string, any>[] = Array.isArray(body.items) ? body.items : [];
    const matches = items.filter((thread) => {
      const comment = thread.snippet?.topLevelComment?.snippet ?? {};
      const original = typeof comment.textOriginal === "string" ? comment.textOriginal : comment.textDisplay;
      return (
        typeof thread.id === "string" &&
        comment.authorChannelId?.value === destination.externalId &&
        comparableText(typeof original === "string" ? original : "") === sent &&
        Date.parse(String(comment.publishedAt ?? "")) >= floor
      );
    });
    const oldest = Date.parse(String(items.at(-1)?.snippet?.topLevelComment?.snippet?.publishedAt ?? ""));
    return settleLookup({
      matches,
      reachesBack: typeof body.nextPageToken !== "string" || oldest < floor,
      textless: sent === "",
      listing,
      receipt: (thread) => ({
        providerObjectId: String(thread.id),
        url: commentUrl(videoId, String(thread.id)),
        extra: {},
        provider: { operation: LIST, requestId: null, statusCode: 200 },
      }),
    });
  } catch (error) {
    return failedListing(error, listing);
  }
}
