// A first comment on Meta's Graph (a Facebook Page post, an Instagram media): `POST /{object-id}/comments`
// with `message` and the destination's token, its id the receipt; an unanswered call is looked up by
// reading the same edge back. What differs by network (the operations' names, the listing's fields,
// how a listed comment's text, author and time are read, the comment's link) is in its comments.ts.
import { graphCall, idOf, parseGraphTime } from "../facebook/graph.ts";
import { lookUpComment } from "../reconcile-listing.ts";
import type {
  DestinationRef,
  FirstCommentInput,
  ProviderDeps,
  PublishedItem,
  ReconcileResult,
} from "../types.ts";
import { metaProvider } from "./graph.ts";

/** One network's comments edge on the Graph. */
export interface MetaComments {
  /** The operations' names: `POST /{page-post-id}/comments`, `GET /{page-post-id}/comments`. */
  create: string;
  list: string;
  /** What the look-up reads, in reasons, without the instant: "the comments on the Facebook post". */
  listing: string;
  /** The look-up's query (`fields`, `limit`, …). */
  params: Record<string, string>;
  /** The fields of a listed comment holding its text and its creation time. */
  textField: string;
  timeField: string;
  /** Whether a listed comment is the destination's own. */
  isOwn(comment: Record<string, any>, destination: DestinationRef): boolean;
  /** The listing comes newest first, so a listed comment older than the floor means it reached back. */
  newestFirst: boolean;
  /** The comment's link, from the post's receipt and the comment's id. */
  url(post: PublishedItem, commentId: string): string;
}

function edgeOf(input: FirstCommentInput) {
  return {
    origin: input.destination.origin,
    path: `${encodeURIComponent(input.post.providerObjectId)}/comments`,
    token: String(input.destination.credentials.accessToken ?? ""),
  };
}

/** Publishes the comment; its id is the receipt. */
export async function publishMetaComment(
  deps: ProviderDeps,
  input: FirstCommentInput,
  edge: MetaComments,
): Promise<PublishedItem> {
  const answer = await graphCall({
    deps,
    ...edgeOf(input),
    method: "POST",
    params: { message: input.text },
    operation: edge.create,
    idempotent: false,
  });
  const id = idOf(answer.body, "id", edge.create, false);
  return {
    providerObjectId: id,
    url: edge.url(input.post, id),
    extra: {},
    provider: metaProvider(edge.create, answer),
  };
}

/** Looks the comment up in the edge (the destination's own, with the text, since the call). */
export function findMetaComment(
  deps: ProviderDeps,
  input: FirstCommentInput & { since: number },
  edge: MetaComments,
): Promise<ReconcileResult> {
  const { destination, post } = input;
  return lookUpComment<Record<string, any>>({
    since: input.since,
    text: input.text,
    listing: edge.listing,
    read: async (floor) => {
      const { body } = await graphCall({
        deps,
        ...edgeOf(input),
        method: "GET",
        params: edge.params,
        operation: edge.list,
        idempotent: true,
      });
      const comments: Record<string, any>[] = Array.isArray(body.data) ? body.data : [];
      const lastPage = typeof body.paging?.next !== "string";
      const pastFloor = edge.newestFirst && parseGraphTime(comments.at(-1)?.[edge.timeField]) < floor;
      return { comments, reachesBack: lastPage || pastFloor };
    },
    textOf: (c) => (typeof c[edge.textField] === "string" ? c[edge.textField] : ""),
    couldBe: (c, floor) =>
      typeof c.id === "string" && edge.isOwn(c, destination) && parseGraphTime(c[edge.timeField]) >= floor,
    receipt: (c) => ({
      providerObjectId: String(c.id),
      url: edge.url(post, String(c.id)),
      extra: {},
      provider: { operation: edge.list, requestId: null, statusCode: 200 },
    }),
  });
}
