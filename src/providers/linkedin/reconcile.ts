// What became of a LinkedIn post whose POST /rest/posts went out unanswered: the author's posts through
// the Posts API's author finder (GET /rest/posts?q=author, latest change first), at most two pages,
// searched for the commentary as Herald sent it (its "little text" escaping undone) created since the call.
import { accessTokenOf, linkedinCall, restHeaders } from "./api.ts";
import { LINKEDIN_PAGE_PREFIX } from "./rules.ts";
import {
  failedListing,
  isoSecond,
  listingFloor,
  settleLookup,
  comparableText,
} from "../reconcile-listing.ts";
import { readJson } from "../http.ts";
import type { ProviderDeps, PublishItemInput, ReconcileResult } from "../types.ts";

/** Posts per page of the finder, and pages one look-up reads. */
const FINDER_COUNT = 50;
const FINDER_PAGES = 2;

const OPERATION = "GET /rest/posts?q=author";

/** A reserved "little text" character with the backslash that escapes it. */
const LITTLE_ESCAPE = /\\([\\|{}@[\]()<>#*_~])/g;

/**
 * Looks the item up among its author's posts (a page needs r_organization_social, a member the
 * restricted r_member_social: without it LinkedIn answers 403 and the outcome stays unknown). The
 * finder orders by last change, newest first, and a post's last change is never before its
 * creation: once a listed post was last changed before `since` minus the slack, every later one was
 * created before it too, so the listing reaches back.
 */
export async function reconcileLinkedInItem(
  deps: ProviderDeps,
  input: { item: PublishItemInput; since: number },
): Promise<ReconcileResult> {
  const { destination } = input.item;
  const floor = listingFloor(input.since);
  const owner = destination.externalId.startsWith(LINKEDIN_PAGE_PREFIX) ? "page" : "member";
  const listing = `the LinkedIn ${owner}'s posts since ${isoSecond(floor)}`;
  const sent = comparableText(input.item.text);
  const matches: Record<string, any>[] = [];
  let reachesBack = false;
  try {
    for (let page = 0; page < FINDER_PAGES && !reachesBack; page++) {
      const query = new URLSearchParams({
        q: "author",
        author: destination.externalId,
        count: String(FINDER_COUNT),
        start: String(page * FINDER_COUNT),
        sortBy: "LAST_MODIFIED",
      });
      const response = await linkedinCall({
        deps,
        operation: OPERATION,
        url: `${destination.origin.replace(/\/+$/, "")}/rest/posts?${query}`,
        init: {
          headers: { ...restHeaders(deps, accessTokenOf(destination)), "x-restli-method": "FINDER" },
        },
        idempotent: true,
      });
      const body = await readJson(response);
      const posts: Record<string, any>[] = Array.isArray(body?.elements) ? body.elements : [];
      matches.push(...posts.filter((post) => isItem(post, input.item, sent, floor)));
      const oldest = posts.at(-1);
      const lastChange = Number(oldest?.lastModifiedAt ?? oldest?.createdAt);
      const hasNext =
        Array.isArray(body?.paging?.links) && body.paging.links.some((l: any) => l?.rel === "next");
      reachesBack =
        (Number.isFinite(lastChange) && lastChange < floor) || (!hasNext && posts.length < FINDER_COUNT);
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
      const urn = String(post.id);
      return {
        providerObjectId: urn,
        url: `https://www.linkedin.com/feed/update/${urn}`,
        extra: { urn },
        provider: { operation: OPERATION, requestId: null, statusCode: 200 },
      };
    },
  });
}

/**
 * Whether a listed post is this item: its commentary, unescaped, is the item's text; it carries as
 * many media (one `media`, or a `multiImage`); it was created at or after `floor`.
 */
function isItem(post: Record<string, any>, item: PublishItemInput, sent: string, floor: number): boolean {
  if (typeof post.id !== "string" || post.id === "") return false;
  const commentary = typeof post.commentary === "string" ? post.commentary : "";
  if (comparableText(commentary.replace(LITTLE_ESCAPE, "$1")) !== sent) return false;
  const images = post.content?.multiImage?.images;
  const media = Array.isArray(images) ? images.length : post.content?.media ? 1 : 0;
  if (media !== item.media.length) return false;
  const created = Number(post.createdAt);
  return Number.isFinite(created) && created >= floor;
}
