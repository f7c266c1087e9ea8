// Publishing one Threads item (providers.md §4.2) through Meta's container flow (meta/containers.ts):
// what is Threads' own is here. Its Graph calls carry the token as `access_token`; a post may be text
// alone, reply to the previous item and limit who replies; a CAROUSEL container made in a status check
// is stored before it is published; a post published without a receipt is found by its text and the
// item it replies to among the profile's latest posts or replies.
import {
  createContainerPublisher,
  META_CONTAINER_CHECK_MS,
  META_CONTAINER_LIFETIME_MS,
  META_RECOVERY_SCAN,
  sameText,
  type ContainerData,
  type ContainerNetwork,
  type ContainerPublisher,
} from "../meta/containers.ts";
import { metaGraphCall } from "../meta/graph.ts";
import { THREADS_VIDEO_TYPES } from "./rules.ts";
import {
  ProviderError,
  type AdapterDeps,
  type DestinationRef,
  type MediaItem,
  type PublishItemInput,
} from "../types.ts";

/** The Graph API version Herald calls. */
export const THREADS_API_VERSION = "v1.0";

/** When to check a pending container again (Meta suggests about once a minute while media processes). */
export const THREADS_PENDING_CHECK_MS = META_CONTAINER_CHECK_MS;

/** A container not published within 24 h expires; one still processing after that is given up. */
export const THREADS_CONTAINER_LIFETIME_MS = META_CONTAINER_LIFETIME_MS;

/** What a pending Threads item stores: its containers' ids. */
export type ThreadsPendingData = ContainerData;

/** The publishing half of the Threads adapter. */
export type ThreadsPublisher = ContainerPublisher;

/** Builds the container flow over `deps` (fetch, clock, poll pace). */
export function createThreadsPublisher(deps: AdapterDeps): ThreadsPublisher {
  const call: ContainerNetwork["call"] = (destination, input) => threadsCall(deps, destination, input);
  return createContainerPublisher(deps, {
    name: "Threads",
    owner: "profile",
    call,
    create: { operation: "POST /{user-id}/threads", path: (d) => `${user(d)}/threads` },
    publish: { operation: "POST /{user-id}/threads_publish", path: (d) => `${user(d)}/threads_publish` },
    statusFields: "status,error_message",
    readStatus: (body) => ({
      code: typeof body.status === "string" ? body.status : "",
      detail: typeof body.error_message === "string" ? body.error_message : null,
    }),
    /** Text, an image or a video as its own container, or a carousel's items. */
    async firstContainers(input, createContainer): Promise<ThreadsPendingData> {
      const urls = input.media.map((media) => media.publicUrl());
      if (input.media.length === 0)
        return {
          children: [],
          container: await createContainer({ media_type: "TEXT", ...postParams(input) }),
        };
      if (input.media.length === 1)
        return {
          children: [],
          container: await createContainer({
            ...mediaParams(input, input.media[0]!, urls[0]!),
            ...postParams(input),
          }),
        };
      const children: string[] = [];
      for (const [i, media] of input.media.entries())
        children.push(
          await createContainer({ ...mediaParams(input, media, urls[i]!), is_carousel_item: "true" }),
        );
      return { children, container: null };
    },
    carouselParams: postParams,
    itemsReportPublished: false,
    storeCarouselFirst: true,
    containerError,
    profileUrl,
    recovery: (input) => ({
      operation: input.parent ? "GET /{user-id}/replies" : "GET /{user-id}/threads",
      path: `${user(input.destination)}/${input.parent ? "replies" : "threads"}`,
      params: {
        fields: input.parent ? "id,text,timestamp,permalink,replied_to" : "id,text,timestamp,permalink",
        limit: String(META_RECOVERY_SCAN),
      },
      matches: (post) =>
        sameText(post.text, input.text) &&
        (!input.parent ||
          !post.replied_to?.id ||
          String(post.replied_to.id) === input.parent.providerObjectId),
      timestamp: (post) => post.timestamp,
    }),
  });
}

/** The profile id as a path segment. */
function user(destination: DestinationRef): string {
  return encodeURIComponent(destination.externalId);
}

/**
 * A Graph call on the destination's API origin; the token goes as the documented `access_token`
 * parameter.
 */
function threadsCall(
  deps: AdapterDeps,
  destination: DestinationRef,
  input: Parameters<ContainerNetwork["call"]>[1],
): ReturnType<ContainerNetwork["call"]> {
  const { method, params } = input;
  const url = new URL(`${destination.origin.replace(/\/+$/, "")}/${THREADS_API_VERSION}/${input.path}`);
  const withToken = { ...params, access_token: String(destination.credentials.accessToken ?? "") };
  let init: RequestInit = {};
  if (method === "GET")
    for (const [key, value] of Object.entries(withToken)) url.searchParams.set(key, value);
  else
    init = {
      method,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(withToken),
    };
  return metaGraphCall({
    deps,
    operation: input.operation,
    url: String(url),
    init,
    idempotent: input.idempotent,
  });
}

/** What the post's own container carries besides media: text, the item it replies to, reply_control. */
function postParams(input: PublishItemInput): Record<string, string> {
  const replyControl = input.options.reply_control;
  return {
    ...(input.text !== "" ? { text: input.text } : {}),
    ...(input.parent ? { reply_to_id: input.parent.providerObjectId } : {}),
    ...(typeof replyControl === "string" ? { reply_control: replyControl } : {}),
  };
}

/** A media item's container fields: the asset's alt text wins over `alt_text_by_asset_id`. */
function mediaParams(input: PublishItemInput, media: MediaItem, url: string): Record<string, string> {
  const altById = (input.options.alt_text_by_asset_id ?? {}) as Record<string, unknown>;
  const alt = media.altText ?? (typeof altById[media.assetId] === "string" ? altById[media.assetId] : null);
  const video = THREADS_VIDEO_TYPES.includes(media.contentType);
  return {
    media_type: video ? "VIDEO" : "IMAGE",
    [video ? "video_url" : "image_url"]: url,
    ...(typeof alt === "string" && alt !== "" ? { alt_text: alt } : {}),
  };
}

/** A container's ERROR as a refusal, with Meta's reason (FAILED_DOWNLOADING_VIDEO, INVALID_DURATION, …). */
function containerError(
  input: PublishItemInput,
  reason: string | null,
  mediaIndex: number | null,
): ProviderError {
  const what =
    mediaIndex === null
      ? "Threads could not process the post"
      : `Threads could not process media ${mediaIndex} (${input.media[mediaIndex]?.assetId ?? "?"})`;
  const hint = /DOWNLOAD|FETCH/i.test(reason ?? "")
    ? "; Meta downloads media from Herald's public URL, which must be reachable from the internet"
    : "";
  return new ProviderError("rejected", `${what}: ${reason ?? "UNKNOWN"}${hint}`, {
    operation: "GET /{container-id}",
    errorCode: reason,
  });
}

/** The profile's public URL, the receipt URL when a post's permalink cannot be read. */
export function profileUrl(destination: DestinationRef): string {
  return `https://www.threads.net/@${encodeURIComponent(destination.handle)}`;
}
