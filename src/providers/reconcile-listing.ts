// What a network's listing of an account's recent posts says of an item whose create call went out
// unanswered (X, LinkedIn, Facebook; Meta's container flow and YouTube share the window): the rules
// every such look-up shares, so each network's reconcile.ts only reads its listing and says which
// listed post is the item's. A first comment's look-up among the comments under its post
// (`lookUpComment`) follows the same rules.
import { ProviderError, type PublishedItem, type ReconcileResult } from "./types.ts";

/**
 * How far before the unanswered call a listed post may be dated and still be the item's (the
 * networks' clocks differ from Herald's): one constant for every look-up among an account's posts.
 */
export const RECONCILE_SLACK_MS = 10 * 60_000;

/** The instant (epoch ms) from which listed posts are candidates: `since` minus the slack. */
export function listingFloor(since: number): number {
  return since - RECONCILE_SLACK_MS;
}

/**
 * Text as networks give it back, for comparison: NFC, line breaks as `\n`, no whitespace at either
 * end (a network may trim what it stores).
 */
export function comparableText(text: string): string {
  return text.normalize("NFC").replace(/\r\n?/g, "\n").trim();
}

/**
 * The answer from what the listing held: `matches` are the listed posts that are this item (its text
 * as the network stores it, its reply parent, created at or after `since` minus the slack);
 * `reachesBack` says the listing was read back past that instant (or is the whole history).
 * - exactly one match: `published` with its receipt, unless the item has no text (a post without
 *   text cannot be told from another one of the same minutes: `unknown`);
 * - several: `unknown`;
 * - none, in a listing that reaches back: `absent` (sending it again cannot make a second one);
 * - none, in a listing Herald did not read back that far: `unknown`.
 */
export function settleLookup<T>(input: {
  matches: T[];
  reachesBack: boolean;
  textless: boolean;
  /** What was read, in reasons: "the account's posts since 12:00:00Z". */
  listing: string;
  receipt(match: T): PublishedItem;
}): ReconcileResult {
  const { matches, listing } = input;
  if (matches.length === 1 && !input.textless)
    return { state: "published", item: input.receipt(matches[0]!) };
  if (matches.length === 1)
    return {
      state: "unknown",
      reason: `one of ${listing} could be it, but an item without text cannot be told from another post`,
    };
  if (matches.length > 1) return { state: "unknown", reason: `${matches.length} of ${listing} match it` };
  if (input.reachesBack) return { state: "absent", reason: `none of ${listing} is it` };
  return {
    state: "unknown",
    reason: `none of ${listing} that Herald read is it, but the listing did not reach back far enough`,
  };
}

/**
 * A listing read that failed: a network that is down or limiting (`transient`) or a token to renew
 * (`auth_expired`) is thrown on, so the engine asks again later; any other refusal of the read (a
 * missing read permission, an unknown account) says nothing of the item: `unknown` with the reason.
 */
export function failedListing(error: unknown, listing: string): ReconcileResult {
  if (error instanceof ProviderError && (error.kind === "transient" || error.kind === "auth_expired"))
    throw error;
  const why = error instanceof Error ? error.message : String(error);
  return { state: "unknown", reason: `${listing} could not be read (${why})` };
}

/** An instant as ISO 8601 to the second (how the reasons name `since`). */
export function isoSecond(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * What became of a first comment whose create call went out unanswered, from the comments under its
 * post: the listing is read from `since` minus the slack; a listed comment is the one sent when it
 * could be (`couldBe`: the account's own, not older than the floor) and its text compares equal to
 * the text sent; settled by `settleLookup`, or `failedListing` when the read (or a receipt) fails.
 */
export async function lookUpComment<T>(input: {
  since: number;
  /** The comment's text as sent. */
  text: string;
  /** What is read, in reasons, without the instant: "the comments on the Facebook post". */
  listing: string;
  /** Reads the listing: the listed comments, and whether it reaches back past `floor`. */
  read(floor: number): Promise<{ comments: T[]; reachesBack: boolean }>;
  /** A listed comment's text as the network stores it ("" when it has none). */
  textOf(comment: T): string;
  /** Whether a listed comment, whatever its text, could be the one sent (its id, author and time). */
  couldBe(comment: T, floor: number): boolean;
  receipt(comment: T): PublishedItem;
}): Promise<ReconcileResult> {
  const floor = listingFloor(input.since);
  const listing = `${input.listing} since ${isoSecond(floor)}`;
  const sent = comparableText(input.text);
  try {
    const { comments, reachesBack } = await input.read(floor);
    const matches = comments.filter(
      (comment) => input.couldBe(comment, floor) && comparableText(input.textOf(comment)) === sent,
    );
    return settleLookup({ matches, reachesBack, textless: sent === "", listing, receipt: input.receipt });
  } catch (error) {
    return failedListing(error, listing);
  }
}
