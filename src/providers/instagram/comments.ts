// An Instagram post's first comment: `POST /{ig-media-id}/comments` with `message` (the IG Media
// comments edge, developers.facebook.com/docs/instagram-platform/instagram-graph-api/reference/
// ig-media/comments), made with the linked Page's token; the grant needs instagram_manage_comments,
// which Herald asks for since issue 31 (accounts connected before must be connected again). Instagram
// gives comments no link of their own: the receipt's is the post's. An unanswered call is looked up
// in the media's comments by the account's username and the text as sent.
import { findMetaComment, publishMetaComment, type MetaComments } from "../meta/comments.ts";
import type { FirstCommentInput, ProviderDeps, PublishedItem, ReconcileResult } from "../types.ts";

/** A media's comments (in no order the look-up relies on); the account's own carry its username. */
const COMMENTS: MetaComments = {
  create: "POST /{ig-media-id}/comments",
  list: "GET /{ig-media-id}/comments",
  listing: "the comments on the Instagram post",
  params: { fields: "id,text,username,timestamp", limit: "50" },
  textField: "text",
  timeField: "timestamp",
  isOwn: (comment, destination) => String(comment.username ?? "") === destination.handle,
  newestFirst: false,
  url: (post) => post.url,
};

/** Publishes the comment; its id is the receipt. */
export function publishInstagramComment(
  deps: ProviderDeps,
  input: FirstCommentInput,
): Promise<PublishedItem> {
  return publishMetaComment(deps, input, COMMENTS);
}

/** Looks the comment up among the media's comments (the account's own, with the text, since the call). */
export function findInstagramComment(
  deps: ProviderDeps,
  input: FirstCommentInput & { since: number },
): Promise<ReconcileResult> {
  return findMetaComment(deps, input, COMMENTS);
}
