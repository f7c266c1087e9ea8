// A Page post's first comment: `POST /{page-post-id}/comments` with `message`, made with the Page
// token (Graph's comments edge, developers.facebook.com/docs/graph-api/reference/object/comments;
// the Page's grant needs pages_manage_engagement, which Herald asks for since issue 31: Pages
// connected before must be connected again). An unanswered call is looked up in the post's top-level
// comments, newest first, by the Page's own comments with the text as sent.
import { graphCall, idOf, parseGraphTime } from "./graph.ts";
import { metaProvider } from "../meta/graph.ts";
import {
  comparableText,
  failedListing,
  isoSecond,
  listingFloor,
  settleLookup,
} from "../reconcile-listing.ts";
import type { FirstCommentInput, ProviderDeps, PublishedItem, ReconcileResult } from "../types.ts";

const CREATE = "POST /{page-post-id}/comments";
const LIST = "GET /{page-post-id}/comments";

/** The comment's link: the post's, pointing at the comment (Facebook opens the post on it). */
function commentUrl(postUrl: string, commentId: string): string {
  const url = new URL(postUrl);
  url.searchParams.set("comment_id", commentId);
  return String(url);
}

/** Publishes the comment; its id is the receipt. */
export async function publishFacebookComment(
  deps: ProviderDeps,
  input: FirstCommentInput,
): Promise<PublishedItem> {
  const { destination, post, text } = input;
  const answer = await graphCall({
    deps,
    origin: destination.origin,
    method: "POST",
    path: `${encodeURIComponent(post.providerObjectId)}/comments`,
    params: { message: text },
    token: String(destination.credentials.accessToken ?? ""),
    operation: CREATE,
    idempotent: false,
  });
  const id = idOf(answer.body, "id", CREATE, false);
  return {
    providerObjectId: id,
    url: commentUrl(post.url, id),
    extra: {},
    provider: metaProvider(CREATE, answer),
  };
}

/** Looks the comment up among the post's top-level comments since the call (the Page's, with the text). */
export async function findFacebookComment(
  deps: ProviderDeps,
  input: FirstCommentInput & { since: number },
): Promise<ReconcileResult> {
  const { destination, post, text } = input;
  const floor = listingFloor(input.since);
  const listing = `the comments on the Facebook post since ${isoSecond(floor)}`;
  const sent = comparableText(text);
  try {
    const { body } = await graphCall({
      deps,
      origin: destination.origin,
      method: "GET",
      path: `${encodeURIComponent(post.providerObjectId)}/comments`,
      params: {
        fields: "id,message,from,created_time",
        filter: "toplevel",
        order: "reverse_chronological",
        limit: "100",
      },
      token: String(destination.credentials.accessToken ?? ""),
      operation: LIST,
      idempotent: true,
    });
    const comments: Record<string, any>[] = Array.isArray(body.data) ? body.data : [];
    const oldest = parseGraphTime(comments.at(-1)?.created_time);
    const matches = comments.filter(
      (c) =>
        typeof c.id === "string" &&
        String(c.from?.id ?? "") === destination.externalId &&
        comparableText(typeof c.message === "string" ? c.message : "") === sent &&
        parseGraphTime(c.created_time) >= floor,
    );
    return settleLookup({
      matches,
      reachesBack: typeof body.paging?.next !== "string" || oldest < floor,
      textless: sent === "",
      listing,
      receipt: (c) => ({
        providerObjectId: String(c.id),
        url: commentUrl(post.url, String(c.id)),
        extra: {},
        provider: { operation: LIST, requestId: null, statusCode: 200 },
      }),
    });
  } catch (error) {
    return failedListing(error, listing);
  }
}
