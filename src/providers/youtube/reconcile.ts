// What became of a YouTube item whose run died before its upload session was stored (RECONCILE rules).
// Once the session URI is stored, every byte goes through status checks that probe that session
// (`Content-Range: bytes */TOTAL`, answered 200/201 with the video when it is complete), so a crash or
// timeout on the final chunk is settled there and never reaches this look-up. Before that, YouTube can
// hold no video of the item (a session makes one only when it holds every byte); the channel's uploads
// playlist (channels.list → relatedPlaylists.uploads, then playlistItems.list, newest first, one quota
// unit each) confirms it: a video with the item's title and description added since `since` − slack.
import { listingFloor } from "../reconcile-listing.ts";
import { bearer, YOUTUBE_OPERATIONS, youtubeBase, youtubeJson } from "./api.ts";
import { watchUrl } from "./publish.ts";
import { titleOf } from "./rules.ts";
import { ProviderError, type ProviderDeps, type PublishItemInput, type ReconcileResult } from "../types.ts";

/** Pages of the uploads playlist one look-up reads at most. */
export const YOUTUBE_RECONCILE_PAGES = 2;
/** Playlist items a page asks for (YouTube's maximum). */
const PAGE_SIZE = 50;

const OPERATION = "GET /youtube/v3/playlistItems";

/**
 * One video of the item (title, description, added since `since` − slack) is the receipt; none in
 * uploads that reach back before then (or are the channel's whole history) is `absent`; several, or
 * pages that stop short, or a read YouTube refuses, is `unknown`. A failed read YouTube may answer later
 * (`transient`, an expired token the engine renews) is thrown for the engine to ask again.
 */
export async function reconcileYouTubeItem(
  deps: ProviderDeps,
  input: { item: PublishItemInput; since: number },
): Promise<ReconcileResult> {
  try {
    return await lookUp(deps, input);
  } catch (error) {
    if (!(error instanceof ProviderError) || error.kind === "transient" || error.kind === "auth_expired")
      throw error;
    return { state: "unknown", reason: `the channel's uploads could not be read (${error.message})` };
  }
}

async function lookUp(
  deps: ProviderDeps,
  { item, since }: { item: PublishItemInput; since: number },
): Promise<ReconcileResult> {
  const { destination } = item;
  const base = youtubeBase(destination.origin);
  const headers = bearer(destination.credentials.accessToken);
  const channels = await youtubeJson({
    deps,
    operation: YOUTUBE_OPERATIONS.channels,
    url: `${base}/youtube/v3/channels?${new URLSearchParams({ part: "contentDetails", mine: "true" })}`,
    init: { headers },
    idempotent: true,
  });
  const uploads = channels.items?.[0]?.contentDetails?.relatedPlaylists?.uploads;
  if (typeof uploads !== "string" || uploads === "")
    return { state: "unknown", reason: "YouTube names no uploads playlist for the channel" };
  const from = listingFloor(since);
  const title = titleOf({ headline: item.headline, text: item.text });
  const matches: { videoId: string }[] = [];
  let read = 0;
  let oldest = Number.POSITIVE_INFINITY;
  let pageToken: string | null = null;
  let reachesBack = true;
  for (let page = 1; ; page++) {
    const query = new URLSearchParams({
      part: "snippet",
      playlistId: uploads,
      maxResults: String(PAGE_SIZE),
    });
    if (pageToken) query.set("pageToken", pageToken);
    const body = await youtubeJson({
      deps,
      operation: OPERATION,
      url: `${base}/youtube/v3/playlistItems?${query}`,
      init: { headers },
      idempotent: true,
    });
    const items: Record<string, any>[] = Array.isArray(body.items) ? body.items : [];
    read += items.length;
    for (const entry of items) {
      const snippet = entry.snippet ?? {};
      const at = Date.parse(String(snippet.publishedAt));
      if (Number.isFinite(at)) oldest = Math.min(oldest, at);
      const videoId = snippet.resourceId?.videoId;
      if (
        at >= from &&
        typeof videoId === "string" &&
        plain(snippet.title) === plain(title) &&
        plain(snippet.description) === plain(item.text)
      )
        matches.push({ videoId });
    }
    pageToken =
      typeof body.nextPageToken === "string" && body.nextPageToken !== "" ? body.nextPageToken : null;
    // No next page: the channel's whole history was read.
    if (!pageToken || oldest < from) break;
    if (page >= YOUTUBE_RECONCILE_PAGES) {
      reachesBack = false;
      break;
    }
  }
  if (matches.length > 1)
    return { state: "unknown", reason: `${matches.length} of the channel's latest uploads match it` };
  if (matches.length === 0 && !reachesBack)
    return {
      state: "unknown",
      reason: `none of the channel's latest ${read} uploads matches it, and they do not reach back to when it was sent`,
    };
  const [match] = matches;
  if (!match)
    return {
      state: "absent",
      reason: `none of the channel's uploads since the call went out matches it (${read} read)`,
    };
  return {
    state: "published",
    item: {
      providerObjectId: match.videoId,
      url: watchUrl(match.videoId),
      extra: { video_id: match.videoId, privacy_status: null, recovered: true },
      provider: { operation: OPERATION, requestId: null, statusCode: 200 },
    },
  };
}

/** A title or description as compared: line endings and the ends' whitespace set aside. */
function plain(text: unknown): string {
  return (typeof text === "string" ? text : "").replace(/\r\n?/g, "\n").trim();
}
