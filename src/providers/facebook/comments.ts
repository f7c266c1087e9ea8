// A Page post's first comment: `POST /{page-post-id}/comments` with `message`, made with the Page
// token (Graph's comments edge, developers.facebook.com/docs/graph-api/reference/object/comments;
// the Page's grant needs pages_manage_engagement, which Herald asks for since issue 31: Pages
// connected before must be connected again). An unanswered call is looked up in the post's top-level
// comments, newest first, by the Page's own comments with the text as sent.
import { findMetaComment, publishMetaComment, type MetaComments } from "../meta/comments.ts";
import type { FirstCommentInput, ProviderDeps, PublishedItem, ReconcileResult } from "../types.ts";

/** The comment's link: the post's, pointing at the comment (Facebook opens the post on it). */
function commentUrl(postUrl: string, commentId: string): string {
  const url = new URL(postUrl);
  url.searchParams.set("comment_id", commentId);
  return String(url);
}

/** A Page post's top-level comments, newest first; the Page's own are `from` its id. */
const COMMENTS: MetaComments = {
  create: "POST /{page-post-id}/comments",
  list: "GET /{page-post-id}/comments",
  listing: "the comments on the Facebook post",
  params: {
    fields: "id,message,from,created_time",
    filter: "toplevel",
    order: "reverse_chronological",
    limit: "100",
  },
  textField: "message",
  timeField: "created_time",
  isOwn: (comment, destination) => String(comment.from?.id ?? "") === destination.externalId,
  newestFirst: true,
  url: (post, commentId) => commentUrl(post.url, commentId),
};

/** Publishes the comment; its id is the receipt. */
export function publishFacebookComment(deps: ProviderDeps, input: FirstCommentInput): Promise<PublishedItem> {
  return publishMetaComment(deps, input, COMMENTS);
}

/** Looks the comment up among the post's top-level comments since the call (the Page's, with the text). */
export function findFacebookComment(
  deps: ProviderDeps,
  input: FirstCommentInput & { since: number },
): Promise<ReconcileResult> {
  return findMetaComment(deps, input, COMMENTS);
}
