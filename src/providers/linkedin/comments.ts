// A LinkedIn post's first comment: `POST /rest/socialActions/{post-urn}/comments` with `{actor,
// object, message: {text}}` and the versioned REST headers (Comments API, learn.microsoft.com/
// linkedin/marketing/community-management/shares/comments-api): 201 with the comment, its URN in
// `x-restli-id`. The actor is the destination (member or page): w_member_social and
// w_organization_social, which Herald asks for already, cover it. A 403 (no permission on the post,
// comments closed) or 422 is LinkedIn's refusal (see `linkedinError`). An unanswered call is looked
// up in the post's comments by the actor and the text as sent.
import { accessTokenOf, linkedinCall, restHeaders } from "./api.ts";
import { readJson } from "../http.ts";
import { lookUpComment } from "../reconcile-listing.ts";
import type { FirstCommentInput, ProviderDeps, PublishedItem, ReconcileResult } from "../types.ts";

const CREATE = "POST /rest/socialActions/{urn}/comments";
const LIST = "GET /rest/socialActions/{urn}/comments";
/** Comments one look-up reads (LinkedIn's page size is at most 100). */
const LIST_COUNT = 100;

function commentsUrl(origin: string, postUrn: string): string {
  return `${origin.replace(/\/+$/, "")}/rest/socialActions/${encodeURIComponent(postUrn)}/comments`;
}

/** The comment's link: the post's, opened on the comment. */
function commentUrl(postUrn: string, commentUrn: string): string {
  return `https://www.linkedin.com/feed/update/${postUrn}?commentUrn=${encodeURIComponent(commentUrn)}`;
}

/** The URN of a comment as LinkedIn answers it (body `commentUrn`/`$URN`, else the id header). */
function commentUrnOf(body: Record<string, any> | null, header: string | null): string {
  const found = [body?.commentUrn, body?.$URN, header, body?.id].find(
    (v): v is string => typeof v === "string" && v !== "",
  );
  return found ? (found.startsWith("urn%3A") ? decodeURIComponent(found) : found) : "";
}

/** Publishes the comment as the destination; its URN is the receipt. */
export async function publishLinkedInComment(
  deps: ProviderDeps,
  input: FirstCommentInput,
): Promise<PublishedItem> {
  const { destination, post, text } = input;
  const response = await linkedinCall({
    deps,
    operation: CREATE,
    url: commentsUrl(destination.origin, post.providerObjectId),
    init: {
      method: "POST",
      headers: { ...restHeaders(deps, accessTokenOf(destination)), "content-type": "application/json" },
      body: JSON.stringify({
        actor: destination.externalId,
        object: post.providerObjectId,
        message: { text },
      }),
    },
    idempotent: false,
  });
  // The comment exists now: nothing below may throw.
  const urn = commentUrnOf(await readJson(response).catch(() => null), response.headers.get("x-restli-id"));
  return {
    providerObjectId: urn,
    url: commentUrl(post.providerObjectId, urn),
    extra: {},
    provider: {
      operation: CREATE,
      requestId: response.headers.get("x-li-uuid"),
      statusCode: response.status,
    },
  };
}

/** Looks the comment up among the post's comments (the destination's, with the text, since the call). */
export function findLinkedInComment(
  deps: ProviderDeps,
  input: FirstCommentInput & { since: number },
): Promise<ReconcileResult> {
  const { destination, post } = input;
  return lookUpComment<Record<string, any>>({
    since: input.since,
    text: input.text,
    listing: "the comments on the LinkedIn post",
    read: async () => {
      const response = await linkedinCall({
        deps,
        operation: LIST,
        url: `${commentsUrl(destination.origin, post.providerObjectId)}?start=0&count=${LIST_COUNT}`,
        init: { headers: restHeaders(deps, accessTokenOf(destination)) },
        idempotent: true,
      });
      const body = await readJson(response);
      const elements: Record<string, any>[] = Array.isArray(body?.elements) ? body.elements : [];
      const total = typeof body?.paging?.total === "number" ? body.paging.total : elements.length;
      return { comments: elements, reachesBack: total <= elements.length };
    },
    textOf: (c) => (typeof c.message?.text === "string" ? c.message.text : ""),
    // An undated comment is not ruled out by its time.
    couldBe: (c, floor) =>
      c.actor === destination.externalId && (typeof c.created?.time !== "number" || c.created.time >= floor),
    receipt: (c) => {
      const urn = commentUrnOf(c, null);
      return {
        providerObjectId: urn,
        url: commentUrl(post.providerObjectId, urn),
        extra: {},
        provider: { operation: LIST, requestId: null, statusCode: 200 },
      };
    },
  });
}
