// A video's first comment: `commentThreads.insert` (`POST /youtube/v3/commentThreads?part=snippet`
// with `snippet.channelId`, `snippet.videoId` and `snippet.topLevelComment.snippet.textOriginal`;
// developers.google.com/youtube/v3/docs/commentThreads/insert, 50 quota units). It needs the
// youtube.force-ssl scope, which Herald asks for since issue 31: a channel connected before answers
// 403 insufficientPermissions and must be connected again. A video with comments turned off answers
// 403 commentsDisabled (refused, not retried). An unanswered call is looked up with
// `commentThreads.list?videoId=…` by the channel's own comments with the text as sent.
import { bearer, youtubeBase, youtubeJson } from "./api.ts";
import { watchUrl } from "./publish.ts";
import { lookUpComment } from "../reconcile-listing.ts";
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

/** A listed thread's top-level comment (its snippet). */
function topLevelOf(thread: Record<string, any>): Record<string, any> {
  return thread.snippet?.topLevelComment?.snippet ?? {};
}

/** Looks the comment up among the video's comment threads (the channel's, with the text, since the call). */
export function findYouTubeComment(
  deps: ProviderDeps,
  input: FirstCommentInput & { since: number },
): Promise<ReconcileResult> {
  const { destination, post } = input;
  const videoId = post.providerObjectId;
  return lookUpComment<Record<string, any>>({
    since: input.since,
    text: input.text,
    listing: "the comments on the YouTube video",
    read: async (floor) => {
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
      const oldest = Date.parse(String(topLevelOf(items.at(-1) ?? {}).publishedAt ?? ""));
      return { comments: items, reachesBack: typeof body.nextPageToken !== "string" || oldest < floor };
    },
    textOf: (thread) => {
      const comment = topLevelOf(thread);
      const original = typeof comment.textOriginal === "string" ? comment.textOriginal : comment.textDisplay;
      return typeof original === "string" ? original : "";
    },
    couldBe: (thread, floor) => {
      const comment = topLevelOf(thread);
      return (
        typeof thread.id === "string" &&
        comment.authorChannelId?.value === destination.externalId &&
        Date.parse(String(comment.publishedAt ?? "")) >= floor
      );
    },
    receipt: (thread) => ({
      providerObjectId: String(thread.id),
      url: commentUrl(videoId, String(thread.id)),
      extra: {},
      provider: { operation: LIST, requestId: null, statusCode: 200 },
    }),
  });
}
