// What became of an X post whose POST /2/tweets went out unanswered: the user's own timeline
// (GET /2/users/:id/tweets, newest first) from `since` minus the slack, one page of up to 100 posts and
// at most one more (X meters post reads), searched for the item's text as X stores it and its reply parent.
import {
  failedListing,
  isoSecond,
  listingFloor,
  settleLookup,
  comparableText,
} from "../reconcile-listing.ts";
import { X_OPERATIONS, xBase, xBearer, xJson } from "./http.ts";
import { tweetReceipt } from "./publish.ts";
import { xTextFacts } from "./text.ts";
import type { ProviderDeps, PublishItemInput, ReconcileResult } from "../types.ts";

/** Pages of the timeline one look-up reads (100 posts each). */
const TIMELINE_PAGES = 2;

/** A link X shortened (t.co): in place of a URL, and after the text for each attached media. */
const TCO_LINK = /https:\/\/t\.co\/[A-Za-z0-9]+/g;

/**
 * Looks the item up on the user's timeline. `start_time` bounds the listing, so a timeline read to its
 * end (no `next_token`) reaches back to `since` minus the slack.
 */
export async function reconcileXItem(
  deps: ProviderDeps,
  input: { item: PublishItemInput; since: number },
): Promise<ReconcileResult> {
  const { item } = input;
  const { destination } = item;
  const floor = listingFloor(input.since);
  const listing = `the X account's posts since ${isoSecond(floor)}`;
  const sent = maskedText(item.text, xTextFacts(item.text).urls);
  const matches: Record<string, any>[] = [];
  let next: string | null = null;
  try {
    for (let page = 0; page < TIMELINE_PAGES; page++) {
      const query = new URLSearchParams({
        start_time: isoSecond(floor),
        max_results: "100",
        "tweet.fields": "created_at,referenced_tweets,attachments,note_tweet",
        ...(next ? { pagination_token: next } : {}),
      });
      const body = await xJson({
        deps,
        operation: X_OPERATIONS.timeline,
        url: `${xBase(destination.origin)}/2/users/${encodeURIComponent(destination.externalId)}/tweets?${query}`,
        init: { headers: xBearer(destination) },
        idempotent: true,
      });
      const tweets: Record<string, any>[] = Array.isArray(body.data) ? body.data : [];
      matches.push(...tweets.filter((tweet) => isItem(tweet, item, sent, floor)));
      next = typeof body.meta?.next_token === "string" ? body.meta.next_token : null;
      if (next === null) break;
    }
  } catch (error) {
    return failedListing(error, listing);
  }
  return settleLookup({
    matches,
    reachesBack: next === null,
    textless: sent === "",
    listing,
    receipt: (tweet) => ({
      ...tweetReceipt(destination, String(tweet.id)),
      provider: { operation: X_OPERATIONS.timeline, requestId: null, statusCode: 200 },
    }),
  });
}

/**
 * Whether a listed post is this item: its text (a long post's full `note_tweet` text) equals the
 * item's once X's rewriting is undone (`&amp;`, `&lt;`, `&gt;`; t.co links masked), it carries as
 * many media, it replies to the item's parent (or to nothing for a first item), and it is not older
 * than `floor`.
 */
function isItem(tweet: Record<string, any>, item: PublishItemInput, sent: string, floor: number): boolean {
  const raw = typeof tweet.note_tweet?.text === "string" ? tweet.note_tweet.text : tweet.text;
  if (typeof raw !== "string" || maskedText(unescapeX(raw), []) !== sent) return false;
  const media = Array.isArray(tweet.attachments?.media_keys) ? tweet.attachments.media_keys.length : 0;
  if (media !== item.media.length) return false;
  const references: Record<string, any>[] = Array.isArray(tweet.referenced_tweets)
    ? tweet.referenced_tweets
    : [];
  const repliedTo = references.find((r) => r?.type === "replied_to")?.id ?? null;
  if ((repliedTo === null ? null : String(repliedTo)) !== (item.parent?.providerObjectId ?? null))
    return false;
  const created = Date.parse(String(tweet.created_at ?? ""));
  return Number.isFinite(created) && created >= floor;
}

/**
 * Text with every link X would shorten taken out (Herald's X bodies carry none, but X appends a t.co
 * link per attached media), compared without the spaces left around them.
 */
function maskedText(text: string, urls: string[]): string {
  let masked = text.replace(TCO_LINK, "");
  for (const url of urls) masked = masked.split(url).join("");
  return comparableText(masked.replace(/[ \t]+\n/g, "\n").replace(/[ \t]{2,}/g, " "));
}

/** X returns `&`, `<` and `>` in post text as HTML entities. */
function unescapeX(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}
