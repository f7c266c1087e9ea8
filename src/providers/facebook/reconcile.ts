// What became of a Facebook Page post whose create (a feed post, or a photo published with its caption)
// went out unanswered: the Page's published posts (GET /{page-id}/published_posts, newest first) since the
// call minus the slack, at most two pages, searched for the message as Herald sent it. A reel is not
// looked up: Graph documents no read of a Page's reels (video_reels cannot be read), and a finished
// reel may publish minutes later, so its outcome stays for a person (a reel whose video id was stored
// is a pending item, checked by its status instead).
import { graphCall, parseGraphTime } from "./graph.ts";
import { isFacebookVideo } from "./rules.ts";
import {
  comparableText,
  failedListing,
  isoSecond,
  listingFloor,
  settleLookup,
} from "../reconcile-listing.ts";
import type { ProviderDeps, PublishItemInput, ReconcileResult } from "../types.ts";

/** Posts per page of the listing, and pages one look-up reads. */
const PAGE_LIMIT = 50;
const LISTING_PAGES = 2;

const OPERATION = "GET /{page-id}/published_posts";

/**
 * Looks the item up among the Page's published posts created since `since` minus the slack (`since`
 * as a unix time bounds the listing, so a listing read to its end, without `paging.next`, reaches back).
 */
export async function reconcileFacebookItem(
  deps: ProviderDeps,
  input: { item: PublishItemInput; since: number },
): Promise<ReconcileResult> {
  const { item } = input;
  const { destination } = item;
  if (item.media.some((m) => isFacebookVideo(m.contentType)))
    return {
      state: "unknown",
      reason:
        "Facebook offers no way to read a Page's reels, and a reel whose publishing went unanswered " +
        "may still appear on the Page",
    };
  const floor = listingFloor(input.since);
  const listing = `the Facebook Page's posts since ${isoSecond(floor)}`;
  const sent = comparableText(item.text);
  const matches: Record<string, any>[] = [];
  let after: string | null = null;
  let reachesBack = false;
  try {
    for (let page = 0; page < LISTING_PAGES && !reachesBack; page++) {
      const { body } = await graphCall({
        deps,
        origin: destination.origin,
        method: "GET",
        path: `${encodeURIComponent(destination.externalId)}/published_posts`,
        params: {
          fields: "id,message,created_time,permalink_url",
          since: String(Math.floor(floor / 1000)),
          limit: String(PAGE_LIMIT),
          ...(after ? { after } : {}),
        },
        token: String(destination.credentials.accessToken ?? ""),
        operation: OPERATION,
        idempotent: true,
      });
      const posts: Record<string, any>[] = Array.isArray(body.data) ? body.data : [];
      matches.push(...posts.filter((post) => isItem(post, sent, floor)));
      const oldest = parseGraphTime(posts.at(-1)?.created_time);
      after = typeof body.paging?.cursors?.after === "string" ? body.paging.cursors.after : null;
      reachesBack = typeof body.paging?.next !== "string" || oldest < floor;
      // A next page Herald cannot ask for (no cursor) leaves the listing short of the call.
      if (after === null) break;
    }
  } catch (error) {
    return failedListing(error, listing);
  }
  return settleLookup({
    matches,
    reachesBack,
    textless: sent === "",
    listing,
    receipt: (post) => {
      const postId = String(post.id);
      const permalink = typeof post.permalink_url === "string" ? post.permalink_url : "";
      return {
        providerObjectId: postId,
        url: /^https:\/\//.test(permalink)
          ? permalink
          : `https://www.facebook.com/${encodeURIComponent(postId)}`,
        extra: { postId },
        provider: { operation: OPERATION, requestId: null, statusCode: 200 },
      };
    },
  });
}

/** Whether a listed post is this item: its message is the item's text, created at or after `floor`. */
function isItem(post: Record<string, any>, sent: string, floor: number): boolean {
  if (typeof post.id !== "string" || post.id === "") return false;
  const message = typeof post.message === "string" ? post.message : "";
  if (comparableText(message) !== sent) return false;
  return parseGraphTime(post.created_time) >= floor;
}
