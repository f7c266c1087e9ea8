// An Instagram post's first comment: `POST /{ig-media-id}/comments` with `message` (the IG Media
// comments edge, developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/
// ig-media/comments), made with the linked Page's token; the grant needs instagram_manage_comments,
// which Herald asks for since issue 31 (accounts connected before must be connected again). Instagram
// gives comments no link of their own: the receipt's is the post's. An unanswered call is looked up
// in the media's comments by the account's username and the text as sent.
import { graphCall, idOf, parseGraphTime } from "../facebook/graph.ts";
import { metaProvider } from "../meta/graph.ts";
import {
  comparableText,
  failedListing,
  isoSecond,
  listingFloor,
  settleLookup,
} from "../reconcile-listing.ts";
import type { FirstCommentInput, ProviderDeps, PublishedItem, ReconcileResult } from "../types.ts";

const CREATE = "POST /{ig-media-id}/comments";
const LIST = "GET /{ig-media-id}/comments";

/** Publishes the comment; its id is the receipt. */
export async function publishInstagramComment(
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
  return {
    providerObjectId: idOf(answer.body, "id", CREATE, false),
    url: post.url,
    extra: {},
    provider: metaProvider(CREATE, answer),
  };
}

/** Looks the comment up among the media's comments (the account's own, with the text, since the call). */
export async function findInstagramComment(
  deps: ProviderDeps,
  input: FirstCommentInput & { since: number },
): Promise<ReconcileResult> {
  const { destination, post, text } = input;
  const floor = listingFloor(input.since);
  const listing = `the comments on the Instagram post since ${isoSecond(floor)}`;
  const sent = comparableText(text);
  try {
    const { body } = await graphCall({
      deps,
      origin: destination.origin,
      method: "GET",
      path: `${encodeURIComponent(post.providerObjectId)}/comments`,
      params: { fields: "id,text,username,timestamp", limit: "50" },
      token: String(destination.credentials.accessToken ?? ""),
      operation: LIST,
      idempotent: true,
    });
    const comments: Record<string, any>[] = Array.isArray(body.data) ? body.data : [];
    const matches = comments.filter(
      (c) =>
        typeof c.id === "string" &&
        String(c.username ?? "") === destination.handle &&
        comparableText(typeof c.text === "string" ? c.text : "") === sent &&
        parseGraphTime(c.timestamp) >= floor,
    );
    return settleLookup({
      matches,
      reachesBack: typeof body.paging?.next !== "string",
      textless: sent === "",
      listing,
      receipt: (c) => ({
        providerObjectId: String(c.id),
        url: post.url,
        extra: {},
        provider: { operation: LIST, requestId: null, statusCode: 200 },
      }),
    });
  } catch (error) {
    return failedListing(error, listing);
  }
}
